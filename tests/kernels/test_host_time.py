"""The host-time instrument (``python -m tools.host_time``): every call takes the kernels with the
launches recorded (the counts are the launchers' real ones), the Python-call count is exact, and
the command line writes its table, JSON and plot without overwriting."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

if importlib.util.find_spec("triton") is None:
    pytest.skip("triton is not installed", allow_module_level=True)

from tools import host_cases, host_time  # noqa: E402

CASES = {case.name: case for case in host_cases.CASES}
CPU_PROBLEM = host_cases.Problem(16, 16, torch.float32, torch.device("cpu"))


@pytest.mark.parametrize("name, kernels", [
    ("causal_abc", ["chunk_sums_kernel", "chunk_scan_kernel", "output_kernel", "rows_kernel", "chunk_scan_kernel",
                    "columns_kernel"]),
    ("causal_gsa", ["chunk_sums_kernel", "chunk_scan_kernel", "output_kernel", "rows_kernel", "chunk_scan_kernel",
                    "columns_kernel", "gate_grads_kernel"]),
    ("causal_abc_step", ["causal_step_kernel"]),
    ("causal_gsa_step", ["gsa_step_kernel"]),
    ("abc_read", ["memory_read_fwd"]),
    ("one PyTorch op", []),
])
def test_each_call_runs_on_the_kernels_with_its_launches_recorded(name, kernels):
    row, = host_time.measure([CASES[name]], CPU_PROBLEM, repeats=3, rounds=2)
    assert row["kernels"] == kernels and row["launches"] == len(kernels)
    assert row["host_us"] > 0 and row["python_calls"] > 0
    assert (row["binder_us"] > 0) == bool(kernels)


def test_the_decoder_step_of_abc_launches_two_kernels_a_layer_and_softmax_none():
    abc, softmax = host_time.measure([CASES["decoder step, abc"], CASES["decoder step, softmax"]], CPU_PROBLEM,
                                     repeats=2, rounds=2)
    assert abc["kernels"] == ["causal_step_kernel", "memory_read_fwd"] * 6
    assert softmax["launches"] == 0


def test_python_calls_counts_every_call_once():
    def three_calls():
        len([])   # a C call
        abs(-1)   # another
        return sorted([2, 1])  # and a third
    assert host_time.python_calls(three_calls) == 3 + 1  # the function itself
    assert sys.getprofile() is None


def test_the_backend_switch_is_restored_after_recording():
    from abc_fairseq.ops import backend

    before = backend.interpreting, backend.AUTO_DEVICES
    with host_time.kernels_on_cpu():
        assert backend.interpreting() and "cpu" in backend.AUTO_DEVICES
    assert (backend.interpreting, backend.AUTO_DEVICES) == before


def test_denormals_are_flushed_inside_and_kept_after():
    """What recorded launches leave in their buffers may be denormal: inside, this thread's CPU
    ops flush them (where the CPU can), and after, torch's default keeps them again."""
    tiny = torch.tensor(1e-40)  # a float32 denormal
    with host_time.denormals_flushed() as flushed:
        if not flushed:
            pytest.skip("this CPU cannot flush denormals")
        assert (tiny * 1.0).item() == 0.0
    assert (tiny * 1.0).item() > 0.0


def test_command_line_writes_its_files_and_keeps_them(tmp_path):
    out = tmp_path / "host"
    command = [sys.executable, "-m", "tools.host_time", "--ops", "causal_abc_step", "--repeats", "3", "--rounds", "1",
               "--out-dir", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads((out / "host.json").read_text())
    assert [row["op"] for row in record["rows"]] == ["causal_abc_step", "one PyTorch op"]
    assert record["rows"][0]["launches"] == 1 and record["environment"]["command"].startswith("python -m tools")
    assert "| causal_abc_step |" in (out / "host.md").read_text() and (out / "host.png").stat().st_size > 0
    again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "--overwrite" in again.stderr


@pytest.mark.parametrize("flags, named", [(["--rounds", "0"], "--rounds"), (["--repeats", "0"], "--repeats"),
                                          (["--tokens", "0"], "--tokens"), (["--device", "meta"], "--device"),
                                          (["--device", "warp9"], "--device")]
                         + ([] if torch.cuda.is_available() else [(["--device", "cuda"], "--device cuda")]))
def test_bad_counts_are_refused_naming_the_flag(tmp_path, flags, named):
    done = subprocess.run([sys.executable, "-m", "tools.host_time", *flags, "--out-dir", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and named in done.stderr and not list(tmp_path.iterdir())


def test_on_a_gpu_launches_are_counted_and_still_run(monkeypatch):
    """``counted_launches`` (the --device cuda path) keeps every launch and hands it on to Triton."""
    from triton.runtime.jit import JITFunction

    from abc_fairseq.ops.causal.triton.recurrent import causal_step_kernel

    ran = []
    monkeypatch.setattr(JITFunction, "run", lambda self, *args, grid, warmup, **kwargs: ran.append(grid))
    launches = []
    with host_time.counted_launches(launches):
        causal_step_kernel[(3,)](1, 2, K=16)
    assert ran == [(3,)] and [launch.name for launch in launches] == ["causal_step_kernel"]
    assert launches[0].args == (1, 2) and launches[0].kwargs == {"K": 16}
