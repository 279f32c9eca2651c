"""The plugin destroys a gloo process group at interpreter exit (fairseq-train never does, and a
gloo rank left to finalisation sometimes aborts after a finished run)."""

import subprocess
import sys

from fairseq_helpers import ROOT

# The checker is registered before the plugin's hook, so atexit (last in, first out) runs it
# after the hook: it sees the state the hook left.
PROGRAM = """
import atexit, sys
import torch.distributed as dist
from fairseq.distributed import utils
atexit.register(lambda: print("initialized at exit:", dist.is_initialized(),
                              "fairseq group cached:", hasattr(utils.get_global_group, "_global_group")))
import abc_fairseq
dist.init_process_group("{backend}", init_method="file://" + sys.argv[1], rank=0, world_size=1)
utils.get_global_group()  # fairseq-train's final barrier caches this second group
print("initialized in main:", dist.is_initialized(),
      "fairseq group cached:", hasattr(utils.get_global_group, "_global_group"))
"""


def run_program(tmp_path, backend):
    proc = subprocess.run([sys.executable, "-c", PROGRAM.format(backend=backend), str(tmp_path / "store")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split("\n")


def test_gloo_group_is_destroyed_at_exit(tmp_path):
    assert run_program(tmp_path, "gloo")[:2] == ["initialized in main: True fairseq group cached: True",
                                                 "initialized at exit: False fairseq group cached: False"]


def test_direct_call_is_a_no_op_without_a_group():
    import torch.distributed as dist

    from abc_fairseq.process_group_exit import destroy_gloo_group

    assert not dist.is_initialized()
    assert destroy_gloo_group() is False
