"""The shell entry points of scripts/ at the level a user meets them: --help answers and does
nothing else, unknown options are named, a folder that holds something else is left alone, and
a second run on a live run's output folder refuses and names the holder (scripts/lib/common.sh).
Nothing here trains: every case stops before fairseq would start."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COMMON = REPO / "scripts" / "lib" / "common.sh"

# Every shell entry point, with the arguments that come before an option (finetune_glue's TASK).
SCRIPTS = {
    "scripts/quickstart.sh": [],
    "scripts/gpu_checks.sh": [],
    "scripts/offline_wheels.sh": [],
    "scripts/run_tests.sh": [],
    "scripts/setup_env.sh": [],
    "scripts/lm/train_wiki103.sh": [],
    "scripts/lm/evaluate_wiki103.sh": [],
    "scripts/lm/uptrain.sh": [],
    "scripts/mt/uptrain.sh": [],
    "scripts/mt/train.sh": [],
    "scripts/mt/evaluate.sh": [],
    "scripts/mt/sweep_memory.sh": [],
    "scripts/roberta/pretrain_mlm.sh": [],
    "scripts/roberta/finetune_glue.sh": ["SST-2"],
    "scripts/roberta/mini_table4.sh": [],
}
SBATCH = ["scripts/lm/train_wiki103.sbatch", "scripts/mt/train.sbatch", "scripts/roberta/pretrain_mlm.sbatch",
          "scripts/roberta/finetune_glue.sbatch", "scripts/lm/uptrain.sbatch", "scripts/mt/uptrain.sbatch"]


def run(cmd, cwd=REPO, timeout=120, **env):
    full_env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    full_env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + full_env.get("PATH", "")
    full_env.update(env)
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def tree(path):
    """Every file under path with its content: what a refused run must leave as it was."""
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(Path(path).rglob("*")) if p.is_file()}


def repo_status():
    return subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=REPO, capture_output=True,
                          text=True).stdout


def test_every_shell_entry_point_is_listed():
    found = {str(p.relative_to(REPO)) for p in (REPO / "scripts").rglob("*.sh")} - {
        "scripts/lib/common.sh", "scripts/lib/launcher.sh", "scripts/lib/sbatch.sh", "scripts/lib/uptrain.sh",
        "scripts/lm/common.sh"}
    assert found == set(SCRIPTS)


@pytest.mark.parametrize("script", sorted(SCRIPTS) + SBATCH)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_usage_and_does_nothing_else(script, flag, tmp_path):
    before = repo_status()
    args = SCRIPTS.get(script, [])
    proc = run(["bash", REPO / script, *args, flag], QUICKSTART_DIR=tmp_path / "qs", QUICKSTART_DATA=tmp_path / "data",
               ABC_VENV=tmp_path / "venv")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) > 3 and "set -euo" not in proc.stdout
    assert proc.stderr == ""  # no log line: nothing was started
    assert list(tmp_path.iterdir()) == [] and repo_status() == before


@pytest.mark.parametrize("script", sorted(set(SCRIPTS) - {"scripts/run_tests.sh"}))
def test_unknown_option_is_an_error_naming_it(script, tmp_path):
    proc = run(["bash", REPO / script, *SCRIPTS[script], "--bogus-flag"], QUICKSTART_DIR=tmp_path / "qs",
               QUICKSTART_DATA=tmp_path / "data")
    assert proc.returncode != 0 and "--bogus-flag" in proc.stderr
    assert list(tmp_path.iterdir()) == []


# --- quickstart: never touches what it did not create ---------------------------------------------

def test_quickstart_leaves_a_foreign_data_folder_alone(tmp_path):
    """QUICKSTART_DATA=data-bin/wikitext-103 must not become the Bible corpus."""
    data = tmp_path / "wikitext-103"
    data.mkdir()
    (data / "dict.txt").write_text("the 100\n")
    (data / "train.bin").write_bytes(b"\x00wikitext")
    before = tree(data)
    proc = run(["bash", REPO / "scripts" / "quickstart.sh"], QUICKSTART_DIR=tmp_path / "qs", QUICKSTART_DATA=data)
    assert proc.returncode != 0 and str(data) in proc.stderr and "not a build of the default corpus" in proc.stderr
    assert tree(data) == before and not (tmp_path / "qs").exists()


def test_quickstart_leaves_a_foreign_output_folder_alone(tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    (out / "results.md").write_text("someone else's table")
    proc = run(["bash", REPO / "scripts" / "quickstart.sh"], QUICKSTART_DIR=out, QUICKSTART_DATA=tmp_path / "data")
    assert proc.returncode != 0 and str(out) in proc.stderr and "refusing" in proc.stderr
    assert tree(out) == {"results.md": b"someone else's table"} and not (tmp_path / "data").exists()


# --- locks ----------------------------------------------------------------------------------------

def hold_lock(directory):
    """A live run holding directory's lock: take_lock, then exec a sleeper (the lock must survive
    the exec, as it does for fairseq-train)."""
    script = '. "$1"; take_lock "$2" holder-command; exec sleep 60'
    proc = subprocess.Popen(["bash", "-c", script, "holder", str(COMMON), str(directory)], stderr=subprocess.PIPE,
                            text=True)
    lock = Path(directory) / ".lock"
    for _ in range(200):
        if lock.exists() and "pid=%d " % proc.pid in lock.read_text():
            return proc
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the holder did not take the lock: %s" % proc.stderr.read())


def stop(proc):
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_lock_refuses_a_second_run_and_names_the_holder(tmp_path):
    holder = hold_lock(tmp_path / "run")
    try:
        proc = run(["bash", "-c", '. "$1"; take_lock "$2" second; echo started', "x", COMMON, tmp_path / "run"])
        assert proc.returncode != 0 and "started" not in proc.stdout
        assert "in use by another run" in proc.stderr
        assert "pid=%d" % holder.pid in proc.stderr and "host=" in proc.stderr and "holder-command" in proc.stderr
    finally:
        stop(holder)
    # Killed (-9): the lock is free again, and the next run says whose lock it takes over.
    proc = run(["bash", "-c", '. "$1"; take_lock "$2" third; echo started', "x", COMMON, tmp_path / "run"])
    assert proc.returncode == 0 and "started" in proc.stdout
    assert "no longer running" in proc.stderr and "pid=%d" % holder.pid in proc.stderr
    assert "third" in (tmp_path / "run" / ".lock").read_text() and "holder-command" not in \
        (tmp_path / "run" / ".lock").read_text()


@contextlib.contextmanager
def live_run(folder, mark):
    """``folder`` marked as ``mark``'s and locked by a live process while the block runs."""
    folder.mkdir()
    (folder / ".run").write_text(mark + "\n")
    holder = hold_lock(folder)
    try:
        yield holder
    finally:
        stop(holder)


def test_quickstart_refuses_while_another_quickstart_runs(tmp_path):
    out = tmp_path / "qs"
    with live_run(out, "quickstart lm-comparison") as holder:
        proc = run(["bash", REPO / "scripts" / "quickstart.sh"], QUICKSTART_DIR=out, QUICKSTART_DATA=tmp_path / "data")
        assert proc.returncode != 0 and "pid=%d" % holder.pid in proc.stderr
        assert sorted(p.name for p in out.iterdir()) == [".lock", ".run"]  # no model folder, no results
        assert not (tmp_path / "data").exists()  # the corpus was not even prepared


def lm_data(tmp_path):
    data = tmp_path / "bin"
    data.mkdir()
    (data / "dict.txt").write_text("a 1\n")
    return data


def test_lm_training_refuses_a_live_runs_save_dir(tmp_path):
    save = tmp_path / "ckpt"
    with live_run(save, "lm-train --row abc_n64") as holder:
        proc = run(["bash", REPO / "scripts/lm/train_wiki103.sh", "--row", "abc_n64", "--cpu", "--data",
                    lm_data(tmp_path), "--save-dir", save])
        assert proc.returncode != 0 and "pid=%d" % holder.pid in proc.stderr
        assert sorted(p.name for p in save.iterdir()) == [".lock", ".run"]


def test_lm_training_refuses_another_rows_or_foreign_save_dir(tmp_path):
    data = lm_data(tmp_path)
    other = tmp_path / "other_row"
    other.mkdir()
    (other / ".run").write_text("lm-train --row base\n")
    proc = run(["bash", REPO / "scripts/lm/train_wiki103.sh", "--row", "abc_n64", "--cpu", "--data", data,
                "--save-dir", other])
    assert proc.returncode != 0 and "--row base" in proc.stderr and "--row abc_n64" in proc.stderr
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "checkpoint_last.pt").write_bytes(b"not ours")
    proc = run(["bash", REPO / "scripts/lm/train_wiki103.sh", "--row", "abc_n64", "--cpu", "--data", data,
                "--save-dir", foreign])
    assert proc.returncode != 0 and str(foreign) in proc.stderr and "refusing" in proc.stderr
    assert tree(foreign) == {"checkpoint_last.pt": b"not ours"}


def test_mt_training_refuses_another_models_save_dir(tmp_path):
    data = tmp_path / "data"
    (data / "eval").mkdir(parents=True)
    (data / "eval" / "prep.json").write_text('{"src": "es", "tgt": "en", "window": 1}')
    save = tmp_path / "ck"
    save.mkdir()
    (save / ".run").write_text("mt-train dataset=tiny model=softmax arch=abc_transformer_tiny\n")
    proc = run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "tiny", "--data", data, "--save-dir", save, "--cpu"])
    assert proc.returncode != 0 and "model=softmax" in proc.stderr and "model=abc" in proc.stderr
    assert sorted(p.name for p in save.iterdir()) == [".run"]


# --- setup_env.sh: which Python, which torch build --------------------------------------------------

def fake_bin(tmp_path, pythons, nvidia_smi=False):
    """A PATH with stub pythons (each answers the version query) and the few tools the script's
    dry run uses, so that no real interpreter or GPU tool is found."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("uname", "dirname", "cat", "awk", "sed"):
        real = subprocess.run(["bash", "-c", "command -v " + tool], capture_output=True, text=True).stdout.strip()
        os.symlink(real, bin_dir / tool)
    stubs = dict(("python%s" % name, version) for name, version in pythons.items())
    if nvidia_smi:
        stubs["nvidia-smi"] = None
    for name, version in stubs.items():
        (bin_dir / name).write_text("#!/bin/sh\necho %s\n" % (version or "GPU 0"))
        (bin_dir / name).chmod(0o755)
    return str(bin_dir)


def setup_dry_run(tmp_path, pythons, nvidia_smi=False, **env):
    tmp_path.mkdir()
    full = {k: v for k, v in os.environ.items()
            if k not in ("TORCH_PIP_ARGS", "ABC_PYTHON", "ABC_TORCH_CPU", "ABC_TORCH", "_ABC_CPU_INDEX_REACHABLE")}
    full.update(PATH=fake_bin(tmp_path, pythons, nvidia_smi), ABC_VENV=str(tmp_path / "venv"),
                _ABC_NVIDIA_PROC=str(tmp_path / "no-driver"), **env)
    proc = subprocess.run(["/bin/bash", str(REPO / "scripts" / "setup_env.sh"), "--dry-run"], env=full,
                          capture_output=True, text=True, timeout=60)
    assert not (tmp_path / "venv").exists()
    return proc


def test_setup_env_tries_python312_and_python311(tmp_path):
    proc = setup_dry_run(tmp_path / "a", {"3": "3.10", "3.12": "3.12", "3.11": "3.11"})
    assert proc.returncode == 0 and "with python3.12 " in proc.stderr
    proc = setup_dry_run(tmp_path / "b", {"3": "3.13", "3.11": "3.11"})
    assert proc.returncode == 0 and "with python3.11 " in proc.stderr
    proc = setup_dry_run(tmp_path / "c", {"3": "3.12"})
    assert proc.returncode == 0 and "with python3 " in proc.stderr
    proc = setup_dry_run(tmp_path / "d", {"3": "3.9"})
    assert proc.returncode != 0 and "python3.12" in proc.stderr and "python3 is Python 3.9" in proc.stderr


CPU_INDEX = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu\n"
DEFAULT_INDEX = "pip install torch==2.13.0\n"


@pytest.mark.parametrize("case,env,gpu,expected,says", [
    ("cpu", {"_ABC_CPU_INDEX_REACHABLE": "1"}, False, CPU_INDEX, "no NVIDIA GPU found: the CPU build"),
    ("offline", {"_ABC_CPU_INDEX_REACHABLE": "0"}, False, DEFAULT_INDEX, "cannot be reached from here"),
    ("gpu", {"_ABC_CPU_INDEX_REACHABLE": "1"}, True, DEFAULT_INDEX, "NVIDIA GPU found"),
    ("forced-cpu", {"ABC_TORCH": "cpu", "_ABC_CPU_INDEX_REACHABLE": "0"}, True, CPU_INDEX, "(asked for)"),
    ("old-cpu-flag", {"ABC_TORCH_CPU": "1"}, True, CPU_INDEX, "(asked for)"),
    ("forced-cuda", {"ABC_TORCH": "cuda", "_ABC_CPU_INDEX_REACHABLE": "1"}, False, DEFAULT_INDEX, "ABC_TORCH=cuda"),
    ("own-index", {"TORCH_PIP_ARGS": "--index-url https://example.org/simple"}, False,
     "pip install torch==2.13.0 --index-url https://example.org/simple\n", "TORCH_PIP_ARGS as given"),
])
def test_setup_env_picks_the_torch_build_and_says_which(tmp_path, case, env, gpu, expected, says):
    proc = setup_dry_run(tmp_path / case, {"3": "3.11"}, nvidia_smi=gpu, **env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.endswith(expected) and says in proc.stderr
    assert proc.stderr.index("torch: ") < proc.stderr.index("would run pip install")  # said before the download


@pytest.mark.parametrize("env,flag", [({"ABC_TORCH": "rocm"}, "ABC_TORCH"),
                                      ({"ABC_TORCH": "cuda", "ABC_TORCH_CPU": "1"}, "ABC_TORCH_CPU"),
                                      ({"ABC_TORCH": "cpu", "TORCH_PIP_ARGS": "--pre"}, "TORCH_PIP_ARGS")])
def test_setup_env_refuses_contradicting_torch_choices(tmp_path, env, flag):
    proc = setup_dry_run(tmp_path / "bad", {"3": "3.11"}, **env)
    assert proc.returncode != 0 and flag in proc.stderr


@pytest.mark.parametrize("script", ["scripts/lm/make_configs.py", "scripts/lm/collect_lm_results.py",
                                    "scripts/roberta/collect_glue.py"])
def test_python_entry_points_answer_help_and_name_unknown_options(script):
    before = repo_status()
    proc = run([sys.executable, REPO / script, "--help"])
    assert proc.returncode == 0 and "usage" in proc.stdout
    proc = run([sys.executable, REPO / script, "--bogus-flag"])
    assert proc.returncode != 0 and "--bogus-flag" in proc.stderr
    assert repo_status() == before


# --- the one owner rule (claim_dir of scripts/lib/common.sh; data_prep's claim_dest uses it) ------

def claim(directory, kind, ident, *known):
    return run(["bash", "-c", '. "$1"; shift; claim_dir "$@" && echo claimed', "x", COMMON, directory, kind, ident,
                *known])


def test_one_owner_rule_claims_resumes_adopts_and_refuses(tmp_path):
    new = tmp_path / "new"
    assert "claimed" in claim(new, "mt-train", "model=abc").stdout
    assert (new / ".run").read_text() == "mt-train model=abc\n"
    assert claim(new, "mt-train", "model=abc").returncode == 0  # its own: resumed
    proc = claim(new, "mt-train", "model=softmax")
    assert proc.returncode != 0 and "model=abc" in proc.stderr and "model=softmax" in proc.stderr
    old = tmp_path / "old"  # an output from before the mark: only entries the run creates
    old.mkdir()
    (old / "bin").mkdir()
    (old / ".bin.tmp.x1").mkdir()  # a stage left half built
    assert claim(old, "prep", "", "bin").returncode == 0 and (old / ".run").read_text() == "prep\n"
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("years")
    proc = claim(foreign, "prep", "", "bin")
    assert proc.returncode != 0 and "thesis.tex" in proc.stderr and "echo 'prep' >" in proc.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["thesis.tex"]
