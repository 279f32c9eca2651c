#!/usr/bin/env python3
"""Collect the perplexities of scripts/lm/evaluate_wiki103.sh into the layout of the paper's
Table 2, as Markdown.

    python scripts/lm/collect_lm_results.py [--results DIR] [--out FILE] [--paper] [--all-rows]

Reads RESULTS/<row>/{valid,test}_ctx<C>.log (the last "Perplexity: X" line of each log, as
fairseq-eval-lm prints it) for the experiments of scripts/lm/rows.tsv, and prints one table per
setting: Table 2a (16 layers; columns Dev./Test at each evaluation context, 0 and 480 in the
paper) and Table 2b (32 layers; context 256). Context columns are those found in the logs (the
paper's when there are none). A missing result prints as '-'. With --paper, each cell also shows
the paper's number ("ours / paper").
"""

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ROWS_FILE = os.path.join(HERE, "rows.tsv")

SETTINGS = {
    "16l": ("Table 2a: Baevski & Auli (2019)'s 16-layer setting", (0, 480)),
    "32l": ("Table 2b: Kasai et al. (2021)'s 32-layer setting", (256,)),
}
SPLITS = (("valid", "Dev."), ("test", "Test"))

# The paper's Table 2 (perplexity), keyed by (row, split, context); the 32-layer kernel rows are
# the numbers the paper quotes from Kasai et al. (2021).
PAPER = {
    "base": {("valid", 0): 19.8, ("valid", 480): 18.4, ("test", 0): 20.5, ("test", 480): 19.0},
    "linformer": {("valid", 0): 26.5, ("valid", 480): 27.1, ("test", 0): 27.2, ("test", 480): 30.7},
    "abc_rd": {("valid", 0): 23.2, ("valid", 480): 22.3, ("test", 0): 24.0, ("test", 480): 23.1},
    "abc_n32": {("valid", 0): 21.2, ("valid", 480): 19.7, ("test", 0): 21.9, ("test", 480): 20.5},
    "abc_n64": {("valid", 0): 20.4, ("valid", 480): 18.9, ("test", 0): 21.1, ("test", 480): 19.5},
    "base_32l": {("valid", 256): 17.9, ("test", 256): 18.5},
    "elu_32l": {("valid", 256): 22.0, ("test", 256): 22.8},
    "rfa_32l": {("valid", 256): 20.4, ("test", 256): 21.3},
    "t2r_32l": {("valid", 256): 20.1, ("test", 256): 20.8},
    "abc_n64_32l": {("valid", 256): 18.6, ("test", 256): 19.1},
}

LOG_NAME = re.compile(r"^(valid|test)_ctx(\d+)\.log$")
PERPLEXITY = re.compile(r"Perplexity:\s*([0-9][0-9.,]*|inf|nan)")


def read_rows(path=ROWS_FILE):
    """rows.tsv -> list of dicts with row, setting, label, n (in file order)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]
    header = lines[0].split("\t")
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(header):
            raise SystemExit("collect_lm_results: ERROR: %s: data line %d has %d columns, expected %d"
                             % (path, number, len(fields), len(header)))
        rows.append(dict(zip(header, fields)))
    return rows


def perplexity(log_path):
    """The last perplexity fairseq-eval-lm printed in LOG_PATH, or None."""
    with open(log_path, encoding="utf-8", errors="replace") as f:
        found = PERPLEXITY.findall(f.read())
    return float(found[-1].replace(",", "")) if found else None


def scan(results_dir, row):
    """{(split, context): perplexity} for one row's result directory."""
    found = {}
    directory = os.path.join(results_dir, row)
    if not os.path.isdir(directory):
        return found
    for name in os.listdir(directory):
        match = LOG_NAME.match(name)
        if match:
            value = perplexity(os.path.join(directory, name))
            if value is not None:
                found[(match.group(1), int(match.group(2)))] = value
    return found


def cell(ours, paper):
    text = "-" if ours is None else "%.2f" % ours
    if paper is not None:
        text += " / %.1f" % paper
    return text


def table(setting, rows, results, with_paper):
    title, default_contexts = SETTINGS[setting]
    contexts = sorted({c for r in rows for (_, c) in results[r["row"]]}) or list(default_contexts)
    columns = [(split, c) for split, _ in SPLITS for c in contexts]
    head = ["Model", "n"] + ["%s ctx %d" % (dict(SPLITS)[s], c) for s, c in columns]
    lines = ["### " + title + (" (ours / paper)" if with_paper else ""), "",
             "| " + " | ".join(head) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * len(columns)) + "|"]
    for r in rows:
        paper = PAPER.get(r["row"], {}) if with_paper else {}
        cells = [cell(results[r["row"]].get(key), paper.get(key)) for key in columns]
        lines.append("| " + " | ".join([r["label"], r["n"]] + cells) + " |")
    return "\n".join(lines)


def collect(results_dir, with_paper=False, all_rows=False, rows=None):
    rows = read_rows() if rows is None else rows
    results = {r["row"]: scan(results_dir, r["row"]) for r in rows}
    parts = []
    for setting in SETTINGS:
        chosen = [r for r in rows if r["setting"] == setting and (all_rows or results[r["row"]])]
        if chosen:
            parts.append(table(setting, chosen, results, with_paper))
    if not parts:
        raise SystemExit("collect_lm_results: ERROR: no results under %s (expected <row>/{valid,test}_ctx<C>.log "
                         "written by scripts/lm/evaluate_wiki103.sh)" % results_dir)
    return "WikiText-103 perplexity (lower is better).\n\n" + "\n\n".join(parts) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=os.path.join(REPO, "results", "lm"),
                        help="directory of per-row result directories (default <repo>/results/lm)")
    parser.add_argument("--out", help="also write the Markdown to this file")
    parser.add_argument("--paper", action="store_true", help="show the paper's numbers next to ours")
    parser.add_argument("--all-rows", action="store_true", help="list rows without results too")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.results):
        parser.error("--results %s is not a directory" % args.results)
    markdown = collect(args.results, with_paper=args.paper, all_rows=args.all_rows)
    sys.stdout.write(markdown)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
