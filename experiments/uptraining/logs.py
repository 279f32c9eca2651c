"""Reads a run folder of the driver back: its record (model, seed, commit, training time, budget)
and its fairseq-eval-lm perplexities by update count and split.

The log patterns are scripts/quickstart_report.py's (``_read``, ``_last``): fairseq-eval-lm's
``Loss (base 2): L, Perplexity: P`` and ``Evaluated N tokens in Ts (X tokens/s)`` lines.
"""

import importlib.util
import json
import os
import re
from typing import Dict, List

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _quickstart_report():
    """scripts/quickstart_report.py as a module (scripts/ is no package)."""
    path = os.path.join(_REPO, "scripts", "quickstart_report.py")
    spec = importlib.util.spec_from_file_location("quickstart_report", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_QR = _quickstart_report()
last = _QR._last


def read(path: str) -> str:
    """A file's text without its surrounding whitespace ('' when absent)."""
    return _QR._read(path).strip()

EVAL_LOG = re.compile(r"^u(\d+)_(valid|test)\.log$")
RUN_NAME = re.compile(r"^(?:(conv)_)?(softmax|abc|gsa)_s(\d+)$")


def eval_results(run_dir: str) -> Dict[int, Dict[str, dict]]:
    """{updates: {split: {"ppl", "loss_base2", "tokens", "tokens_per_s"}}} from run_dir/eval/u*_*.log
    (logs without a perplexity, e.g. of an interrupted evaluation, are left out)."""
    out: Dict[int, Dict[str, dict]] = {}
    folder = os.path.join(run_dir, "eval")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        match = EVAL_LOG.match(name)
        if not match:
            continue
        text = read(os.path.join(folder, name))
        ppl = last(r"Perplexity: ([\d.]+)", text, float)
        if ppl is None:
            continue
        out.setdefault(int(match.group(1)), {})[match.group(2)] = {
            "ppl": ppl,
            "loss_base2": last(r"Loss \(base 2\): ([\d.]+)", text, float),
            "tokens": last(r"Evaluated ([\d,]+) tokens", text, int),
            "tokens_per_s": last(r"\(([\d.]+) tokens/s\)", text, float),
        }
    return out


def run_record(run_dir: str) -> dict:
    """One run folder's facts: name, kind ('scratch' or 'converted'), model, seed, commit, training
    seconds, budget reached (None while unfinished), last update logged, evaluations."""
    name = os.path.basename(os.path.normpath(run_dir))
    match = RUN_NAME.match(name)
    if not match:
        raise ValueError(f"{run_dir}: not a run folder of experiments.uptraining (conv_MODEL_sSEED or MODEL_sSEED)")
    seconds = read(os.path.join(run_dir, "train_seconds"))
    train = read(os.path.join(run_dir, "train.log"))
    return {
        "name": name,
        "kind": "converted" if match.group(1) else "scratch",
        "model": match.group(2),
        "seed": int(match.group(3)),
        "commit": read(os.path.join(run_dir, "commit")) or None,
        "code_dir": read(os.path.join(run_dir, "code_dir")) or None,
        "train_seconds": int(float(seconds)) if seconds else None,
        "budget": read(os.path.join(run_dir, "done")) or None,
        "last_update": last(r"num_updates[ =|]+(\d+)", train, int),
        "params": last(r"num\. shared model params: ([\d,]+)", train, int),
        "command": [w for w in read(os.path.join(run_dir, "command.txt")).split("\n") if w],
        "evals": eval_results(run_dir),
    }


def all_runs(root: str) -> List[dict]:
    """Every run folder under root/runs, by name."""
    folder = os.path.join(root, "runs")
    names = sorted(n for n in os.listdir(folder) if RUN_NAME.match(n)) if os.path.isdir(folder) else []
    return [run_record(os.path.join(folder, n)) for n in names]


def steps(root: str) -> List[dict]:
    """The driver's step records (root/steps.jsonl), in order."""
    text = read(os.path.join(root, "steps.jsonl"))
    return [json.loads(line) for line in text.splitlines() if line.strip()]
