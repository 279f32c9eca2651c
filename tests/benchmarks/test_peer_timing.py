"""``python -m benchmarks.peer_timing`` on CPU (what CI can run): flags named when wrong, nothing
overwritten, and a toy run under Triton's interpreter that writes its JSON and table, records
fla-core's version and layout, and skips fla's CUDA-only rows with the reason."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.peer_timing import main

REPO = Path(__file__).resolve().parents[2]
TOY = ["--device", "cpu", "--lengths", "32", "--tokens", "64", "--heads", "2", "--head-dim", "16", "--memory", "8",
       "--repeats", "1", "--warmup", "0", "--dtype", "float32"]


def run(*args):
    env = dict(os.environ, TRITON_INTERPRET="1")
    return subprocess.run([sys.executable, "-m", "benchmarks.peer_timing", *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


def test_help_answers_and_does_nothing_else(tmp_path):
    proc = run("--help")
    assert proc.returncode == 0 and "fla-abc" in proc.stdout and "[B, T, H, *]" in proc.stdout


@pytest.mark.parametrize("args, flag", [(["--tokens", "16"], "--tokens"), (["--methods", "flash"], "--methods"),
                                        (["--repeats", "0"], "--repeats"), (["--device", "tpu"], "--device")])
def test_bad_flags_are_named(args, flag, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*TOY, *args, "--out-dir", str(tmp_path / "out")])
    assert exit_.value.code == 2 and flag in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_folder_holding_something_is_refused(tmp_path, capsys):
    (tmp_path / "peer_timing.md").write_text("someone else's table")
    with pytest.raises(SystemExit) as exit_:
        main([*TOY, "--out-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "--out-dir" in err and "not empty" in err
    assert [p.name for p in tmp_path.iterdir()] == ["peer_timing.md"]
    assert (tmp_path / "peer_timing.md").read_text() == "someone else's table"


def test_toy_run_times_ours_and_sdpa_and_skips_fla_off_cuda(tmp_path):
    pytest.importorskip("fla", reason="fla-core (requirements.txt) is not installed")
    import fla

    proc = run(*TOY, "--methods", "abc", "fla-abc", "gsa-op", "fla-gsa", "sdpa", "--out-dir", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads((tmp_path / "out" / "peer_timing.json").read_text())
    assert record["complete"] is True
    env = record["environment"]
    assert env["fla_version"] == fla.__version__ and env["fla_layout"] == "[B, T, H, *]"
    assert env["backend"] == "triton"  # our kernels, under the interpreter
    rows = {row["method"]: row for row in record["results"]}
    assert set(rows) == {"abc", "fla-abc", "gsa-op", "fla-gsa", "sdpa"}
    for method in ("abc", "gsa-op", "sdpa"):
        assert rows[method]["status"] == "ok" and rows[method]["ms"] > 0, rows[method]
    for method in ("fla-abc", "fla-gsa"):
        assert rows[method]["status"] == "skipped" and "CUDA" in rows[method]["message"]
    table = (tmp_path / "out" / "peer_timing.md").read_text()
    assert "| 32 | 2 |" in table and f"fla-core {fla.__version__} called in [B, T, H, *]" in table
