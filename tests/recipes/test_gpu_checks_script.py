"""scripts/gpu_checks.sh where CI runs it, without a GPU: its refusals name the flag or the reason,
and a refused run leaves the output folder as it was."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_checks.sh"


def run(*args):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=120,
                          env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHON": sys.executable})


def test_a_folder_holding_something_is_refused_and_left_alone(tmp_path):
    (tmp_path / "results.md").write_text("someone else's table")
    proc = run("--out", tmp_path)
    assert proc.returncode == 1 and "--out" in proc.stderr and "not empty" in proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["results.md"]
    assert (tmp_path / "results.md").read_text() == "someone else's table"


@pytest.mark.parametrize("args,named", [([], "--out"), (["--out", "x", "--only", "bench"], "'bench'"),
                                         (["--out", "x", "--step-limit", "0"], "--step-limit"),
                                         (["--out", "x", "--budget", "0"], "--budget")])
def test_bad_arguments_name_the_flag(args, named, tmp_path):
    proc = run(*[tmp_path / a if a == "x" else a for a in args])
    assert proc.returncode == 1 and named in proc.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="checks the refusal on a machine with no GPU")
def test_no_cuda_device_is_refused_with_the_reason(tmp_path):
    proc = run("--out", tmp_path / "out")
    assert proc.returncode == 1 and "no CUDA device" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_spent_budget_starts_no_step_and_lists_what_was_not_run(tmp_path):
    """--budget bounds the whole run: a step starts only with at least 20 s left, and the steps
    left out are named (not failures: nothing ran wrong)."""
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(SCRIPT), "--out", str(out), "--toy", "--budget", "1", "--only", "selfcheck",
                           "peers"], capture_output=True, text=True, timeout=120,
                          env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONPATH": "",
                               "PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "not run (budget spent): selfcheck peers" in proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["environment.txt"]


@pytest.mark.slow
def test_toy_run_takes_every_step_under_the_interpreter(tmp_path):
    """``--toy``: the whole prepared GPU run on CPU at toy sizes, the kernels under Triton's
    interpreter: every step passes and writes what the GPU run writes."""
    out = tmp_path / "toy"
    proc = subprocess.run(["bash", str(SCRIPT), "--out", str(out), "--toy"], capture_output=True, text=True,
                          timeout=900, env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
                                            "PYTHON": sys.executable, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "all steps passed" in proc.stderr
    for name in ("environment.txt", "selfcheck.json", "peers/peer_timing.json", "few/peer_timing.json",
                 "scan_group1/peer_timing.json", "train/train.json", "host/host.json", "profile/kernel_profile.json",
                 "attention_float32/attention.json",
                 "gsa/attention.json", "decode/decode.json", "decode_torch/decode.json", "encode/encode.json",
                 "generate/generate.json"):
        assert (out / name).exists(), name
    assert "Triton interpreter" in (out / "environment.txt").read_text()
    # the self-check step: every op and check, in fp32 and fp16, passed within its tolerance
    report = json.loads((out / "selfcheck.json").read_text())
    assert report["passed"] and report["environment"]["device"].startswith("cpu")
    rows = report["checks"]
    assert {r["op"] for r in rows} == {"causal_abc", "causal_gsa", "causal_abc_step", "abc_memory", "abc_read"}
    assert {r["dtype"] for r in rows} == {"float32", "float16"}
    assert {"no future leak", "padding writes nothing", "state passing: rows after the state",
            "grad logits", "grad log gates"} <= {r["check"] for r in rows}
    assert all(r["passed"] and r["error"] <= r["tolerance"] for r in rows)
    assert '"abc-triton"' in (out / "attention_float32" / "attention.json").read_text()
    # the scan step times the one-chunk scan, and its record says so; few beside it is the default
    scan, few = (json.loads((out / name / "peer_timing.json").read_text()) for name in ("scan_group1", "few"))
    assert scan["environment"]["abc_variables"] == {"ABC_TRITON_SCAN_GROUP": "1"}
    assert few["environment"]["abc_variables"] == {} and {r["method"] for r in scan["results"]} == {"abc"}
    # decode_torch: abc's decoding again on the PyTorch step, and its record says so
    decode_torch = json.loads((out / "decode_torch" / "decode.json").read_text())
    assert decode_torch["environment"]["abc_variables"] == {"ABC_BACKEND": "torch"}
    assert {r["method"] for r in decode_torch["results"]} == {"abc"}
    assert {r["method"] for r in json.loads((out / "train" / "train.json").read_text())["results"]} == {
        "abc_lm_wiki103", "transformer_lm_wiki103"}
    host = json.loads((out / "host" / "host.json").read_text())  # the launches recorded, not interpreted
    assert {row["op"]: row["launches"] for row in host["rows"]} == {"causal_abc": 6, "causal_abc_step": 1,
                                                                   "abc_read": 1, "one PyTorch op": 0}
