"""``attention`` suite: forward+backward time and peak memory of causal attention.

Compares ABC (``abc_fairseq.ops.causal_abc``, with its ``auto`` and ``torch`` backends) with
torch's fused SDPA, fairseq's MultiheadAttention and flash-linear-attention's ``chunk_abc`` over
sequence lengths N at a fixed number of tokens per call (batch = tokens // N); the methods are
built in ``attention_methods``. Every (method, N) runs in a fresh Python process, so one method's
crash, timeout or out-of-memory is a row in the table, not the end of the run.

On CPU the report checks issue 2's targets, on CUDA issue 13's (``attention_targets``).

Outputs in --out-dir: attention.json (raw numbers, environment, command), attention.md (the
printed report) and attention.png (time per token and peak memory against N).
"""

import argparse
from typing import Dict, List, Sequence, Tuple

from . import cli, driver
from .attention_methods import DEFAULT_METHODS, GPU_DEFAULT_METHODS, METHOD_NOTES, METHODS
from .attention_targets import check_gpu_targets, check_targets
from .plot import Panel, save_panels
from .probes import MIB, median
from .report import (add_relative, failure_notes, format_targets, markdown_table, num, ratio, status_cell,
                     threads_of)

NAME = "attention"
DESCRIPTION = """\
Forward+backward time and peak memory of causal attention (ABC, SDPA, fairseq MHA, fla's ABC).

Measures every method at each N with batch = tokens // N, each (method, N) in a fresh process.
A method that errors, runs out of memory or exceeds --max-seconds at some N is reported as
such in the table; one that cannot run here (fla-abc without CUDA or fla-core) as skipped. Prints
a Markdown table and PASS/FAIL targets (issue 2's on CPU, issue 13's on CUDA; informational: the
exit code is 0 unless the benchmark itself crashes) and writes attention.json, attention.md and
attention.png to --out-dir."""
DEFAULT_LENGTHS = [512, 1024, 2048, 4096, 8192]
GPU_DEFAULT_LENGTHS = DEFAULT_LENGTHS + [16384]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The suite's flags."""
    parser.add_argument("--lengths", type=cli.positive_int, nargs="+", default=None, metavar="N",
                        help=f"sequence lengths N to measure (default: {' '.join(map(str, DEFAULT_LENGTHS))}; "
                             f"on CUDA also {GPU_DEFAULT_LENGTHS[-1]})")
    parser.add_argument("--tokens", type=cli.positive_int, default=32768,
                        help="tokens per call; batch = tokens // N, so it must be >= the largest N")
    parser.add_argument("--heads", type=cli.positive_int, default=8, help="attention heads H")
    parser.add_argument("--head-dim", type=cli.positive_int, default=64, help="dimension d per head")
    parser.add_argument("--memory", type=cli.positive_int, default=64,
                        help="ABC memory slots n (the size of phi_logits' last dim)")
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=None, metavar="METHOD",
                        help=f"methods to measure, from: {', '.join(METHODS)} (default: "
                             f"{' '.join(DEFAULT_METHODS)}; on CUDA: {' '.join(GPU_DEFAULT_METHODS)})")
    cli.add_run_flags(parser, "forward+backward call", repeats=5, warmup=2, max_seconds=120.0)
    cli.add_output_flags(parser, NAME)


def validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Device-dependent defaults, then the checks that involve several flags; errors name the flag."""
    cli.check_device_and_memory(args, parser)
    on_gpu = args.device.startswith("cuda")
    args.lengths = sorted(set(args.lengths or (GPU_DEFAULT_LENGTHS if on_gpu else DEFAULT_LENGTHS)))
    args.methods = list(dict.fromkeys(args.methods or (GPU_DEFAULT_METHODS if on_gpu else DEFAULT_METHODS)))
    if args.tokens < max(args.lengths):
        parser.error(f"--tokens {args.tokens} is smaller than the largest of --lengths ({max(args.lengths)}); "
                     "batch = tokens // N would be 0")


def measurements(args: argparse.Namespace) -> List[driver.Measurement]:
    """One worker run per (method, N), N outermost."""

    def one(method: str, length: int) -> driver.Measurement:
        batch = args.tokens // length
        params = {"method": method, "length": length, "batch": batch, "heads": args.heads,
                  "head_dim": args.head_dim, "memory": args.memory, "dtype": args.dtype}
        spec = driver.worker_spec(args, f"{__package__}.attention_methods:build_case", params)
        return driver.Measurement(f"{method} N={length} batch={batch}", spec,
                                  lambda result: make_row(method, length, batch, result))

    return [one(method, length) for length in args.lengths for method in args.methods]


def describe(row: dict) -> str:
    return f"{row['ms_per_call']:.2f} ms/call, {row['us_per_token']:.3f} us/token, {row.get('peak_mib', 0):.1f} MiB"


HEADERS = ("N", "batch", "method", "ms/call", "us/token", "x sdpa speed", "peak MiB", "x sdpa memory")


def make_row(method: str, length: int, batch: int, result: dict) -> dict:
    """One JSON/table row from a worker result: raw numbers plus per-call and per-token times."""
    tokens = batch * length
    row = {"method": method, "N": length, "batch": batch, "tokens_per_call": tokens, **result}
    times = result.get("times_s") or []
    if row.get("status") == "ok" and times:
        median_s = median(times)
        row.update(median_s=median_s, ms_per_call=median_s * 1e3, us_per_token=median_s * 1e6 / tokens)
    if "peak_bytes" in result:
        row["peak_mib"] = result["peak_bytes"] / MIB
    return row


def report(rows: Sequence[dict], env: dict, config: dict, memory_probes: Sequence[str]) -> str:
    """The Markdown report: header, table, notes (method caveats and failures)."""
    note_of, footnotes = failure_notes(rows)
    table_rows = [(
        row["N"], row["batch"], row["method"], status_cell(row, num(row.get("ms_per_call"), ".2f"), note_of, i),
        num(row.get("us_per_token"), ".3f"), ratio(row.get("speed_vs_sdpa")),
        num(row.get("peak_mib"), ".1f"), ratio(row.get("memory_vs_sdpa")),
    ) for i, row in enumerate(rows)]
    lines = [
        "# Causal attention, forward + backward",
        "",
        f"{config['tokens']} tokens per call, H={config['heads']}, d={config['head_dim']}, "
        f"ABC slots n={config['memory']}, {config['dtype']} on {config['device']}; "
        f"{driver.header_timing(config)}; threads {threads_of(rows)}; torch {env['torch']}; CPU {env['cpu_model']}.",
        "",
        markdown_table(HEADERS, table_rows, right_align=(True, True, False, True, True, True, True, True)),
        "",
        "Notes:",
        "",
        "- x sdpa speed = sdpa time / method time (above 1 is faster); "
        "x sdpa memory = method peak / sdpa peak (below 1 is smaller).",
        f"- peak MiB: increase over the baseline after the inputs exist, on a first untimed call in a "
        f"fresh process (probe: {', '.join(memory_probes) or '-'}).",
    ]
    methods = list(dict.fromkeys(row["method"] for row in rows))
    lines += [f"- {method}: {METHOD_NOTES[method]}" for method in methods if method in METHOD_NOTES]
    lines += footnotes
    return "\n".join(lines)


def plot_panels(rows: Sequence[dict]) -> Tuple[Panel, Panel]:
    """Time per token and peak memory against N, one line per method (measured points only)."""
    time_series: Dict[str, list] = {}
    memory_series: Dict[str, list] = {}
    for row in rows:
        if row.get("us_per_token") is not None:
            time_series.setdefault(row["method"], []).append((row["N"], row["us_per_token"]))
        if row.get("status") == "ok" and row.get("peak_mib") is not None:
            memory_series.setdefault(row["method"], []).append((row["N"], row["peak_mib"]))
    return (
        Panel("Forward + backward time per token", "microseconds per token (log)", time_series),
        Panel("Peak memory increase over the inputs", "MiB (log)", memory_series),
    )


def summarise(rows: List[dict], env: dict, config: dict, memory_probes: List[str]) -> driver.Summary:
    """Ratios against sdpa, the report, the device's targets and the two-panel plot."""
    add_relative(rows, "sdpa", (("median_s", "speed_vs_sdpa", True), ("peak_mib", "memory_vs_sdpa", False)))
    by_case = {(row["method"], row["N"]): row for row in rows}
    on_gpu = config["device"].startswith("cuda")
    targets = check_gpu_targets(by_case) if on_gpu else check_targets(by_case)
    title = "Targets (GPU; informational)" if on_gpu else "Targets (informational)"
    text = report(rows, env, config, memory_probes) + "\n\n" + format_targets(targets, title) + "\n"
    plot_title = (f"causal attention fwd+bwd, {config['tokens']} tokens/call, H={config['heads']}, "
                  f"d={config['head_dim']}, n={config['memory']}, {config['dtype']}, {config['device']}")
    return driver.Summary(text, targets, lambda path: save_panels(
        path, plot_panels(rows), xlabel="sequence length N (log2)", title=plot_title))
