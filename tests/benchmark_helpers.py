"""What the benchmark tests share: running ``python -m benchmarks`` in a subprocess
(as a user would, each case in its own worker) and checking that a bad flag is named."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.__main__ import main

REPO = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_benchmark(suite: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m benchmarks SUITE ARGS`` from the repository root."""
    return subprocess.run([sys.executable, "-m", "benchmarks", suite, *args],
                          cwd=REPO, capture_output=True, text=True, timeout=900)


def run_and_load(suite: str, out_dir: Path, *args: str):
    """Run a suite that must succeed; returns (process, the JSON record it wrote)."""
    proc = run_benchmark(suite, *args, "--out-dir", str(out_dir))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, json.loads((out_dir / f"{suite}.json").read_text())


def assert_flag_named(suite: str, argv, flag: str, capsys) -> None:
    """Parsing ``suite argv`` exits with argparse's usage error, whose message names ``flag``."""
    with pytest.raises(SystemExit) as exit_info:
        main([suite, *argv])
    assert exit_info.value.code == 2
    assert flag in capsys.readouterr().err
