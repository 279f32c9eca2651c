"""The table and the catch-up figures of compare_bible.py's summary (standard library only)."""

from typing import Dict, List

from .training_curves import ValidPoint, first_update_reaching

GENERATOR = "experiments.bible_mt.compare_bible"
# The summaries in docs/mt_quality were written when the study lived in scripts/mt.
EARLIER_GENERATORS = ("scripts/mt/compare_bible.py",)
REPORT_UPDATES = (100, 200, 300, 400, 600, 800, 1000, 1200)


def catch_up(rows: Dict[str, dict], reference: str = "softmax") -> Dict[str, dict]:
    """For each model: the updates the reference needed to reach the model's final validation loss
    (the model's budget over that is how far it lags)."""
    ref = [ValidPoint(**p) for p in rows.get(reference, {}).get("curve", [])]
    out = {}
    for name, row in rows.items():
        if not row["curve"] or not ref:
            continue
        final = row["curve"][-1]["loss"]
        best = min(row["curve"], key=lambda p: p["loss"])
        out[name] = {"final_loss": final, f"{reference}_updates_to_reach_it": first_update_reaching(ref, final),
                     "best_loss": best["loss"], "best_at": best["updates"]}
    return out


def seed_means(rows: Dict[str, dict]) -> Dict[str, dict]:
    """For each variant trained with several seeds: the mean (and max - min spread) of its runs' BLEU
    and validation loss, at the budgets and updates every one of its runs has."""
    by_variant: Dict[str, List[str]] = {}
    for name, row in rows.items():
        by_variant.setdefault(row.get("variant", name), []).append(name)
    out = {}
    for variant, names in by_variant.items():
        if len(names) < 2:
            continue
        entry = {"runs": names, "seeds": [rows[n].get("seed") for n in names],
                 "updates": min(rows[n]["updates"] for n in names)}
        for key in ("bleu_at", "valid_loss_at"):
            common = [u for u in rows[names[0]][key] if all(rows[n][key].get(u) is not None for n in names)]
            values = {u: [rows[n][key][u] for n in names] for u in common}
            entry[key] = {u: sum(v) / len(v) for u, v in values.items()}
            entry[key.replace("_at", "_spread_at")] = {u: max(v) - min(v) for u, v in values.items()}
        out[variant] = entry
    return out


def _mean_row(variant: str, entry: dict, shown: List[int]) -> str:
    scores = ", ".join(f"{b:.2f} @{u} (seeds differ by {entry['bleu_spread_at'][u]:.2f})"
                       for u, b in entry["bleu_at"].items())
    cells = [f"{variant}, mean of seeds {', '.join(map(str, entry['seeds']))}", str(entry["updates"]), scores or "-"]
    cells += [f"{entry['valid_loss_at'][str(u)]:.3f}" if str(u) in entry["valid_loss_at"] else "-" for u in shown]
    cells += ["mean of " + ", ".join(entry["runs"])]
    return "| " + " | ".join(cells) + " |"


def markdown(rows: Dict[str, dict], summary: dict) -> str:
    shown = [u for u in REPORT_UPDATES if any(str(u) in r["valid_loss_at"] for r in rows.values())]
    head = ["model", "updates", "test BLEU"] + [f"valid loss @{u}" for u in shown] + ["what"]
    lines = [f"<!-- written by {GENERATOR}; rerun it to update -->",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, r in rows.items():
        scores = ", ".join(f"{b:.2f} @{u}" for u, b in r.get("bleu_at", {}).items() if b is not None)
        cells = [name, str(r["updates"]), scores or "-"]
        cells += [f"{r['valid_loss_at'][str(u)]:.3f}" if str(u) in r["valid_loss_at"] else "-" for u in shown]
        cells += [r["description"]]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [_mean_row(variant, entry, shown) for variant, entry in summary.get("seed_means", {}).items()]
    lines.append("")
    lines.append("valid loss: label-smoothed cross entropy in bits on the valid split (fairseq's log), linearly "
                 "interpolated between epoch ends. BLEU: SacreBLEU on the test split, checkpoint_last.pt, beam 5, "
                 "length penalty 0.6.")
    for name, c in summary["catch_up"].items():
        ref_updates = c["softmax_updates_to_reach_it"]
        lines.append(f"- {name} ({rows[name]['updates']} updates): final valid loss {c['final_loss']:.3f} (softmax "
                     f"reached it after {ref_updates if ref_updates is not None else 'more than its budget of'} "
                     f"updates); best {c['best_loss']:.3f} after {c['best_at']}")
    return "\n".join(lines) + "\n"
