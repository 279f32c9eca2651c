"""Importing the plain PyTorch parts changes nothing outside the package; loading the fairseq
plugin (``--user-dir abc_fairseq``, ``import abc_fairseq.models``) installs every fix
(``abc_fairseq.plugin.install``). Each case runs in a fresh interpreter (this venv's python)."""

import json
import subprocess
import sys

import pytest
from fairseq_helpers import ROOT

# Records every atexit registration (module.qualname) and what the fixes touch, before and after
# the statements under test, then imports fairseq to look at it; prints one JSON line.
PROGRAM = """
import atexit, json, sys
registered = []
_register = atexit.register
def register(fn, *args, **kwargs):
    registered.append(f"{{getattr(fn, '__module__', '')}}.{{getattr(fn, '__qualname__', repr(fn))}}")
    return _register(fn, *args, **kwargs)
atexit.register = register

import numpy as np
import torch

def state():
    return {{"atexit": atexit._ncallbacks(), "registered": list(registered),
             "numpy_compat": "compat" in np.__dict__ or "numpy.compat" in sys.modules,
             "torch_load": id(torch.load),
             "safe_globals": sorted(f"{{g.__module__}}.{{getattr(g, '__qualname__', g)}}"
                                    for g in torch.serialization.get_safe_globals()
                                    if not isinstance(g, tuple))}}

before = state()
{statements}
after = state()
fairseq = sorted(m for m in sys.modules if m.split(".")[0] in ("fairseq", "fairseq_cli"))
from fairseq import checkpoint_utils  # imported only now, to see whether its loader was wrapped
from fairseq.data.iterators import EpochBatchIterator
from fairseq.models import ARCH_MODEL_REGISTRY
import abc_fairseq.plugin
from abc_fairseq.ops import backend
print(json.dumps({{"switch_hint": backend.switch_hint, "before": before, "after": after, "fairseq": fairseq,
                  "registered": registered,
                  "guarded": getattr(checkpoint_utils.load_checkpoint_to_cpu, "abc_fairseq_guarded", False),
                  "installed": abc_fairseq.plugin.installed(), "abc_lm": "abc_lm" in ARCH_MODEL_REGISTRY,
                  "numpy_long": getattr(getattr(np, "compat", None), "long", None) is int,
                  "data_position": getattr(EpochBatchIterator.state_dict, "abc_fairseq_layout", False)}}))
"""

HOOK = "abc_fairseq.process_group_exit.destroy_gloo_group"


def run(statements: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROGRAM.format(statements=statements)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", ["abc_fairseq", "abc_fairseq.ops", "abc_fairseq.strategies",
                                    "abc_fairseq.layers"])
def test_plain_parts_import_no_fairseq_and_change_nothing(module):
    result = run(f"import {module}")
    assert result["fairseq"] == [], f"importing {module} imported fairseq"
    assert result["after"] == result["before"], f"importing {module} changed numpy, torch or atexit"
    # fairseq imported afterwards is fairseq as shipped: no wrapped loader, no models, no plugin
    assert not result["guarded"] and not result["abc_lm"] and not result["installed"]
    assert not result["data_position"]
    assert "--abc-backend" not in result["switch_hint"] and "backend='torch'" in result["switch_hint"]


# how the plugin gets loaded: fairseq's own --user-dir import, the models' import, and the package
# imported after fairseq (what import_user_module amounts to)
LOADS = {
    "user_dir": "import argparse\nfrom fairseq import utils\n"
                "utils.import_user_module(argparse.Namespace(user_dir='abc_fairseq'))",
    "models": "import abc_fairseq.models",
    "package_after_fairseq": "import fairseq\nimport abc_fairseq",
}


@pytest.mark.parametrize("load", LOADS, ids=list(LOADS))
def test_loading_the_plugin_installs_every_fix(load):
    result = run(LOADS[load])
    assert result["installed"] and result["abc_lm"]
    assert result["guarded"], "fairseq's load_checkpoint_to_cpu is not wrapped (checkpoint_integrity)"
    assert "argparse.Namespace" in result["after"]["safe_globals"], "no checkpoint allowlist (checkpoint_compat)"
    assert "argparse.Namespace" not in result["before"]["safe_globals"]
    assert result["numpy_long"], "np.compat.long missing (numpy_compat)"
    assert result["registered"].count(HOOK) == 1, result["registered"]  # process_group_exit
    assert result["data_position"], "the training iterator's state records no layout (data_position)"
    assert result["after"]["torch_load"] == result["before"]["torch_load"]  # the allowlist, not a new torch.load
    assert "--abc-backend torch" in result["switch_hint"], "the ops' fallback warning names no flag"


def test_install_is_idempotent():
    result = run("import abc_fairseq.models\nfrom abc_fairseq.plugin import install\n"
                 "assert install() is False and install() is False")
    assert result["registered"].count(HOOK) == 1
