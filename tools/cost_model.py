"""A cost model of causal attention on a GPU (ours on the Triton kernels, fla's ``chunk_abc``, flash
attention; forward + backward, and greedy decoding steps), calibrated by least squares on the
H100's saved timings.

    python -m tools.cost_model                      # -> docs/gpu_cost/model.{md,json}
    python -m tools.cost_model --out-dir DIR --results docs/benchmarks/h100 --overwrite

Every op on a method's path is counted, PyTorch glue and the timing harness's own ops included
(``tools.causal_cost`` for ours, ``fla_launches`` and ``flash_launches`` in ``tools.cost_launches``,
``decode_ops`` there for a decoding step): its PyTorch ops and Triton launches, the dependent steps
of a sequential loop (a PyTorch scan over N is N steps: ``torch.logcumsumexp`` scans a middle
dimension with one thread per (sequence, slot); a kernel's loop over chunks is one step per group
of chunks it loads at once), the bytes it moves and its products. A timed call then takes, linear in six constants,

    t = call + op * (PyTorch ops) + triton * (Triton launches) + step * (dependent steps)
        + us_per_MB * MB + us_per_flash_TFLOP * (flash attention's TFLOP) + fixed

where ``fixed`` is not fitted: tensor-core products at half the dense peak of their operand type
(a few percent of any saved row) and a kernel scan step's bytes at one SM's share of the L2 (64 B
a cycle). The terms add up: host time (ops, launches) and device time are not overlapped, so a
call whose device work hides under its host work (SDPA at small sizes) is over-predicted and
flash's fitted throughput absorbs the difference. The constants are fitted on the saved rows
(``selfcheck.json``: ours and SDPA; ``attention_fp16_partial.json``: ours and SDPA;
``decode.json``: softmax and ABC decoding steps) by least squares on the relative error with
every constant >= 0, and checked by leave-one-out (fit without row i, predict row i). fla's
saved rows timed another problem (its [B, T, H, *] inputs given as [B, H, T, *]: B * N sequences
of H = 4 tokens); they are not fitted, only set beside the model of that problem. The PyTorch
path's rows are not modelled (not the kernels' path).

Writes model.md and model.json (commit, command, constants, fit and leave-one-out tables, the
predictions at three sizes); existing files are kept unless ``--overwrite``. The terms and the H100's
constants live in ``tools.cost_terms``, the launches in ``tools.cost_launches``, the saved rows and
the fit in ``tools.cost_fit``; this module predicts, reports and holds the command line.
"""

import argparse
import datetime
import json
import os
import shlex
import sys
from typing import List, Optional, Sequence, Tuple

from .causal_cost import F, Launch
from .cost_fit import Row, calibrate, design, fit, leave_one_out, saved_rows
from .cost_launches import (
    decode_ops,
    decode_step,
    fla,
    fla_launches,
    flash,
    flash_launches,
    harness_launches,
    ours,
    two_launch_floor,
)
from .cost_terms import (
    CONSTANTS,
    H100,
    H100_CHUNK,
    H100_RUN_DECODE_COUNTS,
    MAC_EFFICIENCY,
    SM_BYTES_PER_US,
    STEP_SPLITS,
    UNITS,
    Cost,
    breakdown,
    features,
    predict,
)

# Importers (the tests) take every part of the model from here.
__all__ = ["CONSTANTS", "H100", "H100_CHUNK", "H100_RUN_DECODE_COUNTS", "MAC_EFFICIENCY", "SM_BYTES_PER_US",
           "STEP_SPLITS", "UNITS", "Cost",
           "F", "Launch", "Row", "breakdown", "calibrate", "decode_ops", "decode_step", "design", "features", "fit",
           "fla", "fla_launches", "flash", "flash_launches", "harness_launches", "leave_one_out", "ours", "predict",
           "two_launch_floor",
           "saved_rows", "predictions", "flatness", "decoding", "report", "markdown", "main"]

RESULTS = os.path.join("docs", "benchmarks", "h100")
OUT_DIR = os.path.join("docs", "gpu_cost")

# ---- predictions ----

SIZES = ((8192, 4), (2048, 32), (512, 512))  # (N, sequence-heads Z)
CHUNKS = (16, 32, 64)
# issue 44's "flat per token from 2,048 to 16,384": two series, the attention suite's budget
# (32,768 tokens x 8 heads, sequence-heads = budget / N, as the H200 run timed it) and few
# sequence-heads (4 at every N, where the per-call floor is spread over the fewest tokens)
FLAT_LENGTHS = (2048, 4096, 8192, 16384)
SUITE_BUDGET, FEW_SEQUENCE_HEADS = 32768 * 8, 4


def predictions(constants: Sequence[float], steps: str = "both", d: int = 64, n: int = 64, P: int = 2) -> List[dict]:
    """Ours (the current kernels, normalisers chunk by chunk, at each chunk the launcher may take:
    it measures and keeps the fastest; and with the previous PyTorch logcumsumexp), the H100 run's
    code at C = 16, fla called correctly and flash attention, each inside the attention suite's
    harness, d = n = 64, fp16."""
    out = []
    for N, Z in SIZES:
        row = dict(N=N, Z=Z, tokens=N * Z)
        for C in CHUNKS:
            row[f"ours_C{C}_us"] = predict(ours(Z, N, d, n, C, P, "attention"), constants, steps)
        row["ours_us"] = min(row[f"ours_C{C}_us"] for C in CHUNKS)
        previous = {C: ours(Z, N, d, n, C, P, "attention", normaliser="logcumsumexp") for C in CHUNKS}
        previous_C = min(CHUNKS, key=lambda C: predict(previous[C], constants, steps))
        row["ours_logcumsumexp_us"] = predict(previous[previous_C], constants, steps)
        row["ours_logcumsumexp_C"] = previous_C
        row["ours_h100_code_us"] = predict(ours(Z, N, d, n, H100_CHUNK, P, "attention", split_columns=False,
                                                normaliser="logcumsumexp", grouped_scan=False),
                                           constants, steps)
        logcum = next(x for x in breakdown(previous[previous_C], constants, steps)
                      if x["name"] == "PyTorch: logcumsumexp")
        row["ours_logcumsumexp_scan_us"] = logcum["us"]
        row["fla_us"] = predict(fla(1, N, Z, d, n, P, "attention"), constants, steps)
        row["flash_us"] = predict(flash(Z, N, d, P, "attention"), constants, steps)
        row["two_launch_floor_us"] = predict(two_launch_floor(Z, N, d, n, P, "attention"), constants, steps)
        best = min(CHUNKS, key=lambda C: row[f"ours_C{C}_us"])
        for name, cost in (("ours", ours(Z, N, d, n, best, P, "attention")),
                           ("fla", fla(1, N, Z, d, n, P, "attention")), ("flash", flash(Z, N, d, P, "attention"))):
            counts = features(cost)[0]
            row[f"{name}_counts"] = dict(pytorch_ops=int(counts[1]), triton_launches=int(counts[2]),
                                         dependent_steps=int(counts[3]), MB=float(counts[4]))
        out.append(row)
    return out


def flatness(constants: Sequence[float], d: int = 64, n: int = 64, P: int = 2) -> List[dict]:
    """Ours (at the launcher's best chunk) and flash attention per sequence-head token at each of
    ``FLAT_LENGTHS``, in both series: ``series`` "suite" (Z = SUITE_BUDGET / N) or "few"
    (Z = FEW_SEQUENCE_HEADS)."""
    out = []
    for series in ("suite", "few"):
        for N in FLAT_LENGTHS:
            Z = SUITE_BUDGET // N if series == "suite" else FEW_SEQUENCE_HEADS
            ours_us = min(predict(ours(Z, N, d, n, C, P, "attention"), constants) for C in CHUNKS)
            flash_us = predict(flash(Z, N, d, P, "attention"), constants)
            out.append(dict(series=series, N=N, Z=Z, ours_us=ours_us, ours_ns_per_token=1e3 * ours_us / (N * Z),
                            flash_us=flash_us, flash_ns_per_token=1e3 * flash_us / (N * Z)))
    return out


# ---- the report ----

def _pct(x: float) -> str:
    return f"{100 * x:+.0f}%"


def report(results: str, command: str) -> Tuple[dict, str]:
    """(model.json's record, model.md's text) from the saved rows under ``results``."""
    rows = saved_rows(results)
    main_fit = calibrate(rows)
    constants = [main_fit["constants"][name] for name in CONSTANTS]
    side = [dict(source=row.source, method=row.method, size=row.size, dtype=row.dtype, measured_us=row.measured_us,
                 predicted_us=predict(row.cost, constants)) for row in rows if not row.fitted]
    extremes = {}
    for steps in STEP_SPLITS[1:]:
        other = calibrate(rows, steps)
        other_constants = [other["constants"][name] for name in CONSTANTS]
        extremes[steps] = dict(constants=other["constants"], fit_error=other["fit_error"],
                               leave_one_out_error=other["leave_one_out_error"],
                               predictions=predictions(other_constants, steps))
    from benchmarks.environment import git_commit

    record = dict(
        command=command, commit=git_commit(),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        results=results,
        device=dict(H100, mac_efficiency=MAC_EFFICIENCY, sm_bytes_per_us=SM_BYTES_PER_US,
                    chunk_of_saved_rows=H100_CHUNK),
        **main_fit, not_fitted=side, predictions=predictions(constants), flatness=flatness(constants),
        breakdown_h100_8192=breakdown(ours(4, 8192, 64, 64, H100_CHUNK, 2, "selfcheck", F, False, "logcumsumexp",
                                           grouped_scan=False), constants),
        step_extremes=extremes, **decoding(results, constants))
    return record, markdown(record)


def decoding(results: str, constants: Sequence[float]) -> dict:
    """The saved run's greedy decoding steps (``decode.json``) and the model of each: with the
    run's code's counts (``H100_RUN_DECODE_COUNTS``, the fitted rows) and with the current code's
    (``decode_ops``, counted now), as ABC's speed against softmax's."""
    with open(os.path.join(results, "decode.json")) as f:
        saved = json.load(f)
    config = saved["config"]
    steps = {(r["method"], r["N"]): r for r in saved["results"]
             if r["status"] == "ok" and r["method"] in H100_RUN_DECODE_COUNTS}
    # counted only for a run with steps (each count builds a model)
    counts = {method: decode_ops(method, config) for method in sorted({method for method, _ in steps})}
    table = []
    for N in sorted({N for _, N in steps}):
        if ("softmax", N) not in steps or ("abc", N) not in steps:
            continue
        soft, abc = steps[("softmax", N)], steps[("abc", N)]
        model = {code: {method: predict(decode_step(method, config, steps[(method, N)], per_code[method]), constants)
                        for method in counts}
                 for code, per_code in (("run", H100_RUN_DECODE_COUNTS), ("current", counts))}
        table.append(dict(N=N, measured_speed=soft["ms_per_step"] / abc["ms_per_step"],
                          model_speed_run_code=model["run"]["softmax"] / model["run"]["abc"],
                          model_speed_current_code=model["current"]["softmax"] / model["current"]["abc"],
                          model_us_current_code=model["current"]))
    as_dict = lambda c: {m: dict(pytorch_ops=ops, triton_launches=t) for m, (ops, t) in c.items()}  # noqa: E731
    run_counts = {method: H100_RUN_DECODE_COUNTS[method] for method in counts}
    return dict(decode_ops_per_step=as_dict(counts), decode_ops_per_step_h100_run=as_dict(run_counts),
                decode_speed=table)


def markdown(record: dict) -> str:
    c = record["constants"]
    bandwidth = 1 / c["us_per_MB"] if c["us_per_MB"] else float("inf")  # MB / us = TB / s
    flash_rate = 1e6 / c["us_per_flash_TFLOP"] if c["us_per_flash_TFLOP"] else float("inf")
    lines = [
        "# Causal attention on the H100 (forward + backward, decoding steps): the calibrated cost model", "",
        f"`{record['command']}` at commit `{record['commit']}`, {record['date']}; saved timings: "
        f"`{record['results']}` (one H100 80GB HBM3, Triton 3.6, commit f36c261; every causal row at C = "
        f"{record['device']['chunk_of_saved_rows']}). The model and its assumptions: `tools/cost_model.py`.", "",
        "## Constants (least squares on the relative error, all >= 0)", "",
        "| constant | value | meaning |", "|---|---:|---|"]
    for name in CONSTANTS:
        lines.append(f"| `{name}` | {c[name]:.4g} | {UNITS[name]} |")
    lines += ["", f"Achieved bandwidth {bandwidth:.2f} TB/s (peak 3.35); flash attention {flash_rate:.0f} TFLOP/s "
              f"(dense fp16 peak 989). Not fitted: products at {MAC_EFFICIENCY:.0%} of the dense peak of their "
              f"operand type, a kernel scan step's bytes at {SM_BYTES_PER_US / 1e3:.0f} GB/s (one SM).", "",
              "## Every saved row used: predicted against measured", "",
              f"Fit: median |error| {record['fit_error']['median']:.0%}, max {record['fit_error']['max']:.0%}. "
              f"Leave-one-out (fit without the row, predict it): median {record['leave_one_out_error']['median']:.0%}, "
              f"max {record['leave_one_out_error']['max']:.0%}.", "",
              "| file | method | size | dtype | measured ms | model ms | error | leave-one-out ms | error |",
              "|---|---|---|---|---:|---:|---:|---:|---:|"]
    for r in record["fit"]:
        lines.append(f"| {r['source']} | {r['method']} | {r['size']} | {r['dtype']} | {r['measured_us'] / 1e3:.2f} | "
                     f"{r['predicted_us'] / 1e3:.2f} | {_pct(r['error'])} | {r['loo_us'] / 1e3:.2f} | "
                     f"{_pct(r['loo_error'])} |")
    lines += ["", "Not fitted: fla's saved rows timed another problem (inputs [B, H, N, *] read as [B, T, H, *]); "
              "the model of that problem, for comparison only:", "",
              "| file | size | dtype | measured ms | model ms |", "|---|---|---|---:|---:|"]
    for r in record["not_fitted"]:
        lines.append(f"| {r['source']} | {r['size']} | {r['dtype']} | {r['measured_us'] / 1e3:.2f} | "
                     f"{r['predicted_us'] / 1e3:.2f} |")
    lines += ["", "## Where the H100 run's 6.10 ms went (N = 8,192, 4 sequence-heads, d = n = 64, fp16, C = 16)", "",
              "| op | launches | dependent steps | MB | model us |", "|---|---:|---:|---:|---:|"]
    for b in record["breakdown_h100_8192"]:
        lines.append(f"| {b['name']} | {b['launches']} | {b['steps']:,} | {b['MB']:,.0f} | {b['us']:,.0f} |")
    lines.append(f"| per call | | | | {c['call_us']:,.0f} |")
    if record["decode_ops_per_step"]:
        counts = lambda per: ", ".join(f"{method} {c['pytorch_ops']} PyTorch ops + {c['triton_launches']} "  # noqa
                                       f"Triton launches" for method, c in per.items())
        lines += ["", "## Decoding at batch 16 (`decode.json`: greedy, WMT-base sizes, fp16)", "",
                  "A step of the run's code (f36c261; the fitted rows above): "
                  f"{counts(record['decode_ops_per_step_h100_run'])}. "
                  f"Of the current code, counted on CPU by `decode_ops` (what runs on the kernels on CUDA counted as "
                  f"one launch): {counts(record['decode_ops_per_step'])}. As speed against softmax:", "",
                  "| N | ABC / softmax, measured | model, the run's code | model, the current code |",
                  "|---:|---:|---:|---:|"]
        for r in record["decode_speed"]:
            lines.append(f"| {r['N']:,} | {r['measured_speed']:.2f}x | {r['model_speed_run_code']:.2f}x | "
                         f"{r['model_speed_current_code']:.2f}x |")
    lines += ["", "## Predictions (d = n = 64, fp16, forward + backward, the attention suite's harness)", "",
              prediction_table(record["predictions"]), "",
              "*Two-launch floor*: the least any design with one Triton launch forward and one backward could "
              "take under these constants (`two_launch_floor`: each launch moves only its inputs and outputs, "
              "products free, no PyTorch op of its own): the per-call and per-launch host terms fitted on the "
              "H100 run bound every causal kernel design from below.", "",
              "What each does per call (ours at its best chunk):", "",
              "| N | sequence-heads | method | PyTorch ops | Triton launches | dependent steps | MB |",
              "|---:|---:|---|---:|---:|---:|---:|"]
    for p in record["predictions"]:
        for name in ("ours", "fla", "flash"):
            k = p[f"{name}_counts"]
            lines.append(f"| {p['N']:,} | {p['Z']} | {name} | {k['pytorch_ops']} | {k['triton_launches']} | "
                         f"{k['dependent_steps']:,} | {k['MB']:,.0f} |")
    lines += ["", "## Per token as N grows (issue 44: flat from 2,048 to 16,384)", "",
              "Forward + backward per sequence-head token, d = n = 64, fp16, ours at its best chunk. *suite*: the "
              "attention suite's budget, 32,768 tokens x 8 heads at every N; *few*: 4 sequence-heads at every N.", "",
              "| series | N | sequence-heads | ours ms | ours ns per token | flash ms | flash ns per token |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for r in record["flatness"]:
        lines.append(f"| {r['series']} | {r['N']:,} | {r['Z']} | {r['ours_us'] / 1e3:.2f} | "
                     f"{r['ours_ns_per_token']:.1f} | {r['flash_us'] / 1e3:.2f} | {r['flash_ns_per_token']:.1f} |")
    lines += ["",
              "The saved rows cannot tell a PyTorch scan step from a kernel's chunk step (every row ran at C = 16: "
              "2 N / 16 kernel steps beside N PyTorch steps). The model prices both alike; fitted with only one "
              "kind waiting, the fit and the predictions become:", ""]
    for steps, other in record["step_extremes"].items():
        who = "only PyTorch scan steps wait" if steps == "torch" else "only the kernels' chunk steps wait"
        lines += [f"**{who}**: `step_us` = {other['constants']['step_us']:.3g}, fit median |error| "
                  f"{other['fit_error']['median']:.0%} (max {other['fit_error']['max']:.0%}), leave-one-out median "
                  f"{other['leave_one_out_error']['median']:.0%} (max {other['leave_one_out_error']['max']:.0%}).", "",
                  prediction_table(other["predictions"]), ""]
    return "\n".join(lines)


def prediction_table(preds: List[dict]) -> str:
    lines = ["| N | sequence-heads | ours (best C) | C = 16 / 32 / 64 | ours, previous logcumsumexp (best C) | "
             "of which the logcumsumexp | H100 run's code (C = 16) | fla chunk_abc | flash attention | "
             "two-launch floor |",
             "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for p in preds:
        chunks = " / ".join(f"{p[f'ours_C{C}_us'] / 1e3:.2f}" for C in CHUNKS)
        lines.append(f"| {p['N']:,} | {p['Z']} | {p['ours_us'] / 1e3:.2f} ms | {chunks} | "
                     f"{p['ours_logcumsumexp_us'] / 1e3:.2f} (C = {p['ours_logcumsumexp_C']}) | "
                     f"{p['ours_logcumsumexp_scan_us'] / 1e3:.2f} | {p['ours_h100_code_us'] / 1e3:.2f} | "
                     f"{p['fla_us'] / 1e3:.2f} | {p['flash_us'] / 1e3:.2f} | "
                     f"{p['two_launch_floor_us'] / 1e3:.2f} |")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.cost_model", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=RESULTS,
                        help="folder of the saved H100 timings (selfcheck.json, attention_fp16_partial.json, "
                             "decode.json; default: %(default)s)")
    parser.add_argument("--out-dir", default=OUT_DIR, help="folder for model.{md,json} (default: %(default)s)")
    parser.add_argument("--overwrite", action="store_true", help="replace model.{md,json} already in --out-dir")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    for name in ("selfcheck.json", "attention_fp16_partial.json", "decode.json"):
        if not os.path.isfile(os.path.join(args.results, name)):
            parser.error(f"--results {args.results} has no {name}")
    paths = [os.path.join(args.out_dir, f"model.{ext}") for ext in ("json", "md")]
    if not args.overwrite and any(os.path.exists(p) for p in paths):
        parser.error(f"--out-dir {args.out_dir} already holds model.json / model.md: pass --overwrite or name "
                     "another folder")
    command = shlex.join(["python", "-m", "tools.cost_model", *(sys.argv[1:] if argv is None else argv)])
    record, text = report(args.results, command)
    os.makedirs(args.out_dir, exist_ok=True)
    with open(paths[0], "w") as f:
        json.dump(record, f, indent=1)
    with open(paths[1], "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {paths[0]} and {paths[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
