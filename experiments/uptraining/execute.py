"""Runs one step of the plan: picks the worktree whose code runs it, checks that fairseq imports
that worktree's abc_fairseq, runs the command with the thread count and the deadline, and leaves
its record.

Each run folder (``ROOT/runs/NAME``) holds ``code_dir`` (the worktree its first step used: its
later steps use the same one), ``commit`` (that worktree's HEAD, ``-dirty`` appended when it had
uncommitted changes), ``abc_fairseq_path`` (where ``import abc_fairseq`` resolved), the training
command (``command.txt``), ``train.log``, ``train_seconds`` (summed over resumed starts) and ``done``
(the budget, once training reached it). Every step run appends one JSON line to
``ROOT/steps.jsonl`` (command, commit, seconds, exit status, load average before and after).
"""

import datetime as dt
import json
import os
import shlex
import signal
import subprocess
import time
from typing import Dict, List, Optional, Sequence

from .plan import Checkpoint, Step


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except FileNotFoundError:
        return ""


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")


def commit_of(code: str) -> str:
    """HEAD of the worktree ``code``, with ``-dirty`` when it has uncommitted changes."""
    head = subprocess.run(["git", "-C", code, "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", code, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return head + ("-dirty" if dirty else "")


class Executor:
    """Runs steps under ``root``. ``code`` is the worktree for every run, ``gsa_code`` (when given)
    the one for the GSA runs (from scratch and converted): a checkout at a later commit of GSA's
    op, say. A run started before keeps the worktree its folder records. ``deadline`` (UTC) stops
    a running command and starts no new one."""

    def __init__(self, root: str, code: str, threads: int = 1, deadline: Optional[dt.datetime] = None,
                 gsa_code: str = "", say=print):
        self.root, self.code, self.threads, self.deadline = root, os.path.abspath(code), threads, deadline
        self.gsa_code = os.path.abspath(gsa_code) if gsa_code else self.code
        self.say = say
        self._checked: Dict[str, str] = {}

    # --- where a step runs --------------------------------------------------------------------
    def run_dir(self, step: Step) -> str:
        return os.path.join(self.root, "runs", step.run) if step.kind != "data" else self.root

    def code_for(self, step: Step) -> str:
        """The run's recorded worktree, else the one a new run of this model takes."""
        if step.kind == "data":
            return self.code
        recorded = _read(os.path.join(self.run_dir(step), "code_dir"))
        if recorded:
            return recorded
        return self.gsa_code if step.model == "gsa" else self.code

    def env(self, code: str) -> Dict[str, str]:
        """The environment of a step: one thread count for every library, the worktree first on
        PYTHONPATH (ahead of the venv's editable install of another checkout)."""
        env = dict(os.environ)
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[var] = str(self.threads)
        env["PYTHONPATH"] = code + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return env

    def check_import(self, code: str) -> str:
        """The file ``import abc_fairseq`` loads in a step's environment; an error unless it is the
        worktree's own."""
        if code not in self._checked:
            out = subprocess.run(["python", "-c", "import abc_fairseq; print(abc_fairseq.__file__)"], cwd="/",
                                 env=self.env(code), capture_output=True, text=True, check=True).stdout.strip()
            if not out.startswith(os.path.join(code, "abc_fairseq") + os.sep):
                raise RuntimeError(f"abc_fairseq resolves to {out}, not to the worktree {code}")
            self._checked[code] = out
        return self._checked[code]

    # --- state --------------------------------------------------------------------------------
    def is_done(self, step: Step) -> bool:
        if step.done_when == "budget":
            return _read(os.path.join(self.run_dir(step), "done")) == step.budget
        if step.done_when == "file":
            return os.path.isfile(step.product)
        return "Perplexity" in _read(step.product)

    def missing(self, step: Step):
        """The checkpoints the step needs that do not exist yet."""
        return [str(c) for c in step.needs if c.resolve() is None]

    def past_deadline(self) -> bool:
        return self.deadline is not None and now() >= self.deadline

    # --- running ------------------------------------------------------------------------------
    def run(self, step: Step) -> str:
        """Run ``step`` unless done; returns 'skipped', 'waiting' (a needed checkpoint is missing),
        'ok', 'failed' or 'deadline'."""
        if self.is_done(step):
            return "skipped"
        if self.missing(step):
            self.say(f"{step.name}: waiting for {', '.join(self.missing(step))}")
            return "waiting"
        if self.past_deadline():
            return "deadline"
        code = self.code_for(step)
        where = self.check_import(code)
        folder = self.run_dir(step)
        os.makedirs(os.path.dirname(step.log) if step.log else folder, exist_ok=True)
        commit = commit_of(code)
        if step.kind != "data" and not os.path.isfile(os.path.join(folder, "code_dir")):
            _write(os.path.join(folder, "code_dir"), code)
            _write(os.path.join(folder, "commit"), commit)
            _write(os.path.join(folder, "abc_fairseq_path"), where)
        command = step.command(code)
        if step.kind in ("train", "uptrain"):
            _write(os.path.join(folder, "command.txt"), "\n".join(command))
        self.say(f"{now():%H:%M:%S} {step.name} ({commit[:12]})")
        started, load = now(), os.getloadavg()
        status, seconds = self._execute(command, code, step.log, append=step.kind != "eval")
        record = {"step": step.name, "kind": step.kind, "run": step.run, "model": step.model, "seed": step.seed,
                  "updates": step.updates, "split": step.split, "commit": commit, "code": code,
                  "started": started.isoformat(timespec="seconds"), "seconds": round(seconds, 1), "status": status,
                  "load_before": [round(x, 2) for x in load], "load_after": [round(x, 2) for x in os.getloadavg()],
                  "threads": self.threads, "command": command}
        with open(os.path.join(self.root, "steps.jsonl"), "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        if step.kind in ("train", "uptrain"):
            spent = float(_read(os.path.join(folder, "train_seconds")) or 0)
            _write(os.path.join(folder, "train_seconds"), str(round(spent + seconds)))
            if status == "ok" and Checkpoint(folder, step.updates).resolve():
                _write(os.path.join(folder, "done"), step.budget)
        if status == "ok" and not self.is_done(step):
            status = "failed"
        self.say(f"{now():%H:%M:%S} {step.name}: {status} in {seconds:.0f} s")
        return status

    def _execute(self, command, code: str, log: str, append: bool):
        """Runs ``command`` in ``code`` with its output in ``log``; stops it at the deadline."""
        start = time.monotonic()
        with open(log or os.devnull, "a" if append else "w", encoding="utf-8") as out:
            proc = subprocess.Popen(command, cwd=code, env=self.env(code), stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            while True:
                try:
                    rc = proc.wait(timeout=5)
                    break
                except subprocess.TimeoutExpired:
                    if self.past_deadline():
                        os.killpg(proc.pid, signal.SIGTERM)
                        try:
                            proc.wait(timeout=60)
                        except subprocess.TimeoutExpired:
                            os.killpg(proc.pid, signal.SIGKILL)
                            proc.wait()
                        return "deadline", time.monotonic() - start
        return ("ok" if rc == 0 else "failed"), time.monotonic() - start


def only(steps: List[Step], words: str) -> List[Step]:
    """The steps whose name holds one of the comma-separated ``words`` (all steps when empty)."""
    chosen = [w for w in words.split(",") if w]
    return [s for s in steps if any(w in s.name for w in chosen)] if chosen else list(steps)


def drive(executor: Executor, steps: Sequence[Step], dry_run: bool, claim) -> int:
    """A driver's main loop: print the plan (``dry_run``: per step a '# NAME [STATE] in WORKTREE'
    line, then its command) or ``claim()`` the output folder and run the steps in order, stopping
    at the executor's deadline. Returns the exit status (1 when a step failed)."""
    if dry_run:
        for step in steps:
            state = "done" if executor.is_done(step) else "to run"
            code = executor.code_for(step)
            print(f"# {step.name} [{state}] in {code}")
            print(shlex.join(step.command(code)))
        return 0
    claim()
    counts: Dict[str, int] = {}
    for step in steps:
        status = executor.run(step)
        counts[status] = counts.get(status, 0) + 1
        if status == "deadline":
            print(f"deadline {executor.deadline.isoformat()} reached: {step.name} and the steps after it are not done")
            break
    print("steps: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0 if not counts.get("failed") else 1
