"""``python -m abc_fairseq.selfcheck`` on CPU: an existing JSON is refused, a mismatch exits
non-zero, and the error measure sees a wrong result. (The whole self-check under Triton's
interpreter, and its JSON, are checked by the GPU script's toy run: tests/recipes/test_gpu_checks_script.py.)"""

import importlib.util
import json

import pytest
import torch
from fairseq_helpers import run_module

from abc_fairseq.selfcheck import checks
from abc_fairseq.selfcheck.__main__ import _cases, main

if importlib.util.find_spec("triton") is None:
    pytest.skip("triton is not installed", allow_module_level=True)


def test_an_existing_json_is_refused_naming_the_flag(tmp_path):
    # The whole self-check under the interpreter runs once, as a step of the prepared GPU script's
    # toy run (tests/recipes/test_gpu_checks_script.py, which checks its JSON); here, that nothing
    # is overwritten: an existing --json is refused before any check runs.
    out = tmp_path / "selfcheck.json"
    out.write_text("someone's results\n")
    code, log = run_module("abc_fairseq.selfcheck", "--json", out, check=False)
    assert code == 2 and "--json" in log and "exists" in log
    assert out.read_text() == "someone's results\n"


def test_the_cuda_checks_cover_every_wide_tile_and_every_op():
    """What the H100 run found (tests/gpu failing at n = 128, d = 128 while the self-check, at
    n = 64 only, passed) cannot recur: every pairing of head dim and memory size 64 and 128, in
    fp32 and a half dtype, for every check (GSA's and the bidirectional ops' among them)."""
    cases = _cases(cuda=True, quick=True)
    for d in (64, 128):
        for n in (64, 128):
            dtypes = {dtype for size, dtype in cases if (size.d, size.n) == (d, n)}
            assert {torch.float32, torch.bfloat16} <= dtypes, (d, n)
    assert any(size.d % 16 and size.n % 16 for size, _ in cases)  # masked tiles
    assert {check.__name__ for check in checks.CHECKS} == {"check_causal", "check_gated", "check_step",
                                                          "check_bidirectional"}


def test_help_does_nothing_else(tmp_path):
    log = run_module("abc_fairseq.selfcheck", "--help")
    assert "usage: python -m abc_fairseq.selfcheck" in log and "--json" in log
    assert not list(tmp_path.iterdir())


def test_a_mismatch_fails_and_exits_non_zero(tmp_path, monkeypatch, capsys):
    wrong = checks.Result("causal_abc", "output", "float32", "tiny", checks.relative_error(
        torch.tensor([1.0, 2.0 + 1e-3]), torch.tensor([1.0, 2.0])), checks.TOLERANCE[torch.float32])
    assert not wrong.passed  # 5e-4 relative > 2e-4
    monkeypatch.setattr(checks, "CHECKS", (lambda size, dtype, device: [wrong],))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # main sets it: restored after the test
    assert main(["--json", str(tmp_path / "r.json"), "--no-timing"]) == 1
    assert "FAIL  causal_abc" in capsys.readouterr().out
    assert json.loads((tmp_path / "r.json").read_text())["passed"] is False


def test_error_measure():
    assert checks.relative_error(torch.tensor([0.0, 4.0]), torch.tensor([0.0, 4.0])) == 0.0
    assert checks.relative_error(torch.tensor([1.0, 4.0]), torch.tensor([0.0, 4.0])) == 0.25
    assert checks.relative_error(torch.tensor([float("nan")]), torch.tensor([1.0])) == float("inf")
