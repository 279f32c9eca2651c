#!/usr/bin/env python
"""Gather GLUE dev accuracies of fine-tuned models into the paper's Table 4 layout (Markdown).

    python scripts/roberta/collect_glue.py [--root checkpoints/glue] [--paper]
        [--encode-json benchmark_results/encode/encode.json]

Reads ROOT/MODEL/TASK/train.log as written by scripts/roberta/finetune_glue.sh (MODEL is
``ATTN_N``: ``abc_64``, ``linformer_128``, ``softmax_64``, ...) and takes, per task, the dev
validation with the best main metric over the epochs, and that validation's other metrics:
MNLI accuracy on the matched dev set (fairseq's ``valid`` subset) with the mismatched one
(``valid1``) of the same epoch; STS-B Pearson with the Spearman of the same validation; CoLA MCC;
accuracy elsewhere. Table 4's columns: MNLI (matched), QNLI, QQP, SST-2 and their average (only
when all four are present), then the encoding speed and memory relative to softmax from
``python -m benchmarks encode``'s JSON, if given. A second table lists every GLUE
result found, each task with all its metrics (any other task folder with a dev accuracy too).
``--paper`` adds the paper's rows for comparison. Missing values are '-'.
"""

import argparse
import json
import os
import re
import sys
from typing import Dict, List, Optional, Tuple

TABLE4_TASKS = ("MNLI", "QNLI", "QQP", "SST-2")
OTHER_TASKS = ("RTE", "MRPC", "CoLA", "STS-B")
# Per task: the metric that picks the best validation, then the columns reported from it, as
# (column name, subset, metric). Tasks not listed report their dev accuracy.
METRICS = {
    "MNLI": [("MNLI-m acc", "valid", "accuracy"), ("MNLI-mm acc", "valid1", "accuracy")],
    "CoLA": [("CoLA mcc", "valid", "mcc")],
    "STS-B": [("STS-B pearson", "valid", "pearson"), ("STS-B spearman", "valid", "spearman")],
}
NAMES = {"softmax": "RoBERTa-Ours", "abc": "ABC_MLP", "linformer": "Linformer"}
# The paper's Table 4 (dev accuracy; speed and memory relative to RoBERTa), for --paper.
PAPER_ROWS = [
    ("RoBERTa (paper)", "-", (87.6, 92.8, 91.9, 94.8), 1.0, 1.0),
    ("RoBERTa-Ours (paper)", "-", (87.2, 92.4, 91.7, 94.3), 1.0, 1.0),
    ("Linformer (paper)", "64", (85.3, 91.8, 90.8, 92.4), 1.7, 0.5),
    ("Linformer (paper)", "128", (86.1, 91.9, 91.4, 93.7), 1.5, 0.6),
    ("ABC_MLP (paper)", "64", (85.6, 91.8, 91.7, 93.8), 1.5, 0.5),
    ("ABC_MLP (paper)", "128", (87.1, 92.6, 91.8, 94.4), 1.3, 0.6),
]
VALID_LINE = re.compile(r"epoch (?P<epoch>\d+) \| valid on '(?P<subset>[^']+)' subset \|(?P<fields>.*)$")


def validations(log_path: str) -> Dict[Tuple[str, str], Dict[str, float]]:
    """(epoch, subset) -> {metric: value} for every dev validation in a fairseq log (the last
    line wins when an epoch is validated twice, e.g. after a resume)."""
    found: Dict[Tuple[str, str], Dict[str, float]] = {}
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            match = VALID_LINE.search(line)
            if not match:
                continue
            values = {name: float(value) for name, value in
                      re.findall(r"\| (\w+) (-?[\d.]+(?:e-?\d+)?)(?= \||$)", "|" + match.group("fields").rstrip())}
            found[(match.group("epoch"), match.group("subset"))] = values
    return found


def task_metrics(task: str) -> List[Tuple[str, str, str]]:
    return METRICS.get(task, [(f"{task} acc", "valid", "accuracy")])


def best_metrics(log_path: str, task: str) -> Dict[str, float]:
    """{column: value} of the validation with the best main metric (the first of the task's
    columns), the other columns taken from the same epoch."""
    runs = validations(log_path)
    columns = task_metrics(task)
    _, subset, metric = columns[0]
    scored = [(values[metric], epoch) for (epoch, sub), values in runs.items() if sub == subset and metric in values]
    if not scored:
        return {}
    _, epoch = max(scored)
    result = {}
    for column, sub, name in columns:
        value = runs.get((epoch, sub), {}).get(name)
        if value is not None:
            result[column] = value
    return result


def collect(root: str) -> Dict[str, Dict[str, float]]:
    """MODEL -> {column: value}: every task folder of every model with a dev result. Table 4's
    tasks are also stored under their task name (the main metric: MNLI matched accuracy)."""
    results: Dict[str, Dict[str, float]] = {}
    if not os.path.isdir(root):
        raise FileNotFoundError(f"--root {root} is not a directory")
    for model in sorted(os.listdir(root)):
        if not os.path.isdir(os.path.join(root, model)):
            continue
        for task in sorted(os.listdir(os.path.join(root, model))):
            log_path = os.path.join(root, model, task, "train.log")
            if not os.path.isfile(log_path):
                continue
            found = best_metrics(log_path, task)
            if found:
                results.setdefault(model, {}).update(found)
                results[model][task] = found[task_metrics(task)[0][0]]
    return results


def _label(model: str):
    attn, _, memory = model.rpartition("_")
    if not memory.isdigit():
        return model, "-"
    return NAMES.get(attn, attn), ("-" if attn == "softmax" else memory)


def _relative(encode: Optional[dict], model: str):
    if not encode:
        return None, None
    attn, _, memory = model.rpartition("_")
    method = "softmax" if attn == "softmax" else f"{attn}-{memory}"
    row = next((r for r in encode.get("results", []) if r.get("method") == method), None)
    if not row:
        return None, None
    return row.get("speed_vs_softmax"), row.get("memory_vs_softmax")


def _fmt(value, spec=".1f", suffix="") -> str:
    return "-" if value is None else f"{value:{spec}}{suffix}"


def table4(results: Dict[str, Dict[str, float]], encode: Optional[dict], paper: bool) -> str:
    header = "| Model | n | " + " | ".join(TABLE4_TASKS) + " | Avg. | Speed | Mem. |"
    lines = [header, "|" + "---|" * (len(TABLE4_TASKS) + 5)]
    if paper:
        for name, n, accs, speed, mem in PAPER_ROWS:
            cells = [_fmt(a) for a in accs] + [_fmt(sum(accs) / len(accs))]
            lines.append(f"| {name} | {n} | " + " | ".join(cells) + f" | {speed:.1f}x | {mem:.1f}x |")
    order = {"softmax": 0, "linformer": 1, "abc": 2}
    for model in sorted(results, key=lambda m: (order.get(m.rpartition("_")[0], 9), m)):
        accs = [results[model].get(task) for task in TABLE4_TASKS]
        avg = sum(accs) / len(accs) if all(a is not None for a in accs) else None
        speed, mem = _relative(encode, model)
        name, n = _label(model)
        cells = [_fmt(a) for a in accs] + [_fmt(avg), _fmt(speed, ".1f", "x"), _fmt(mem, ".1f", "x")]
        lines.append(f"| {name} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def other_table(results: Dict[str, Dict[str, float]]) -> Optional[str]:
    """Every GLUE result found: the known tasks in GLUE's order, then any other task found."""
    known = [col for task in ("MNLI",) + TABLE4_TASKS[1:] + OTHER_TASKS for col, _, _ in task_metrics(task)]
    tasks = {name for model in results for name in results[model]}
    extra = sorted(col for col in tasks if col.endswith(" acc") and col not in known)
    columns = [col for col in known + extra if any(col in results[m] for m in results)]
    if not columns:
        return None
    lines = ["| Model | n | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]
    for model in sorted(results):
        name, n = _label(model)
        lines.append(f"| {name} | {n} | " + " | ".join(_fmt(results[model].get(c)) for c in columns) + " |")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=os.path.join("checkpoints", "glue"),
                        help="directory of MODEL/TASK/train.log (finetune_glue.sh's --save-dir layout)")
    parser.add_argument("--encode-json", help="encode.json of `python -m benchmarks encode` "
                                              "for the Speed and Mem. columns")
    parser.add_argument("--paper", action="store_true", help="add the paper's Table 4 rows")
    parser.add_argument("--output", help="also write the Markdown here")
    args = parser.parse_args(argv)
    try:
        results = collect(args.root)
        encode = None
        if args.encode_json:
            with open(args.encode_json, encoding="utf-8") as f:
                encode = json.load(f)
    except (OSError, ValueError) as e:
        print(f"collect_glue: error: {e}", file=sys.stderr)
        return 1
    if not results:
        print(f"collect_glue: warning: no MODEL/TASK/train.log with dev results under {args.root}", file=sys.stderr)
    text = "## GLUE dev accuracy (Table 4 layout)\n\n" + table4(results, encode, args.paper) + "\n"
    other = other_table(results)
    if other:
        text += "\n## Every GLUE result found (dev)\n\n" + other + "\n"
    print(text, end="")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
