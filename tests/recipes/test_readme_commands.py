"""Every command the README and docs/*.md show runs: launchers as --dry-run (their fairseq commands
parsed by fairseq's own parser), fairseq command lines parsed the same way, other scripts with
--help where a real run needs data, downloads or hours; every Python example block runs. A command
no rule covers fails the test, so a new command in the docs needs a rule here. Nothing may change
in the checkout."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from fairseq_helpers import fairseq_command, parse_command

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "scripts" / "lm" / "README.md"]
NOT_RUN = "<!-- not run:"  # a Python block preceded by this line is an excerpt of a file, not a program
# Launchers: a dry run prints the commands they would run.
DRY_RUN = {"scripts/lm/train_wiki103.sh", "scripts/lm/evaluate_wiki103.sh", "scripts/mt/train.sh",
           "scripts/mt/evaluate.sh", "scripts/mt/sweep_memory.sh", "scripts/roberta/pretrain_mlm.sh",
           "scripts/roberta/finetune_glue.sh", "scripts/setup_env.sh"}
FAIRSEQ_TOOLS = {"fairseq-train", "fairseq-eval-lm", "fairseq-generate", "fairseq-interactive", "torchrun"}


def code_blocks(path: Path):
    """(language, first line number, text) of every fenced block; plus the README's inline
    `bash ...` / `python ...` spans (the paper tables' recipes, the status box, the captions)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = re.match(r"^```(\w*)\s*$", lines[i])
        if match:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            if not (i and lines[i - 1].startswith(NOT_RUN)):
                yield match.group(1), i + 2, "\n".join(lines[i + 1:end])
            i = end
        elif path.name == "README.md" and path.parent == ROOT:  # its tables and text name commands inline
            for span in re.findall(r"`((?:bash|python) [^`]+)`", lines[i]):
                yield "bash", i + 1, span
        i += 1


def shell_commands(text: str):
    """The command lines of a shell block: continuations joined, comments and blank lines dropped."""
    for line in text.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words:
            yield words


def collect():
    cases = []
    for path in DOCS:
        for language, line, text in code_blocks(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if language == "bash":
                cases += [pytest.param("shell", words, id=f"{where}:{words[0]}") for words in shell_commands(text)]
            elif language == "python":
                cases.append(pytest.param("python", text, id=f"{where}:python"))
    return cases


def run(argv, env_extra=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", _ABC_CPU_INDEX_REACHABLE="0",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""), **(env_extra or {}))
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{shlex.join(argv)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def check_printed_fairseq_commands(stdout: str, script: str):
    """Every printed line that runs a fairseq tool parses with that tool's parser; a launcher prints one."""
    found = [line for line in stdout.splitlines() if fairseq_command(line)]
    for line in found:
        parse_command(line)
    if script != "scripts/mt/sweep_memory.sh" and script != "scripts/setup_env.sh":
        assert found, f"{script} --dry-run printed no fairseq command:\n{stdout}"


def with_flag(words, flag):
    """``flag`` before a '--' (launcher options end there), else at the end."""
    return words[:words.index("--")] + [flag] + words[words.index("--"):] if "--" in words else words + [flag]


def run_shell(words):
    env = {}
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):  # VAR=value prefixes
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if words[:2] == ["nice", "-n"]:
        words = words[3:]
    if ">" in words:  # an output redirection: not part of the command
        words = words[:words.index(">")]
    head = words[0]
    if head in (".", "source"):
        assert words[1:] == [".venv/bin/activate"], words  # the venv setup_env.sh builds
        assert ".venv}/bin/activate" in (ROOT / "scripts" / "setup_env.sh").read_text()  # its default venv
    elif head in FAIRSEQ_TOOLS:
        parse_command(shlex.join(words))
    elif head == "sbatch":
        script = next(w for w in words if w.endswith(".sbatch"))
        assert run(["bash", script, "--help"]).stdout.strip()  # submitting needs SLURM: its usage
    elif head in ("bash", "sh"):
        script = words[1]
        if script in DRY_RUN:
            argv = words[1:] if "--dry-run" in words else with_flag(words[1:], "--dry-run")
            proc = run(["bash", *argv], env)
            check_printed_fairseq_commands(proc.stdout, script)
        else:  # quickstart, tests, data recipes: a real run downloads or trains; --help is the safe form
            assert run(["bash", script, "--help"], env).stdout.strip()
    elif head == "python":
        argv = [sys.executable, *words[1:]]
        if words[1:3] == ["-m", "experiments.bible_mt.compare_bible"] and "summary" not in words:
            proc = run(with_flag(argv, "--dry-run"), env)
            check_printed_fairseq_commands(proc.stdout, "compare_bible")
        else:  # benchmarks take minutes to hours, converters and collectors need files: --help
            assert "usage" in run(argv + ["--help"], env).stdout
    else:
        pytest.fail(f"no rule for the documented command {shlex.join(words)}: add one to this test")


@pytest.fixture(scope="module")
def checkout_state():
    def state():
        listing = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=ROOT,
                                 capture_output=True, text=True).stdout.splitlines()
        caches = ("__pycache__", ".venv/", ".ruff_cache/")  # written by the interpreter and the linter
        return [entry for entry in listing if not any(cache in entry for cache in caches)]
    before = state()
    yield
    assert state() == before, "a documented command changed the checkout"


@pytest.mark.parametrize("kind,command", collect())
def test_documented_command_runs(kind, command, checkout_state, monkeypatch):
    monkeypatch.chdir(ROOT)  # fairseq imports --user-dir abc_fairseq relative to the working directory
    if kind == "python":
        run([sys.executable, "-c", command])
    else:
        run_shell(list(command))


def test_every_document_shows_commands_and_the_readme_its_example():
    cases = collect()
    ids = [case.id for case in cases]
    assert any(i.startswith("README.md") and i.endswith(":python") for i in ids)
    assert {i.split(":")[0] for i in ids} >= {"README.md", "docs/benchmarks.md", "docs/fairseq_compat.md",
                                              "scripts/lm/README.md"}
    assert len(cases) >= 30
