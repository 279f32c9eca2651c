"""The summary of experiments.bible_mt.uptrain: what it read from OUT, the table and the plot
(SUMMARY_DIR/mt.{json,md,png}).

Per seed and target: the softmax source at P and continued to P + U, the converted model before
any update and at every epoch of its continued training, the target trained from scratch to
P + U. Valid loss: label-smoothed cross entropy in bits (fairseq's log; for the converted model
before any update, fairseq-validate). BLEU: SacreBLEU on test (scripts/mt/evaluate.sh).
"""

import json
import os
from pathlib import Path
from statistics import mean
from typing import Dict, List, Optional

from benchmarks.environment import cpu_model, git_commit

from . import compare_bible as cb
from .training_curves import ValidPoint, first_update_reaching, loss_at, valid_curve
from .uptrain_layout import OWNER_FILE, SOURCE, VALIDATED, attention_flags, conversion_dir, die, log, source_run
from .variants import Run

GENERATOR = "experiments.bible_mt.uptrain"


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def _bleu(save_dir: Path) -> Dict[int, float]:
    """{updates: BLEU} from SAVE_DIR/eval/test_uN/result.json."""
    out = {}
    for result in save_dir.glob("eval/test_u*/result.json"):
        out[int(result.parent.name[len("test_u"):])] = json.loads(result.read_text())["bleu"]
    return dict(sorted(out.items()))


def _validated_loss(log_file: Path) -> Optional[float]:
    """The loss of fairseq-validate's log (None until it finished)."""
    for line in _text(log_file).splitlines():
        if VALIDATED in line and "| loss " in line:
            return float(line.split("| loss ")[1].split()[0])
    return None


def _curve(log_file: Path, offset: int = 0) -> List[dict]:
    return [{"updates": p.updates + offset, "loss": p.loss} for p in valid_curve(_text(log_file))]


def portable(words: List[str], args) -> List[str]:
    """A command with the machine's folders named as the README writes them: OUT, the checkout '.'
    and 'python' for the interpreter that ran it (whichever Python writes the summary)."""
    words = [w.replace(str(args.out), "OUT").replace(str(cb.REPO), ".") for w in words]
    if words and os.path.basename(words[0]).startswith("python"):
        words[0] = "python"
    return words


def collect(args) -> Dict[str, dict]:
    """Every run the summary reads, by name: source_sS, TARGET_sS (converted), TARGET_scratch_sS."""
    P = args.pretrain
    runs: Dict[str, dict] = {}
    for seed in args.seeds:
        source = source_run(seed)
        source_dir = cb.run_dir_of(source, args)
        runs[f"source_s{seed}"] = {
            "kind": "source", "seed": seed, "folder": f"runs/{source.name}",
            "curve": _curve(cb.log_of(source, args)), "bleu_at": _bleu(source_dir),
            "validate_at_P": _validated_loss(source_dir / "eval" / f"validate_u{P}.log")}
        for target in args.targets:
            folder = conversion_dir(args, target.name, seed)
            record = json.loads(_text(folder / OWNER_FILE) or "{}")
            before = _validated_loss(folder / "eval" / "validate_u0.log")
            curve = ([{"updates": P, "loss": before}] if before is not None else []) + _curve(folder / "train.log", P)
            runs[f"{target.name}_s{seed}"] = {
                "kind": "converted", "target": target.name, "seed": seed, "folder": f"uptrain/{folder.name}",
                "curve": curve, "bleu_at": {P + u: b for u, b in _bleu(folder).items()},
                "convert_command": portable(record.get("convert_command") or [], args), "lr": record.get("lr"),
                "warmup": record.get("warmup")}
            runs[f"{target.name}_scratch_s{seed}"] = scratch_run(args, Run(target, seed))
    return runs


def scratch_run(args, run: Run) -> dict:
    """A target trained from scratch: OUT's run when its log reached P + U, else the first saved
    summary (--scratch-summary) holding that variant and seed trained to P + U, else OUT's run as
    far as it got."""
    final = args.pretrain + args.continued
    entry = {"kind": "scratch", "target": run.variant.name, "seed": run.seed}
    curve = _curve(cb.log_of(run, args))
    if curve and curve[-1]["updates"] >= final or not args.scratch_summary:
        return {**entry, "folder": f"runs/{run.name}", "curve": curve, "bleu_at": _bleu(cb.run_dir_of(run, args))}
    for path in args.scratch_summary:
        saved = json.loads(path.read_text()).get("models", {}).get(run.name)
        if saved and saved.get("seed") == run.seed and saved["curve"] and saved["curve"][-1]["updates"] >= final:
            return {**entry, "saved_summary": os.path.relpath(path.resolve(), cb.REPO),
                    "curve": [{"updates": p["updates"], "loss": p["loss"]} for p in saved["curve"]],
                    "bleu_at": {int(u): b for u, b in saved["bleu_at"].items() if b is not None}}
    return {**entry, "folder": f"runs/{run.name}", "curve": curve, "bleu_at": _bleu(cb.run_dir_of(run, args))}


def _loss(run: dict, updates: int) -> Optional[float]:
    """The run's valid loss at ``updates``, linearly interpolated between its points."""
    points = [ValidPoint(p["updates"], 0, p["loss"], float("nan"), float("nan")) for p in run["curve"]]
    return loss_at(points, updates)


def rows_for(runs: Dict[str, dict], target: str, seeds: List[int], P: int, U: int, first: int) -> List[dict]:
    """The table's rows for one target: a label, the total updates, and per seed the valid loss and
    BLEU there (None where not measured). ``first``: the continued updates of the first epoch."""
    spec = [("softmax source", P, "source_s{}"),
            ("converted, before any update", P, target + "_s{}"),
            (f"converted + {first}", P + first, target + "_s{}"),
            (f"converted + {U}", P + U, target + "_s{}"),
            (f"{target} from scratch", P + U, target + "_scratch_s{}"),
            ("softmax continued", P + U, "source_s{}")]
    rows = []
    for label, updates, pattern in spec:
        losses = [_loss(runs[pattern.format(s)], updates) for s in seeds]
        bleus = [runs[pattern.format(s)]["bleu_at"].get(updates) for s in seeds]
        rows.append({"model": label, "updates": updates, "valid_loss": losses, "bleu": bleus})
    return rows


def recovery(runs: Dict[str, dict], target: str, seed: int, P: int) -> Optional[int]:
    """Continued updates after which the converted model's valid loss first reaches its source's at P."""
    source_loss = _loss(runs[f"source_s{seed}"], P)
    curve = [ValidPoint(p["updates"] - P, 0, p["loss"], 0.0, 0.0) for p in runs[f"{target}_s{seed}"]["curve"]]
    if source_loss is None or not curve:
        return None
    return first_update_reaching(curve, source_loss)


def _cell(values: List[Optional[float]], digits: int) -> List[str]:
    cells = [f"{v:.{digits}f}" if v is not None else "-" for v in values]
    known = [v for v in values if v is not None]
    return cells + [f"{mean(known):.{digits}f}" if len(known) == len(values) else "-"]


def markdown(summary: dict) -> str:
    seeds = summary["settings"]["seeds"]
    head = (["model", "updates"] + [f"valid loss s{s}" for s in seeds] + ["mean"]
            + [f"BLEU s{s}" for s in seeds] + ["mean"])
    lines = [f"<!-- written by {GENERATOR}; rerun it to update -->", ""]
    for target, rows in summary["tables"].items():
        lines += [f"### softmax `transformer` -> {target} ({summary['settings']['targets'][target]})", "",
                  "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        for row in rows:
            lines.append("| " + " | ".join([row["model"], str(row["updates"])] + _cell(row["valid_loss"], 3)
                                           + _cell(row["bleu"], 2)) + " |")
        back = summary["recovery"][target]
        lines += ["", "Continued updates after which the converted model's valid loss reaches its source's at P: "
                  + ", ".join(f"seed {s}: {back[str(s)] if back[str(s)] is not None else 'not within U'}"
                              for s in seeds), ""]
    s = summary["settings"]
    lines += ["Valid loss: label-smoothed cross entropy in bits on the valid split (fairseq's; before any update "
              "by fairseq-validate, which gives the source at P "
              + ", ".join(f"{v:.3f}" if v is not None else "-" for v in summary["source_validate_check"]["validate"])
              + " against its training log's "
              + ", ".join(f"{v:.3f}" if v is not None else "-" for v in summary["source_validate_check"]["log"])
              + "). BLEU: SacreBLEU on the 399 test sentences, beam 5, length penalty 0.6.", "",
              *([_saved_note(summary)] if _saved_note(summary) else []),
              f"P = {s['pretrain']}, U = {s['continue']}; continued with lr {s['lr']}, {s['warmup']} warm-up "
              "updates (scripts/mt/uptrain.sh: optimizer, schedule, meters and data position reset). "
              f"Machine: {s['machine']}; {s['threads']} thread(s) per process. Commits: "
              + (", ".join(sorted({r["commit"] for r in summary["stages"]})) or "none recorded") + ".", ""]
    return "\n".join(lines)


def _saved_note(summary: dict) -> str:
    """Which from-scratch runs come from saved summaries (an empty line when none)."""
    saved = {}
    for name, run in summary["runs"].items():
        if run.get("saved_summary"):
            saved.setdefault(run["saved_summary"], []).append(f"{run['target']} seed {run['seed']}")
    if not saved:
        return ""
    return ("From scratch, read from saved compare_bible summaries (the same setting and seeds, trained "
            "earlier): " + "; ".join(f"{', '.join(runs)} from {path}" for path, runs in saved.items()) + ".\n")


def plot(path: Path, summary: dict) -> None:
    """Valid loss (top) and BLEU (bottom) against total updates, one column per target."""
    import logging

    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs, targets, seeds = summary["runs"], list(summary["tables"]), summary["settings"]["seeds"]
    fig, axes = plt.subplots(2, len(targets), figsize=(6 * len(targets), 8), squeeze=False)
    styles = {"source": ("softmax", "tab:gray"), "converted": ("converted", "tab:red"),
              "scratch": ("from scratch", "tab:blue")}
    for column, target in enumerate(targets):
        for seed, dash in zip(seeds, ("-", "--", ":", "-.")):
            for name in (f"source_s{seed}", f"{target}_s{seed}", f"{target}_scratch_s{seed}"):
                run = runs[name]
                label, color = styles[run["kind"]]
                label = f"{label}, seed {seed}"
                xs = [p["updates"] for p in run["curve"]]
                axes[0][column].plot(xs, [p["loss"] for p in run["curve"]], dash, color=color, label=label)
                bleu = {int(u): b for u, b in run["bleu_at"].items()}
                axes[1][column].plot(list(bleu), list(bleu.values()), dash, marker="o", color=color, label=label)
        axes[0][column].set_title(f"softmax transformer -> {target}")
        axes[0][column].set_ylabel("valid loss (label-smoothed, bits)")
        axes[1][column].set_ylabel("test BLEU")
        for ax in axes[:, column]:
            ax.set_xlabel("total updates")
            ax.axvline(summary["settings"]["pretrain"], color="black", alpha=0.2)
            ax.grid(True, alpha=0.3)
        # The window around the conversion: from P / 2 to P + U, losses up to the highest after P.
        P = summary["settings"]["pretrain"]
        after = [p["loss"] for name, run in runs.items() if run.get("target", target) == target
                 for p in run["curve"] if p["updates"] >= P]
        axes[0][column].set_ylim(top=max(after) + 0.2)
        for ax in axes[:, column]:
            ax.set_xlim(left=P / 2)
    axes[1][-1].legend(fontsize=7)
    fig.suptitle("Bible ES-EN: softmax transformer converted at P and continued, against from scratch")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summarise(args) -> None:
    P, U = args.pretrain, args.continued
    runs = collect(args)
    conversions = [runs[f"{t.name}_s{s}"] for t in args.targets for s in args.seeds]
    continued = [p["updates"] for run in conversions for p in run["curve"] if p["updates"] > P]
    if not continued:
        die("no converted model has been continued yet: run the convert and uptrain stages first")
    missing = [name for name, run in runs.items() if not run["curve"]]
    if missing:
        log(f"no validation yet for {', '.join(missing)}: their cells are left empty ('-')")
    first = min(continued) - P
    stages = [json.loads(line) for line in _text(args.out / "stages.jsonl").splitlines() if line.strip()]

    summary = {
        "generator": GENERATOR,
        "settings": {"pretrain": P, "continue": U, "lr": args.lr, "warmup": args.warmup, "seeds": args.seeds,
                     "source": SOURCE.name,
                     "targets": {t.name: " ".join(attention_flags(t, args)) for t in args.targets},
                     "machine": cpu_model(), "threads": args.threads, "summary_commit": git_commit() or "unknown"},
        "stages": stages,
        "tables": {t.name: rows_for(runs, t.name, args.seeds, P, U, first) for t in args.targets},
        "recovery": {t.name: {str(s): recovery(runs, t.name, s, P) for s in args.seeds} for t in args.targets},
        "source_validate_check": {"validate": [runs[f"source_s{s}"]["validate_at_P"] for s in args.seeds],
                                  "log": [_loss(runs[f"source_s{s}"], P) for s in args.seeds]},
        "runs": runs,
    }
    target = args.summary_dir
    paths = {ext: target / f"mt.{ext}" for ext in ("json", "md", "png")}
    if paths["json"].exists() and json.loads(_text(paths["json"]) or "{}").get("generator") != GENERATOR:
        die(f"{paths['json']} was not written by this script; choose another --summary-dir")
    if args.dry_run:
        print(markdown(summary))
        return
    target.mkdir(parents=True, exist_ok=True)
    paths["json"].write_text(json.dumps(summary, indent=1) + "\n")
    paths["md"].write_text(markdown(summary))
    try:
        plot(paths["png"], summary)
    except ImportError:
        log("matplotlib is not installed: no PNG")
    print(paths["md"].read_text())
    log(f"wrote {', '.join(os.path.relpath(p) for p in paths.values())}")
