#!/usr/bin/env python3
"""Gather BLEU scores from evaluation outputs into the ABC paper's machine-translation tables.

    python scripts/mt/collect_results.py DIR [DIR ...] [--output results.md]

Scans the directories recursively for ``result.json`` files (written by scripts/mt/score.py via
evaluate.sh; each carries the run description train.sh saved in run.json) and prints Markdown:

- Table 3a: WMT14 EN-DE test SacreBLEU (beam search; averaged checkpoints), rows BASE,
  ABC_RD (``--model random``), Linformer and ABC_MLP (``--model abc``) per cross/causal memory
  size, and any other decoder attention trained with train.sh under its strategy name;
- Table 3b: IWSLT14 ES-EN document-level test SacreBLEU, same layout;
- Table 5: WMT14 EN-DE development SacreBLEU (greedy, no averaging), causal memory in rows,
  cross memory in columns;
- Table 7: the ABC variants on the WMT14 EN-DE test (Table 3a's setting): Window, Cluster,
  MLP-ReLU (``--model abc-relu``), MLP-sigmoid (``abc-sigmoid``), MLP-exp (``abc``) per cross /
  causal memory size, and MLP-exp-all (``--model abc --encoder-memory 32``: ABC in the encoder too);
- any other result (other datasets, splits or settings) in a plain list.

The paper's numbers are shown next to ours where the configuration matches. When one
configuration was evaluated several times, the most recent result is used.
"""

import argparse
import json
import os
import sys

PAPER_3A = {("softmax", None, None): 27.2, ("random", 32, 32): 25.7, ("random", 64, 64): 26.2,
            ("linformer", 32, 32): 26.6, ("linformer", 64, 64): 26.7, ("abc", 32, 8): 27.1, ("abc", 32, 32): 27.3}
# Linformer 128/64 did not converge in the paper: listed with no score.
PAPER_3B = {("softmax", None, None): 39.9, ("linformer", 128, 64): None, ("random", 128, 64): 38.6,
            ("abc", 128, 64): 39.7}
ROW_NAMES = {"softmax": "BASE", "abc": "ABC_MLP", "random": "ABC_RD", "linformer": "Linformer"}
ROW_ORDER = ["softmax", "random", "linformer", "abc"]
PAPER_5 = {(8, 8): 24.7, (16, 8): 25.2, (32, 8): 25.6, (64, 8): 25.5, (16, 16): 25.4, (32, 16): 25.7,
           (64, 16): 25.6, (32, 32): 25.7, (64, 32): 25.8, (64, 64): 25.8}
MEMORY_SIZES = (8, 16, 32, 64)
# Table 7, keyed (model, cross n, causal n, encoder n). MLP-ReLU 32/8 did not converge in the paper.
PAPER_7 = {("softmax", None, None, None): 27.2, ("window", 32, 32, None): 26.3, ("cluster", 32, 32, None): 26.8,
           ("abc-relu", 32, 8, None): None, ("abc-relu", 32, 32, None): 26.4, ("abc-sigmoid", 32, 8, None): 26.8,
           ("abc-sigmoid", 32, 32, None): 27.0, ("abc", 32, 8, None): 27.1, ("abc", 32, 32, None): 27.3,
           ("abc", 32, 32, 32): 27.0}
ROW_NAMES_7 = {"softmax": "BASE", "window": "Window", "cluster": "Cluster", "abc-relu": "MLP-ReLU",
               "abc-sigmoid": "MLP-sigmoid", "abc": "MLP-exp"}


def find_results(dirs):
    results = []
    for top in dirs:
        if not os.path.isdir(top):
            sys.exit("collect_results: %s is not a directory" % top)
        for root, _dirs, files in os.walk(top):
            if "result.json" in files:
                path = os.path.join(root, "result.json")
                try:
                    with open(path, encoding="utf-8") as f:
                        r = json.load(f)
                except (OSError, ValueError) as e:
                    print("collect_results: skipping unreadable %s (%s)" % (path, e), file=sys.stderr)
                    continue
                r["_path"] = path
                r["_mtime"] = os.path.getmtime(path)
                results.append(r)
    return results


def describe(r, table=None):
    """The row of a result: (model, cross n, causal n), with the encoder n appended for Table 7."""
    run = r.get("run", {})
    model = run.get("model")
    if model == "softmax":
        row = ("softmax", None, None)
    else:
        row = (model, run.get("cross_memory"), run.get("causal_memory"))
    if table == "7":
        row += (None if model == "softmax" else run.get("encoder_memory"),)
    return row


def classify(r):
    """The tables a result belongs to (a list, empty for none)."""
    run = r.get("run", {})
    dataset, split = run.get("dataset"), r.get("split")
    averaged = "average_last" in os.path.basename(str(r.get("checkpoint", "")))
    if r.get("copy_source"):
        return []
    if dataset == "wmt14" and split == "test" and averaged and r.get("beam", 0) > 1:
        variant = run.get("model") in ROW_NAMES_7
        if run.get("encoder_memory"):
            return ["7"] if variant else []
        return ["3a", "7"] if variant else ["3a"]
    if run.get("encoder_memory"):
        return []
    if dataset == "iwslt14_doc" and split == "test" and averaged and r.get("beam", 0) > 1 and r.get("decode") == "doc":
        return ["3b"]
    if dataset == "wmt14" and split == "valid" and not averaged and r.get("beam") == 1 and run.get("model") == "abc":
        return ["5"]
    return []


def latest(results):
    """One result per (table, configuration): the most recent."""
    best = {}
    for r in sorted(results, key=lambda r: r["_mtime"]):
        for table in classify(r):
            best[(table, describe(r, table))] = r
    return best


def fmt(x):
    return "-" if x is None else "%.1f" % x


def table3(rows, paper, title):
    lines = ["### %s" % title, "", "| Model | Cross n | Causal n | BLEU | Paper |", "|---|---:|---:|---:|---:|"]
    def order(key):
        model = key[0]
        rank = ROW_ORDER.index(model) if model in ROW_ORDER else len(ROW_ORDER)
        return (rank, str(model), key[1] or 0, key[2] or 0)

    for key in sorted(set(rows) | set(paper), key=order):
        model, cross, causal = key
        name = ROW_NAMES.get(model, model)
        ours = rows[key]["bleu"] if key in rows else None
        lines.append("| %s | %s | %s | %s | %s |" % (name, cross if cross else "-", causal if causal else "-",
                                                    fmt(ours), fmt(paper.get(key))))
    return lines


def table5(rows):
    lines = ["### Table 5: WMT14 EN-DE development SacreBLEU of ABC_MLP (greedy, no averaging; ours / paper)",
             "", "| Causal n \\ Cross n | " + " | ".join(str(c) for c in MEMORY_SIZES) + " |",
             "|---|" + "---:|" * len(MEMORY_SIZES)]
    for causal in MEMORY_SIZES:
        cells = []
        for cross in MEMORY_SIZES:
            if causal > cross:
                cells.append("")
                continue
            ours = rows.get(("abc", cross, causal))
            cells.append("%s / %s" % (fmt(ours["bleu"] if ours else None), fmt(PAPER_5.get((cross, causal)))))
        lines.append("| %d | %s |" % (causal, " | ".join(cells)))
    return lines


def table7(rows):
    lines = ["### Table 7: ABC variants, WMT14 EN-DE test (ABC in the decoder; MLP-exp-all also in the encoder)",
             "", "| phi | Cross n | Causal n | Encoder n | BLEU | Paper |", "|---|---:|---:|---:|---:|---:|"]
    order = list(ROW_NAMES_7)

    def rank(key):
        return (order.index(key[0]), key[3] or 0, key[1] or 0, key[2] or 0)

    for key in sorted(set(rows) | set(PAPER_7), key=rank):
        model, cross, causal, encoder = key
        name = ROW_NAMES_7[model] + ("-all" if encoder else "")
        ours = rows[key]["bleu"] if key in rows else None
        lines.append("| %s | %s | %s | %s | %s | %s |" % (name, cross or "-", causal or "-", encoder or "-", fmt(ours),
                                                         fmt(PAPER_7.get(key))))
    return lines


def render(results):
    best = latest(results)
    tables = {"3a": {}, "3b": {}, "5": {}, "7": {}}
    for (table, key), r in best.items():
        tables[table][key] = r
    others = [r for r in results if not classify(r)]
    out = ["## Machine translation results (SacreBLEU)", ""]
    out += table3(tables["3a"], PAPER_3A, "Table 3a: WMT14 EN-DE test (beam 5, length penalty 0.6, "
                                          "average of the last 5 epoch checkpoints)")
    out += [""]
    out += table3(tables["3b"], PAPER_3B, "Table 3b: IWSLT14 ES-EN document-level test (predicted target context)")
    out += ["", "(Paper: Linformer 128/64 fails to converge on IWSLT14.)", ""]
    out += table5(tables["5"])
    out += [""]
    out += table7(tables["7"])
    out += ["", "(Paper: MLP-ReLU 32/8 fails to converge.)"]
    if others:
        out += ["", "### Other evaluations", "",
                "| Dataset | Model | Cross n | Causal n | Split | Checkpoint | Beam | BLEU | Result |",
                "|---|---|---:|---:|---|---|---:|---:|---|"]
        for r in sorted(others, key=lambda r: r["_path"]):
            run = r.get("run", {})
            model = "copy source" if r.get("copy_source") else run.get("model", "?")
            out.append("| %s | %s | %s | %s | %s | %s | %s | %.2f | %s |" % (
                run.get("dataset", "?"), model, run.get("cross_memory") or "-", run.get("causal_memory") or "-",
                r.get("split", "?"), os.path.basename(str(r.get("checkpoint", "-"))), r.get("beam", "-"),
                r["bleu"], os.path.relpath(r["_path"])))
    signatures = sorted(set(r.get("signature", "") for r in results))
    if signatures:
        out += ["", "SacreBLEU signature(s): " + "; ".join("`%s`" % s for s in signatures if s)]
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", help="directories to scan for result.json")
    parser.add_argument("--output", help="write the Markdown here instead of stdout")
    args = parser.parse_args(argv)
    results = find_results(args.dirs)
    if not results:
        sys.exit("collect_results: no result.json under %s" % ", ".join(args.dirs))
    text = render(results)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
