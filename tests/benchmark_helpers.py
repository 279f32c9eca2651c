"""What the benchmark tests share: running ``python -m benchmarks`` in a subprocess
(as a user would, each case in its own worker), once per test module at a tiny size, and checking
that a bad flag is named."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.harness import main

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


def tiny_run_fixture(suite: str, args, key=lambda row: row["method"]):
    """A module-scoped fixture that runs ``suite`` once with ``args`` into a temporary folder and
    gives (process, folder, JSON record, the record's rows by ``key(row)``) to the module's tests."""

    @pytest.fixture(scope="module")
    def tiny_run(tmp_path_factory):
        out_dir = tmp_path_factory.mktemp(suite)
        proc, record = run_and_load(suite, out_dir, *args)
        return proc, out_dir, record, {key(row): row for row in record["results"]}

    return tiny_run


def assert_flag_named(suite: str, argv, flag: str, capsys) -> None:
    """Parsing ``suite argv`` exits with argparse's usage error, whose message names ``flag``."""
    with pytest.raises(SystemExit) as exit_info:
        main([suite, *argv])
    assert exit_info.value.code == 2
    assert flag in capsys.readouterr().err
