#!/usr/bin/env python
"""Gather GLUE dev accuracies of fine-tuned models into the paper's Table 4 layout (Markdown).

    python scripts/roberta/collect_glue.py [--root checkpoints/glue] [--encode-json benchmark_results/encode/encode.json] [--paper]

Reads ROOT/MODEL/TASK/train.log as written by scripts/roberta/finetune_glue.sh (MODEL is
``ATTN_N``: ``abc_64``, ``linformer_128``, ``softmax_64``, ...) and takes, per task, the best dev
accuracy over the epochs (MNLI: the matched dev set, fairseq's ``valid`` subset). Columns: MNLI,
QNLI, QQP, SST-2 and their average (only when all four are present), then the encoding speed and
memory relative to softmax from ``python -m abc_fairseq.benchmark encode``'s JSON, if given.
Other tasks found (RTE, MRPC, CoLA, STS-B) are listed in a second table. ``--paper`` adds the
paper's rows for comparison. Missing values are '-'.
"""

import argparse
import json
import os
import re
import sys
from typing import Dict, List, Optional

TABLE4_TASKS = ("MNLI", "QNLI", "QQP", "SST-2")
OTHER_TASKS = ("RTE", "MRPC", "CoLA", "STS-B")
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
VALID_LINE = re.compile(r"valid on '(?P<subset>[^']+)' subset \|(?P<fields>.*)$")


def best_metric(log_path: str, metric: str = "accuracy", subset: str = "valid") -> Optional[float]:
    """The best ``metric`` of ``subset`` over all validations in a fairseq log, or None."""
    best = None
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            match = VALID_LINE.search(line)
            if not match or match.group("subset") != subset:
                continue
            found = re.search(rf"\| {re.escape(metric)} (-?[\d.]+)", "|" + match.group("fields"))
            if found:
                value = float(found.group(1))
                best = value if best is None else max(best, value)
    return best


def collect(root: str) -> Dict[str, Dict[str, float]]:
    """MODEL -> TASK -> best dev accuracy (STS-B: best loss is not an accuracy; it is skipped)."""
    results: Dict[str, Dict[str, float]] = {}
    if not os.path.isdir(root):
        raise FileNotFoundError(f"--root {root} is not a directory")
    for model in sorted(os.listdir(root)):
        for task in TABLE4_TASKS + OTHER_TASKS:
            log_path = os.path.join(root, model, task, "train.log")
            if os.path.isfile(log_path):
                metric = "pearson" if task == "STS-B" else ("mcc" if task == "CoLA" else "accuracy")
                value = best_metric(log_path, metric)
                if value is not None:
                    results.setdefault(model, {})[task] = value
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
    models = [m for m in sorted(results) if any(t in results[m] for t in OTHER_TASKS)]
    if not models:
        return None
    lines = ["| Model | n | RTE acc | MRPC acc | CoLA mcc | STS-B pearson |", "|---|---|---|---|---|---|"]
    for model in models:
        name, n = _label(model)
        lines.append(f"| {name} | {n} | " + " | ".join(_fmt(results[model].get(t)) for t in OTHER_TASKS) + " |")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=os.path.join("checkpoints", "glue"),
                        help="directory of MODEL/TASK/train.log (finetune_glue.sh's --save-dir layout)")
    parser.add_argument("--encode-json", help="encode.json of `python -m abc_fairseq.benchmark encode` "
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
        text += "\n## Other GLUE tasks (dev)\n\n" + other + "\n"
    print(text, end="")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
