"""Write the attention-transfer evidence (docs/uptraining/transfer_results.{md,json,png}) from the
run folders of ``python -m experiments.transfer.run``.

    python -m experiments.transfer.report --root /path/to/runs

Test perplexity after k = 0, 25, 50 and 100 continued updates of every converted variant (ABC-64
and GSA-64 with and without transfer, window 64 + 4 sinks), of the softmax source continued, and of
ABC-64 / GSA-64 from scratch at equal updates (P + k) and at equal tokens (P + K + k: the transfer
stage's tokens counted); the gap to the source before any update; the targets of issue 46 checked
seed by seed; the transfer stage's tokens and wall time beside an LM update's. Only what the logs
hold is written (a missing evaluation shows as n/a). It replaces only files it wrote.
"""

import argparse
import json
import os
import shlex
import statistics
import sys
from typing import Dict, List, Optional, Sequence

from experiments.uptraining import logs
from experiments.uptraining.report import portable
from experiments.uptraining.run import REPO, _seeds

from . import settings as S

MARK = "experiments.transfer.report"
WITHIN = 0.03  # issue 46: transferred models start within 3% of the source's test perplexity
LABEL = {"softmax": "softmax source, continued", "abc": "ABC-64 converted", "abc_transfer": "ABC-64 transferred",
         "gsa": "GSA-64 converted", "gsa_transfer": "GSA-64 transferred",
         "window_sink": f"window {S.SINK_WINDOW} + {S.SINK_TOKENS} sinks (no training)",
         "scratch_abc": "ABC-64 from scratch, equal updates", "scratch_abc_tokens": "ABC-64 from scratch, equal tokens",
         "scratch_gsa": "GSA-64 from scratch, equal updates", "scratch_gsa_tokens": "GSA-64 from scratch, equal tokens"}


def test_ppl(root: str, run: str, label: str) -> Optional[float]:
    """The perplexity in runs/RUN/eval/LABEL_test.log, or None while it is missing."""
    text = logs.read(os.path.join(root, "runs", run, "eval", f"{label}_test.log"))
    return logs.last(r"Perplexity: ([\d.]+)", text, float)


def series(root: str, seed: int) -> Dict[str, Dict[int, Optional[float]]]:
    """Per row of the table, test perplexity by continued updates k (CURVE)."""
    P, K = S.PRETRAIN_UPDATES, S.TRANSFER_UPDATES
    out = {"softmax": {k: test_ppl(root, S.scratch_name("softmax", seed), f"u{P + k}") for k in S.CURVE}}
    for variant, spec in S.VARIANTS.items():
        run = S.converted_name(variant, seed)
        start = "transferred" if spec["transfer"] else "converted"
        out[variant] = {k: test_ppl(root, run, f"u{k}" if k else start) for k in S.CURVE}
    for model in S.SCRATCH:
        run = S.scratch_name(model, seed)
        out[f"scratch_{model}"] = {k: test_ppl(root, run, f"u{P + k}") for k in S.CURVE}
        out[f"scratch_{model}_tokens"] = {k: test_ppl(root, run, f"u{P + K + k}") for k in S.CURVE}
    return out


def start_gaps(root: str, seed: int) -> List[dict]:
    """Before any LM update: each converted model's test perplexity against the source's (at P),
    for the transfer variants before and after the transfer stage."""
    source = test_ppl(root, S.scratch_name("softmax", seed), f"u{S.PRETRAIN_UPDATES}")
    rows = []
    for variant, spec in S.VARIANTS.items():
        run = S.converted_name(variant, seed)
        stages = ("converted", "transferred", f"transferred_{S.LONG_TRANSFER_UPDATES}") if spec["transfer"] else (
            "converted",)
        for label in stages:
            value = test_ppl(root, run, label)
            gap = None if value is None or source is None else value / source - 1
            rows.append({"variant": variant, "seed": seed, "stage": label, "source": source, "ppl": value, "gap": gap})
    return rows


def targets(per_seed: Dict[int, dict], gaps: List[dict]) -> List[dict]:
    """Issue 46's targets, per model and seed: the transferred model starts within 3% of the source,
    and beats the conversion without transfer at every k."""
    out = []
    for model in ("abc", "gsa"):
        for seed, rows in per_seed.items():
            gap = next((g["gap"] for g in gaps if g["variant"] == f"{model}_transfer" and g["seed"] == seed
                        and g["stage"] == "transferred"), None)
            pairs = {k: (rows[f"{model}_transfer"][k], rows[model][k]) for k in S.CURVE}
            losing = [k for k, (t, c) in pairs.items() if t is not None and c is not None and t >= c]
            missing = [k for k, (t, c) in pairs.items() if t is None or c is None]
            out.append({"model": model, "seed": seed, "start_gap": gap,
                        "within": None if gap is None else gap <= WITHIN,
                        "beats_at_every_k": None if missing else not losing, "not_beaten_at": losing,
                        "missing_k": missing})
    return out


def transfer_costs(root: str, steps: List[dict]) -> List[dict]:
    """Per transfer step: its updates and tokens (the stage's own log line: counted from the start,
    across a resumption), its wall seconds (the driver's record: this step's own, the longer
    transfer's only the updates it added), and an LM update's seconds in the same run's continued
    training. ``steps``: the driver's step records (``logs.steps``)."""
    out = []
    for step in steps:
        if step["kind"] != "transfer" or step["status"] != "ok":
            continue
        folder = os.path.join(root, "runs", step["run"])
        text = logs.read(os.path.join(folder, S.transfer_log(step.get("updates") or S.TRANSFER_UPDATES)))
        uptrain = next((s for s in steps if s["kind"] == "uptrain" and s["run"] == step["run"] and s["status"] == "ok"),
                       None)
        out.append({"run": step["run"], "seed": step["seed"], "seconds": step["seconds"],
                    "tokens": logs.last(r"wrote .*: \d+ updates, (\d+) tokens", text, int),
                    "updates": logs.last(r"wrote .*: (\d+) updates, \d+ tokens", text, int),
                    "lm_update_seconds": uptrain["seconds"] / S.CONTINUE_UPDATES if uptrain else None})
    return out


def _mean(values: Sequence[Optional[float]]) -> Optional[float]:
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def fmt(value: Optional[float], digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def record(root: str, seeds: Sequence[int]) -> dict:
    per_seed = {seed: series(root, seed) for seed in seeds}
    gaps = [g for seed in seeds for g in start_gaps(root, seed)]
    runs = sorted(os.listdir(os.path.join(root, "runs")))
    commits = sorted({logs.read(os.path.join(root, "runs", r, "commit")) for r in runs} - {""})
    code_dirs = sorted({logs.read(os.path.join(root, "runs", r, "code_dir")) for r in runs} - {""})
    steps = logs.steps(root)
    loads = [s["load_before"][0] for s in steps] + [s["load_after"][0] for s in steps]
    commands, seen = [], set()
    for step in steps:
        key = (step["kind"], step["run"].split("_s")[0])
        if step["seed"] == seeds[0] and step["status"] == "ok" and key not in seen:
            seen.add(key)
            commands.append(portable(shlex.join(step["command"]), root, code_dirs))
    sys.path.insert(0, REPO)
    from benchmarks.environment import cpu_model

    return {"written_by": MARK,
            "setting": {"pretrain_updates": S.PRETRAIN_UPDATES, "continue_updates": S.CONTINUE_UPDATES,
                        "transfer_updates": S.TRANSFER_UPDATES, "transfer_lr": S.TRANSFER_LR,
                        "transfer_max_tokens": S.TRANSFER_MAX_TOKENS, "memory": S.MEMORY,
                        "sink_window": S.SINK_WINDOW, "sink_tokens": S.SINK_TOKENS, "curve": list(S.CURVE)},
            "seeds": list(seeds),
            "test_ppl": {str(seed): {row: {str(k): v for k, v in pts.items()} for row, pts in rows.items()}
                         for seed, rows in per_seed.items()},
            "mean": {row: {str(k): _mean([per_seed[s][row][k] for s in seeds]) for k in S.CURVE}
                     for row in LABEL},
            "start_gaps": gaps, "targets": targets(per_seed, gaps), "transfer_costs": transfer_costs(root, steps),
            "provenance": {"cpu_model": cpu_model(), "commits": commits,
                           "threads": max((s["threads"] for s in steps), default=None),
                           "load_1min": {"min": min(loads), "max": max(loads)} if loads else None,
                           "first_step": steps[0]["started"] if steps else None,
                           "last_step": steps[-1]["started"] if steps else None},
            "commands": commands}


def markdown(rec: dict) -> str:
    seeds, curve = rec["seeds"], rec["setting"]["curve"]
    P, K = rec["setting"]["pretrain_updates"], rec["setting"]["transfer_updates"]
    lines = [f"# Attention transfer on a well-trained source: results (generated by {MARK})", "",
             f"Test perplexity after k continued updates (softmax source trained {P} updates; transfer {K} updates "
             f"of {rec['setting']['transfer_max_tokens']} tokens; from scratch at {P} + k updates (equal updates) "
             f"and {P} + {K} + k (equal tokens with the transferred models)):", "",
             "| model | seed | " + " | ".join(f"k = {k}" for k in curve) + " |", "|---|---|" + "---:|" * len(curve)]
    for row, label in LABEL.items():
        for seed in seeds:
            pts = rec["test_ppl"][str(seed)][row]
            lines.append(f"| {label} | {seed} | " + " | ".join(fmt(pts[str(k)]) for k in curve) + " |")
        lines.append(f"| {label} | mean | " + " | ".join(fmt(rec["mean"][row][str(k)]) for k in curve) + " |")
    lines += ["", "Before any LM update, against the source's test perplexity:", "",
              "| model | seed | stage | source | model | gap |", "|---|---:|---|---:|---:|---:|"]
    for g in rec["start_gaps"]:
        gap = "n/a" if g["gap"] is None else f"{100 * g['gap']:+.1f}%"
        lines.append(f"| {LABEL[g['variant']].split(' (')[0]} | {g['seed']} | {g['stage']} | {fmt(g['source'])} | "
                     f"{fmt(g['ppl'])} | {gap} |")
    lines += ["", f"Targets (issue 46): transferred within {100 * WITHIN:.0f}% of the source before any update, and "
              "below the conversion without transfer at every k:", "",
              "| model | seed | start gap | within | beats no-transfer at every k | not beaten at k |",
              "|---|---:|---:|---|---|---|"]
    yes = {True: "yes", False: "**no**", None: "n/a"}
    for t in rec["targets"]:
        gap = "n/a" if t["start_gap"] is None else f"{100 * t['start_gap']:+.1f}%"
        lines.append(f"| {t['model'].upper()}-64 | {t['seed']} | {gap} | {yes[t['within']]} | "
                     f"{yes[t['beats_at_every_k']]} | {', '.join(map(str, t['not_beaten_at'])) or '-'} |")
    lines += ["", "The transfer stage's cost (tokens counted in the equal-tokens comparison above; the longer "
              "transfer resumes the first, so its wall time is that of the updates it added):", "",
              "| run | seed | updates | tokens | wall s | LM update s (its continued training) | "
              "in LM updates of wall time |", "|---|---:|---:|---:|---:|---:|---:|"]
    for c in rec["transfer_costs"]:
        equiv = (c["seconds"] / c["lm_update_seconds"]) if c["lm_update_seconds"] else None
        lines.append(f"| {c['run']} | {c['seed']} | {c['updates']} | {c['tokens']} | {c['seconds']:.0f} | "
                     f"{fmt(c['lm_update_seconds'])} | {fmt(equiv, 0)} |")
    prov = rec["provenance"]
    load = prov["load_1min"]
    load_text = f"; 1-minute load average {load['min']:.2f}-{load['max']:.2f}" if load else ""
    lines += ["", f"Machine: {prov['cpu_model']}, {prov['threads']} thread(s) per step, two drivers at once (one per "
              f"seed){load_text}.",
              f"Commits: {', '.join(prov['commits']) or 'n/a'}; steps from {prov['first_step']} to "
              f"{prov['last_step']}.",
              "", "Commands of seed " + str(seeds[0]) + ", one per kind of step and run (the other seed differs in "
              "--seed and folder names):", ""] + ["    " + c for c in rec["commands"]] + [""]
    return "\n".join(lines)


def plot(rec: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"softmax": ("tab:gray", "-"), "abc": ("tab:blue", ":"), "abc_transfer": ("tab:blue", "-"),
              "gsa": ("tab:green", ":"), "gsa_transfer": ("tab:green", "-"), "window_sink": ("tab:red", "-"),
              "scratch_abc_tokens": ("tab:blue", "--"), "scratch_gsa_tokens": ("tab:green", "--")}
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    curve = rec["setting"]["curve"]
    for row, (colour, line) in styles.items():
        for seed in rec["seeds"]:
            pts = rec["test_ppl"][str(seed)][row]
            xs = [k for k in curve if pts[str(k)] is not None]
            ax.plot(xs, [pts[str(k)] for k in xs], color=colour, ls=line, alpha=0.3, lw=1)
        mean = rec["mean"][row]
        xs = [k for k in curve if mean[str(k)] is not None]
        ax.plot(xs, [mean[str(k)] for k in xs], color=colour, ls=line, lw=2, marker="o", label=LABEL[row])
    ax.set_yscale("log")
    ax.set_xlabel("continued LM updates k")
    ax.set_ylabel("test perplexity (log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    ax.set_title(f"softmax at {rec['setting']['pretrain_updates']} updates converted; mean of seeds (faint: each seed)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.transfer.report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", required=True, help="the --root of python -m experiments.transfer.run")
    p.add_argument("--seeds", type=_seeds, default=[1, 2], help="seeds (default: 1,2)")
    p.add_argument("--out", default=os.path.join(REPO, "docs", "uptraining"),
                   help="folder of transfer_results.{md,json,png} (default: docs/uptraining)")
    args = p.parse_args(argv)
    if not os.path.isdir(os.path.join(args.root, "runs")):
        p.error(f"--root: {args.root} holds no runs/ folder (python -m experiments.transfer.run writes it)")
    if not args.seeds:
        p.error("--seeds: give at least one seed")
    paths = {ext: os.path.join(args.out, f"transfer_results.{ext}") for ext in ("json", "md", "png")}
    if any(os.path.exists(path) for path in paths.values()) and MARK not in logs.read(paths["json"]):
        p.error(f"{args.out}: transfer_results.* exist and were not written by {MARK}; choose another --out")
    rec = record(args.root, args.seeds)
    os.makedirs(args.out, exist_ok=True)
    with open(paths["json"], "w", encoding="utf-8") as handle:
        json.dump(rec, handle, indent=1)
    with open(paths["md"], "w", encoding="utf-8") as handle:
        handle.write(markdown(rec))
    plot(rec, paths["png"])
    print(f"wrote {args.out}/transfer_results.{{json,md,png}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
