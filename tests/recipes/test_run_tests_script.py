"""scripts/run_tests.sh fails when pytest collects no tests (a mistyped -k or path is no pass).

run_tests.sh sources scripts/setup_env.sh, which returns at once when the venv's stamp matches and
would otherwise reinstall it: the test runs only inside the repository's own venv and only when
nothing that decides the venv changed since its stamp was written (as under run_tests.sh, which
has just refreshed it)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv"
STAMP = VENV / ".abc_setup_stamp"
VENV_INPUTS = [REPO / "requirements.txt", REPO / "setup.py", REPO / "scripts" / "setup_env.sh"]


def venv_is_current() -> bool:
    """This interpreter is the repository's venv and its stamp is newer than every input of it."""
    if not STAMP.is_file() or Path(sys.prefix).resolve() != VENV.resolve():
        return False
    return all(path.stat().st_mtime <= STAMP.stat().st_mtime for path in VENV_INPUTS)


@pytest.mark.skipif(not venv_is_current(), reason="needs the repository's .venv, up to date")
def test_no_collected_tests_is_a_failure():
    env = {k: v for k, v in os.environ.items()
           if k not in ("ABC_VENV", "ABC_FORCE_SETUP", "ABC_TORCH", "ABC_TORCH_CPU", "TORCH_PIP_ARGS")}
    env.update(ABC_TEST_WORKERS="0", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    proc = subprocess.run(["bash", "scripts/run_tests.sh", "tests/recipes/test_scripts_safety.py",
                           "-k", "no_such_test_xyz"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 5, f"exit {proc.returncode}:\n{log[-4000:]}"
    assert "collected no tests" in log
    assert "up to date" in log, f"setup_env.sh did more than check the stamp:\n{log[-4000:]}"
