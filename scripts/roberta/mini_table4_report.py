"""Collect the Table 4 miniature (scripts/roberta/mini_table4.sh) into results.{json,md,png}.

    python scripts/roberta/mini_table4_report.py --out OUT [--settings TEXT] [--threads T] [--transfer-updates K]

Reads, under OUT: the last MLM validation of each MLM stage (``<stage>/train.log``; the converted
and transferred models': ``eval/mlm_<model>.log``, fairseq-validate), ``eval/cls_<model>.log``
(fairseq-validate of the fine-tuned checkpoint with the
best dev accuracy on the dev and test splits), ``finetune/<model>/train_seconds`` and the MLM
stages' ``train_seconds``; with ``--transfer-updates`` K > 0 also the transfer stage's record in
``abc_transferred/model.pt`` (updates, tokens, wall time, final MSE); and compares the converted
checkpoint's tensors with the softmax one's (conversion must keep every pretrained tensor and only
add W_phi). A missing or unparsable
number is an error naming the file.
"""

import argparse
import datetime
import json
import math
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from abc_fairseq.convert.checkpoint_io import same_bits  # noqa: E402
from abc_fairseq.transfer.run_state import TRANSFER_KEY  # noqa: E402
from benchmarks.environment import cpu_model, git_commit  # noqa: E402

MODELS = ("softmax", "abc_converted", "abc_continued", "abc_scratch")
TRANSFERRED = ("abc_transferred", "abc_transferred_continued")  # with --transfer-updates K > 0
LABELS = {"softmax": "softmax (pretrained)", "abc_converted": "ABC converted, no continued MLM",
          "abc_continued": "ABC converted + continued MLM", "abc_scratch": "ABC from scratch (same budget)",
          "abc_transferred": "ABC converted + attention transfer, no continued MLM",
          "abc_transferred_continued": "ABC converted + attention transfer + continued MLM"}
MLM_STAGE = {"softmax": "softmax", "abc_converted": None, "abc_continued": "abc_continued",
             "abc_scratch": "abc_scratch", "abc_transferred": None,
             "abc_transferred_continued": "abc_transferred_continued"}  # None: no MLM training of its own
SHORT = {"softmax": "softmax", "abc_converted": "ABC converted\nno more MLM", "abc_continued": "ABC converted\n+ MLM",
         "abc_scratch": "ABC\nfrom scratch", "abc_transferred": "ABC transferred\nno more MLM",
         "abc_transferred_continued": "ABC transferred\n+ MLM"}
SUBSET_RE = re.compile(r"on '(\w+)' subset \| (.*)$")


def parse_subsets(path):
    """{subset: {metric: float}} from a fairseq-validate log (the last line per subset)."""
    if not os.path.isfile(path):
        sys.exit("mini_table4_report: missing %s" % path)
    found = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = SUBSET_RE.search(line.strip())
            if m:
                fields = (part.strip().rsplit(" ", 1) for part in m.group(2).split("|"))
                found[m.group(1)] = {k: float(v) for k, v in (p for p in fields if len(p) == 2)
                                     if re.fullmatch(r"-?[\d.]+(e-?\d+)?|nan|inf", v)}
    return found


def metric(found, subset, name, path):
    value = found.get(subset, {}).get(name)
    if value is None or not math.isfinite(value):
        sys.exit("mini_table4_report: no finite %s on %s in %s" % (name, subset, path))
    return value


def seconds(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (FileNotFoundError, ValueError):
        return None


def majority(out):
    """Accuracy (%) of always answering the most frequent dev / test label: the floor to compare with."""
    result = {}
    for split, key in (("valid", "dev"), ("test", "test")):
        with open(os.path.join(out, "data", "raw", "cls", split + ".label")) as f:
            labels = f.read().split()
        result[key] = round(100 * max(map(labels.count, set(labels))) / len(labels), 2)
    return result


def model_state(path):
    return torch.load(path, map_location="cpu", weights_only=False)["model"]


def conversion_check(softmax_pt, converted_pt):
    """How many softmax tensors the converted checkpoint holds unchanged, and which tensors it adds."""
    before, after = model_state(softmax_pt), model_state(converted_pt)
    missing = sorted(k for k in before if k not in after)
    changed = sorted(k for k in before if k in after and not same_bits(before[k], after[k]))
    return {"softmax_tensors": len(before), "identical": len(before) - len(missing) - len(changed),
            "missing": missing, "changed": changed, "added": sorted(k for k in after if k not in before)}


def machine():
    """Commit, CPU, torch and date, as the benchmarks record them."""
    return {"commit": git_commit() or "unknown", "cpu": cpu_model(), "torch": torch.__version__,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def transfer_record(out):
    """The transfer stage's record (updates, tokens, wall seconds, per-module MSE) from its checkpoint."""
    path = os.path.join(out, "abc_transferred", "model.pt")
    if not os.path.isfile(path):
        sys.exit("mini_table4_report: missing %s (--transfer-updates > 0)" % path)
    record = torch.load(path, map_location="cpu", weights_only=False).get(TRANSFER_KEY)
    if not isinstance(record, dict):
        sys.exit("mini_table4_report: %s carries no %r record" % (path, TRANSFER_KEY))
    return {key: record[key] for key in ("updates", "tokens", "wall_seconds", "lr", "max_tokens", "mse")
            if key in record}


def collect(out, models, transfer=None):
    """One row per model. ``transfer_seconds``: the wall time of the transfer stage behind it (0 for
    models without one), counted apart from the MLM seconds."""
    rows = {}
    for name in models:
        stage = MLM_STAGE[name]
        mlm_log = os.path.join(out, stage, "train.log") if stage else os.path.join(out, "eval", "mlm_%s.log" % name)
        cls_log = os.path.join(out, "eval", "cls_%s.log" % name)
        mlm, cls = parse_subsets(mlm_log), parse_subsets(cls_log)
        rows[name] = {
            "mlm_valid_ppl": metric(mlm, "valid", "ppl", mlm_log),
            "dev_accuracy": metric(cls, "valid", "accuracy", cls_log),
            "test_accuracy": metric(cls, "test", "accuracy", cls_log),
            "mlm_seconds": seconds(os.path.join(out, stage, "train_seconds")) if stage else 0,
            "transfer_seconds": round(transfer["wall_seconds"]) if transfer and name in TRANSFERRED else 0,
            "finetune_seconds": seconds(os.path.join(out, "finetune", name, "train_seconds")),
        }
    return rows


def markdown(result):
    lines = ["# Table 4 in miniature: softmax RoBERTa -> ABC on real text", "",
             "Command: `bash scripts/roberta/mini_table4.sh %s`" % result["command_args"], "",
             "Settings: `%s`" % result["settings"], "",
             "| model | MLM valid ppl | dev acc | test acc | MLM train s | transfer s | fine-tune s |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in result["models"].items():
        lines.append("| %s | %.2f | %.2f | %.2f | %s | %s | %s |" % (
            LABELS[name], r["mlm_valid_ppl"], r["dev_accuracy"], r["test_accuracy"], r["mlm_seconds"],
            r["transfer_seconds"], r["finetune_seconds"]))
    c = result["conversion"]
    lines += ["", "Majority class: %(dev).2f (dev), %(test).2f (test)." % result["majority_class"],
              "", "Conversion kept %d of the %d pretrained tensors unchanged; added: %s." % (
        c["identical"], c["softmax_tensors"], ", ".join(c["added"]) or "none"),
        "MLM valid ppl: of each model's starting checkpoint (ABC converted: before any ABC training). "
        "Accuracy: the fine-tuned checkpoint with the best dev accuracy, on dev and test.", ""]
    t = result.get("transfer")
    if t:
        mse = t.get("mse") or {}
        lines += ["Attention transfer: %d updates, %d tokens, %.0f s, Adam lr %g; final MSE (mean over modules) %s." % (
            t["updates"], t["tokens"], t["wall_seconds"], t["lr"],
            "%.4g" % (sum(mse.values()) / len(mse)) if mse else "not recorded"), ""]
    lines += [
        "Machine: %(cpu)s, torch %(torch)s, %(threads)s threads; commit %(commit)s; %(date)s." % result["machine"]]
    return "\n".join(lines) + "\n"


def plot(result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result["models"])
    fig, (ax_acc, ax_ppl) = plt.subplots(1, 2, figsize=(11 + 2.5 * (len(names) - len(MODELS)), 4))
    x = list(range(len(names)))
    for offset, key, label in ((-0.2, "dev_accuracy", "dev"), (0.2, "test_accuracy", "test")):
        values = [result["models"][n][key] for n in names]
        bars = ax_acc.bar([i + offset for i in x], values, width=0.4, label=label)
        ax_acc.bar_label(bars, fmt="%.1f", fontsize=7)
    ax_acc.axhline(result["majority_class"]["dev"], color="gray", linestyle="--", label="majority class (dev)")
    ax_acc.set_xticks(x, [SHORT[n] for n in names], fontsize=8)
    ax_acc.set_ylabel("accuracy (%)")
    low = min(min(result["models"][n]["dev_accuracy"], result["models"][n]["test_accuracy"]) for n in names)
    ax_acc.set_ylim(min(50, max(0, low - 5)), 100)
    ax_acc.legend(fontsize=8)
    ax_acc.set_title("Rotten Tomatoes fresh/rotten (fine-tuned)")
    bars = ax_ppl.bar(x, [result["models"][n]["mlm_valid_ppl"] for n in names], color="gray")
    ax_ppl.bar_label(bars, fmt="%.1f", fontsize=7)
    ax_ppl.set_xticks(x, [SHORT[n] for n in names], fontsize=8)
    ax_ppl.set_ylabel("MLM valid perplexity")
    ax_ppl.set_title("MLM valid perplexity before fine-tuning")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the output folder of mini_table4.sh")
    parser.add_argument("--settings", default="", help="the run's settings, recorded as they are")
    parser.add_argument("--command-args", default="", help="the mini_table4.sh arguments, recorded as they are")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch threads of the run")
    parser.add_argument("--transfer-updates", type=int, default=0, metavar="K",
                        help="the run's transfer updates; K > 0 adds the two transferred models (default: 0)")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.out):
        parser.error("--out %s is not a folder" % args.out)
    if args.transfer_updates < 0:
        parser.error("--transfer-updates must be >= 0, got %d" % args.transfer_updates)
    transfer = transfer_record(args.out) if args.transfer_updates else None
    models = MODELS + (TRANSFERRED if transfer else ())
    result = {"settings": args.settings, "command_args": args.command_args,
              "machine": dict(machine(), threads=args.threads), "models": collect(args.out, models, transfer),
              "transfer": transfer,
              "majority_class": majority(args.out),
              "conversion": conversion_check(os.path.join(args.out, "softmax", "checkpoint_last.pt"),
                                             os.path.join(args.out, "abc_converted", "model.pt"))}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(result, f, indent=2)
    text = markdown(result)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(text)
    plot(result, os.path.join(args.out, "results.png"))
    print(text)


if __name__ == "__main__":
    main()
