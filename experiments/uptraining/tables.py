"""The numbers the reports show, from the run records of ``logs``: the continued-training curves,
the comparison at equal total updates, the recovery, and the per-seed table with its mean and
spread; and their markdown.

Updates are counted in total (softmax pretraining included): a converted model at k continued
updates stands at P + k, so it lines up with the softmax model continued to P + k and with the
from-scratch models at P and P + U.
"""

import math
import statistics
from typing import Dict, List, Optional, Sequence

from . import settings as S

SPLITS = ("valid", "test")
LABEL = {"softmax": "softmax", "abc": "ABC-64", "gsa": "GSA-64"}


def ppl(run: Optional[dict], updates: int, split: str) -> Optional[float]:
    """A run's perplexity at ``updates`` (its own count) on ``split``, or None."""
    if run is None:
        return None
    return run["evals"].get(updates, {}).get(split, {}).get("ppl")


def spread(values: Sequence[float]) -> dict:
    """Mean, min, max, max - min and the sample standard deviation (n - 1; None for one value)."""
    values = list(values)
    if not values:
        return {"n": 0, "mean": None, "min": None, "max": None, "range": None, "std": None}
    return {"n": len(values), "mean": statistics.fmean(values), "min": min(values), "max": max(values),
            "range": max(values) - min(values), "std": statistics.stdev(values) if len(values) > 1 else None}


def index(runs: List[dict]) -> Dict[tuple, dict]:
    """Runs keyed by (kind, model, seed)."""
    return {(r["kind"], r["model"], r["seed"]): r for r in runs}


def curves(runs: List[dict], seeds: Sequence[int]) -> Dict[str, dict]:
    """Per curve (softmax continued, converted ABC, converted GSA) and seed: {total updates: {split:
    ppl}} from P to P + U, the converted models' 0 being their conversion before any update."""
    by = index(runs)
    out: Dict[str, dict] = {}
    points = range(0, S.CONTINUE_UPDATES + 1, S.EVAL_EVERY)
    for name, kind, model in (("softmax", "scratch", "softmax"), ("converted ABC-64", "converted", "abc"),
                              ("converted GSA-64", "converted", "gsa")):
        per_seed = {}
        for seed in seeds:
            run = by.get((kind, model, seed))
            per_seed[seed] = {S.PRETRAIN_UPDATES + k: {split: ppl(run, (S.PRETRAIN_UPDATES + k) if kind == "scratch"
                                                                 else k, split) for split in SPLITS} for k in points}
        out[name] = per_seed
    return out


def curve_mean(curve: Dict[int, dict], split: str) -> Dict[int, Optional[float]]:
    """The seeds' mean at each point where every seed has a value."""
    seeds = list(curve)
    out = {}
    for u in curve[seeds[0]] if seeds else []:
        values = [curve[s][u][split] for s in seeds]
        out[u] = statistics.fmean(values) if all(v is not None for v in values) else None
    return out


def endpoints(runs: List[dict], seeds: Sequence[int]) -> List[dict]:
    """Rows at equal total updates: softmax, converted and from-scratch ABC / GSA at P and P + U."""
    by = index(runs)
    P, F = S.PRETRAIN_UPDATES, S.PRETRAIN_UPDATES + S.CONTINUE_UPDATES
    rows = [("softmax, from scratch", "scratch", "softmax", P, P),
            ("softmax, from scratch", "scratch", "softmax", F, F)]
    for model in S.CONVERTED:
        rows += [(f"{LABEL[model]}, from scratch", "scratch", model, P, P),
                 (f"{LABEL[model]}, converted at {P} (0 continued)", "converted", model, 0, P),
                 (f"{LABEL[model]}, converted + {S.CONTINUE_UPDATES} continued", "converted", model,
                  S.CONTINUE_UPDATES, F),
                 (f"{LABEL[model]}, from scratch", "scratch", model, F, F)]
    out = []
    for label, kind, model, own, total in rows:
        entry = {"model": label, "kind": kind, "attention": model, "total_updates": total, "per_seed": {}}
        for split in SPLITS:
            values = {s: ppl(by.get((kind, model, s)), own, split) for s in seeds}
            entry["per_seed"][split] = values
            entry[split] = spread([v for v in values.values() if v is not None]) if all(
                v is not None for v in values.values()) else spread([])
        out.append(entry)
    return out


def recovery(runs: List[dict], seeds: Sequence[int], within: float = 0.05) -> List[dict]:
    """Per converted model and seed: its test perplexity right after conversion against its softmax
    source at P, and the first continued update (of those evaluated) at which it is within
    ``within`` of the source, or None."""
    by = index(runs)
    out = []
    for model in S.CONVERTED:
        for seed in seeds:
            source = ppl(by.get(("scratch", "softmax", seed)), S.PRETRAIN_UPDATES, "test")
            run = by.get(("converted", model, seed))
            if source is None or run is None:
                continue
            first = next((k for k in range(0, S.CONTINUE_UPDATES + 1, S.EVAL_EVERY)
                          if ppl(run, k, "test") is not None and ppl(run, k, "test") <= source * (1 + within)), None)
            complete = all(ppl(run, k, "test") is not None for k in range(0, S.CONTINUE_UPDATES + 1, S.EVAL_EVERY))
            out.append({"model": model, "seed": seed, "source_test_ppl": source, "at_0": ppl(run, 0, "test"),
                        "first_within": first, "within": within, "all_evaluated": complete})
    return out


def seeds_table(runs: List[dict], seeds: Sequence[int], updates: int = S.PRETRAIN_UPDATES) -> List[dict]:
    """Per model: valid and test perplexity at ``updates`` for each seed (from-scratch runs), with
    mean, min, max, range and standard deviation over the seeds that have it."""
    by = index(runs)
    out = []
    for model in S.MODELS:
        row = {"model": model, "updates": updates}
        for split in SPLITS:
            values = {s: ppl(by.get(("scratch", model, s)), updates, split) for s in seeds}
            row[split] = {"per_seed": values, **spread([v for v in values.values() if v is not None])}
        out.append(row)
    return out


# --- markdown ---------------------------------------------------------------------------------
def fmt(value: Optional[float], digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def curve_markdown(curve_set: Dict[str, dict], split: str) -> str:
    """One row per curve and seed (and the seeds' mean), one column per total update count."""
    names = list(curve_set)
    updates = sorted(next(iter(curve_set[names[0]].values()))) if names and curve_set[names[0]] else []
    lines = ["| model | seed | " + " | ".join(str(u) for u in updates) + " |",
             "|---|---|" + "---:|" * len(updates)]
    for name in names:
        for seed, points in curve_set[name].items():
            lines.append(f"| {name} | {seed} | " + " | ".join(fmt(points[u][split]) for u in updates) + " |")
        mean = curve_mean(curve_set[name], split)
        lines.append(f"| {name} | mean | " + " | ".join(fmt(mean[u]) for u in updates) + " |")
    return "\n".join(lines)


def endpoints_markdown(rows: List[dict], seeds: Sequence[int]) -> str:
    head = "| model | total updates | " + " | ".join(f"{sp} s{s}" for sp in SPLITS for s in seeds) + \
        " | valid mean | test mean |"
    lines = [head, "|---|---:|" + "---:|" * (len(seeds) * 2 + 2)]
    for row in rows:
        cells = [fmt(row["per_seed"][sp][s]) for sp in SPLITS for s in seeds]
        lines.append(f"| {row['model']} | {row['total_updates']} | " + " | ".join(cells)
                     + f" | {fmt(row['valid']['mean'])} | {fmt(row['test']['mean'])} |")
    return "\n".join(lines)


def seeds_markdown(rows: List[dict], seeds: Sequence[int]) -> str:
    lines = []
    for split in SPLITS:
        lines += [f"{split} perplexity at {rows[0]['updates'] if rows else S.PRETRAIN_UPDATES} updates:", "",
                  "| model | " + " | ".join(f"seed {s}" for s in seeds) + " | mean | min-max | range | std |",
                  "|---|" + "---:|" * (len(seeds) + 4)]
        for row in rows:
            cell = row[split]
            lines.append(f"| {LABEL[row['model']]} | " + " | ".join(fmt(cell["per_seed"][s]) for s in seeds)
                         + f" | {fmt(cell['mean'])} | {fmt(cell['min'])}-{fmt(cell['max'])} | {fmt(cell['range'])}"
                         f" | {fmt(cell['std'])} |")
        lines.append("")
    return "\n".join(lines)
