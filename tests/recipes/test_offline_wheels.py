"""scripts/offline_wheels.sh without the network: its pins agree with the project's own
(requirements.txt, setup_env.sh), --dry-run prints the pip commands for the Python asked for,
bad input is an error naming the flag, and a folder it did not make is left alone. (The fetch
itself was run by hand: pip checks every file against the pinned hashes.)"""

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "offline_wheels.sh"
PINS = REPO / "scripts" / "lib" / "offline_wheels.txt"


def run(*args):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def pins():
    """{name: (version, [sha256, ...])} of the pins file."""
    found = {}
    for line in PINS.read_text().splitlines():
        if line and not line.startswith("#"):
            spec, *hashes = line.split()
            name, version = spec.split("==")
            found[name] = (version, [h.removeprefix("--hash=sha256:") for h in hashes])
    return found


def test_pins_are_the_projects_versions_each_with_a_sha256():
    required = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (REPO / "requirements.txt").read_text(), re.M))
    fairseq = re.search(r'_ABC_FAIRSEQ_SPEC="ve-fairseq==(\S+)"', (REPO / "scripts" / "setup_env.sh").read_text())
    for name, (version, hashes) in pins().items():
        expected = fairseq.group(1) if name == "ve-fairseq" else required[name]
        assert version == expected, name
        assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), name


@pytest.mark.parametrize("python", ["3.11", "3.12"])
def test_dry_run_prints_the_pip_commands_and_makes_nothing(python, tmp_path):
    out = tmp_path / "wheels"
    proc = run("--out", out, "--python", python, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    fetch, build = proc.stdout.splitlines()
    assert "--require-hashes" in fetch and str(PINS) in fetch and f"--python-version {python}" in fetch
    assert f"--abi cp{python.replace('.', '')}" in fetch and "--no-deps" in fetch and "--no-build-isolation" in fetch
    archive = f"{out}/antlr4-python3-runtime-{pins()['antlr4-python3-runtime'][0]}.tar.gz"
    assert build.endswith(archive + " ") and "--no-index" in build
    assert not out.exists()


@pytest.mark.parametrize("args,named", [(["--out", "x", "--python", "3.10"], "--python 3.10"),
                                        (["--python", "3.12"], "--out"), (["--out"], "--out")])
def test_bad_input_is_an_error_naming_the_flag(args, named, tmp_path):
    proc = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode != 0 and named in proc.stderr and list(tmp_path.iterdir()) == []


def test_a_folder_it_did_not_make_is_left_alone(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    proc = run("--out", tmp_path)
    assert proc.returncode != 0 and "refusing" in proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
