"""``attention`` suite (its --help: ``DESCRIPTION``): causal attention forward+backward at a fixed
number of tokens per call over sequence lengths N; the methods are built in ``attention_methods``,
the targets: issue 2's on CPU, issue 13's on CUDA."""

import argparse
from typing import Dict, List, Sequence, Tuple

from . import cli, driver, report
from .attention_methods import DEFAULT_METHODS, GPU_DEFAULT_METHODS, METHOD_NOTES, METHODS
from .plot import Panel, save_panels, series
from .report import add_relative, compare, measured, num, ratio, result_row, status_cell

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
    row, seconds = result_row({"method": method, "N": length, "batch": batch, "tokens_per_call": tokens}, result)
    if seconds is not None:
        row.update(median_s=seconds, ms_per_call=seconds * 1e3, us_per_token=seconds * 1e6 / tokens)
    return row


def markdown(rows: Sequence[dict], env: dict, config: dict, memory_probes: Sequence[str]) -> str:
    """The Markdown report: header, table, notes (method caveats and failures)."""
    note_of, footnotes = report.failure_notes(rows)
    table_rows = [(
        row["N"], row["batch"], row["method"], status_cell(row, num(row.get("ms_per_call"), ".2f"), note_of, i),
        num(row.get("us_per_token"), ".3f"), ratio(row.get("speed_vs_sdpa")),
        num(row.get("peak_mib"), ".1f"), ratio(row.get("memory_vs_sdpa")),
    ) for i, row in enumerate(rows)]
    lines = [
        "# Causal attention, forward + backward",
        "",
        f"{config['tokens']} tokens per call, H={config['heads']}, d={config['head_dim']}, "
        f"ABC slots n={config['memory']}, {report.machine_note(config, rows, env, driver.header_timing(config))}",
        "",
        report.markdown_table(HEADERS, table_rows, right_align=(True, True, False, True, True, True, True, True)),
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
    return (Panel("Forward + backward time per token", "microseconds per token (log)", series(rows, "us_per_token")),
            Panel("Peak memory increase over the inputs", "MiB (log)", series(rows, "peak_mib")))


# Targets (informational). CPU (issue 2): against torch's SDPA in fp32 at 32k tokens per call. GPU
# (issue 13, one H100 or H200, bf16, 32k tokens per call, 8 heads, d = n = 64): time per token flat
# from N = 512 to 16,384; at least 5x ``abc-torch``; at least as fast as ``fla-abc``; faster than
# flash SDPA from N = 8,192 on. Each check gives PASS, FAIL, or SKIP when the lengths or methods it
# needs were not measured (or the reference failed); ABC failing at a needed length counts as FAIL.
Rows = Dict[Tuple[str, int], dict]  # (method, N) -> result row


def _speed(rows: Rows, n: int, minimum: float, name: str, reference: str = "sdpa") -> dict:
    return compare(name, rows.get(("abc", n)), rows.get((reference, n)), "median_s", minimum, True,
                   (f"abc at N={n}", reference))


def _memory(rows: Rows, n: int, maximum: float, name: str) -> dict:
    return compare(name, rows.get(("abc", n)), rows.get(("sdpa", n)), "peak_mib", maximum, False,
                   (f"abc at N={n} (MiB)", "sdpa"))


def _flat(rows: Rows, low: int, high: int, max_ratio: float, name: str) -> dict:
    for n in (low, high):
        if ("abc", n) not in rows:
            return {"name": name, "status": "SKIP", "detail": f"abc at N={n} not measured"}
    lengths = sorted(n for (method, n) in rows if method == "abc" and low <= n <= high)
    bad = [n for n in lengths if not measured(rows[("abc", n)], "us_per_token")]
    if bad:
        return {"name": name, "status": "FAIL", "detail": f"abc has no time at N={bad}"}
    per_token = {n: rows[("abc", n)]["us_per_token"] for n in lengths}
    value = max(per_token.values()) / min(per_token.values())
    spread = ", ".join(f"{n}: {t:.3f}" for n, t in per_token.items())
    return {"name": name, "status": "PASS" if value <= max_ratio else "FAIL", "value": value,
            "detail": f"max/min us/token = {value:.2f} (need <= {max_ratio:g}); {spread}"}


def _every_length(rows: Rows, reference: str, minimum: float, name: str, start: int = 0) -> dict:
    """abc against ``reference`` at every N >= ``start`` where the reference was measured; the
    worst ratio decides. SKIP when the reference has no result at any such N."""
    lengths = sorted(n for (method, n) in rows if method == reference and n >= start)
    checks = [_speed(rows, n, minimum, name, reference) for n in lengths]
    checks = [check for check in checks if check["status"] != "SKIP"]
    if not checks:
        return {"name": name, "status": "SKIP", "detail": f"{reference} has no result at N >= {start or 1}"}
    failed = [check for check in checks if check["status"] == "FAIL"]
    worst = failed[0] if failed else min(checks, key=lambda check: check["value"])
    return {**worst, "name": name, "detail": f"worst of {len(checks)} lengths: {worst['detail']}"}


def check_targets(rows: Rows) -> List[dict]:
    """Issue 2's CPU targets, in a fixed order; each a dict with name, status, detail (and value)."""
    return [
        _speed(rows, 4096, 3.0, "abc >= 3x faster than sdpa at N=4096"),
        _speed(rows, 8192, 6.0, "abc >= 6x faster than sdpa at N=8192"),
        _speed(rows, 512, 1 / 1.5, "abc at most 1.5x slower than sdpa at N=512"),
        _flat(rows, 512, 8192, 1.3, "abc time per token flat within 1.3x from N=512 to N=8192"),
        _memory(rows, 4096, 2.0, "abc peak memory at N=4096 <= 2x sdpa's"),
    ]


def check_gpu_targets(rows: Rows) -> List[dict]:
    """Issue 13's GPU targets (bf16), in a fixed order."""
    return [
        _flat(rows, 512, 16384, 1.3, "abc time per token flat within 1.3x from N=512 to N=16384"),
        _every_length(rows, "abc-torch", 5.0, "abc >= 5x faster than abc-torch at every N"),
        _every_length(rows, "fla-abc", 1.0, "abc at least as fast as fla-abc wherever both run"),
        _every_length(rows, "sdpa", 1.0 + 1e-9, "abc faster than flash sdpa from N=8192 on", start=8192),
    ]


def summarise(rows: List[dict], env: dict, config: dict, memory_probes: List[str]) -> driver.Summary:
    """Ratios against sdpa, the report, the device's targets and the two-panel plot."""
    add_relative(rows, "sdpa", (("median_s", "speed_vs_sdpa", True), ("peak_mib", "memory_vs_sdpa", False)))
    by_case = {(row["method"], row["N"]): row for row in rows}
    on_gpu = config["device"].startswith("cuda")
    targets = check_gpu_targets(by_case) if on_gpu else check_targets(by_case)
    title = "Targets (GPU; informational)" if on_gpu else "Targets (informational)"
    text = markdown(rows, env, config, memory_probes) + "\n\n" + report.format_targets(targets, title) + "\n"
    plot_title = (f"causal attention fwd+bwd, {config['tokens']} tokens/call, H={config['heads']}, "
                  f"d={config['head_dim']}, n={config['memory']}, {config['dtype']}, {config['device']}")
    return driver.Summary(text, targets, lambda path: save_panels(
        path, plot_panels(rows), xlabel="sequence length N (log2)", title=plot_title))
