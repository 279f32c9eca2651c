"""``attention`` suite: causal attention forward+backward at a fixed number of tokens per call over
sequence lengths N; the methods are built in ``attention_methods``; the targets: issue 2's on CPU,
issue 13's on CUDA."""

import argparse
from typing import Dict, List, Tuple

from . import cli, report
from .attention_methods import DEFAULT_METHODS, GPU_DEFAULT_METHODS, METHOD_NOTES, METHODS
from .report import compare, measured
from .suite import Column, Measurement, Panel, Plot, Suite

DESCRIPTION = """\
Forward+backward time and peak memory of causal attention (ABC, SDPA, fairseq MHA, fla's ABC).

Every method at each N with batch = tokens // N, each (method, N) in a fresh process; a method that
cannot run here (fla-abc without CUDA or fla-core) is skipped. Methods: docs/benchmarks.md."""
DEFAULT_LENGTHS = [512, 1024, 2048, 4096, 8192]
GPU_DEFAULT_LENGTHS = DEFAULT_LENGTHS + [16384]
Rows = Dict[Tuple[str, int], dict]  # (method, N) -> result row


def add_arguments(parser: argparse.ArgumentParser) -> None:
    cli.add_flags(parser, ("--lengths", cli.positive_int, None, f"sequence lengths N (default: "
                           f"{' '.join(map(str, DEFAULT_LENGTHS))}; on CUDA also {GPU_DEFAULT_LENGTHS[-1]})",
                           {"nargs": "+", "metavar": "N"}),
                  ("--tokens", cli.positive_int, 32768, "tokens per call: batch = tokens // N (>= the largest N)"),
                  ("--heads", cli.positive_int, 8, "attention heads H"),
                  ("--head-dim", cli.positive_int, 64, "dimension d per head"),
                  ("--memory", cli.positive_int, 64, "ABC memory slots n"),
                  cli.methods_flag(METHODS, None, f"methods to measure (default: {' '.join(DEFAULT_METHODS)}; "
                                   f"on CUDA: {' '.join(GPU_DEFAULT_METHODS)})"))
    cli.add_run_flags(parser, "forward+backward call", repeats=5, warmup=2, max_seconds=120.0)
    cli.add_output_flags(parser, "attention")


def validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """The device's default lengths and methods; --tokens must cover the longest N."""
    on_gpu = args.device.startswith("cuda")
    args.lengths = args.lengths or (GPU_DEFAULT_LENGTHS if on_gpu else DEFAULT_LENGTHS)
    args.methods = args.methods or list(GPU_DEFAULT_METHODS if on_gpu else DEFAULT_METHODS)
    if args.tokens < max(args.lengths):
        parser.error(f"--tokens {args.tokens} is smaller than the largest of --lengths ({max(args.lengths)}); "
                     "batch = tokens // N would be 0")


def measurements(args: argparse.Namespace) -> List[Measurement]:
    """One worker run per (method, N), N outermost; q, k, v [B = tokens // N, H, N, d]."""
    items = []
    for length in args.lengths:
        batch = args.tokens // length
        for method in args.methods:
            params = {"method": method, "length": length, "batch": batch, "heads": args.heads,
                      "head_dim": args.head_dim, "memory": args.memory, "dtype": args.dtype}
            fields = {"method": method, "N": length, "batch": batch, "tokens_per_call": batch * length}
            items.append(Measurement(f"{method} N={length} batch={batch}",
                                     f"{__package__}.attention_methods:build_case", params, fields))
    return items


def derive(row: dict, seconds) -> None:
    if seconds is not None:
        row.update(median_s=seconds, ms_per_call=seconds * 1e3, us_per_token=seconds * 1e6 / row["tokens_per_call"])


def header(config: dict, rows: List[dict], env: dict) -> str:
    return (f"{config['tokens']} tokens per call, H={config['heads']}, d={config['head_dim']}, "
            f"ABC slots n={config['memory']}, {report.machine_note(config, rows, env, report.timing(config))}")


def notes(config: dict, rows: List[dict], memory_probes: List[str]) -> List[str]:
    return ["- x sdpa speed = sdpa time / method time (above 1 is faster); x sdpa memory = method peak / sdpa peak.",
            report.peak_note("the inputs exist", "call", memory_probes)] + \
        report.method_notes(METHOD_NOTES, (row["method"] for row in rows))


# The targets (informational): PASS, FAIL, or SKIP when a length or method they need was not measured
# (or the reference failed); ABC failing at a needed length is a FAIL.
def _speed(rows: Rows, n: int, minimum: float, name: str, reference: str = "sdpa") -> dict:
    return compare(name, rows.get(("abc", n)), rows.get((reference, n)), "median_s", minimum, True,
                   (f"abc at N={n}", reference))


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
    return report.verdict(name, value, max_ratio, f"max/min us/token = {value:.2f} (need <= {max_ratio:g}); {spread}")


def _every_length(rows: Rows, reference: str, minimum: float, name: str, start: int = 0) -> dict:
    """abc against ``reference`` at every N >= ``start`` where the reference ran; the worst decides."""
    lengths = sorted(n for (method, n) in rows if method == reference and n >= start)
    checks = [c for c in (_speed(rows, n, minimum, name, reference) for n in lengths) if c["status"] != "SKIP"]
    if not checks:
        return {"name": name, "status": "SKIP", "detail": f"{reference} has no result at N >= {start or 1}"}
    failed = [check for check in checks if check["status"] == "FAIL"]
    worst = failed[0] if failed else min(checks, key=lambda check: check["value"])
    return {**worst, "name": name, "detail": f"worst of {len(checks)} lengths: {worst['detail']}"}


def check_targets(rows: Rows) -> List[dict]:
    """Issue 2's CPU targets, against torch's SDPA in fp32 at 32k tokens per call."""
    return [
        _speed(rows, 4096, 3.0, "abc >= 3x faster than sdpa at N=4096"),
        _speed(rows, 8192, 6.0, "abc >= 6x faster than sdpa at N=8192"),
        _speed(rows, 512, 1 / 1.5, "abc at most 1.5x slower than sdpa at N=512"),
        _flat(rows, 512, 8192, 1.3, "abc time per token flat within 1.3x from N=512 to N=8192"),
        compare("abc peak memory at N=4096 <= 2x sdpa's", rows.get(("abc", 4096)), rows.get(("sdpa", 4096)),
                "peak_mib", 2.0, False, ("abc at N=4096 (MiB)", "sdpa")),
    ]


def check_gpu_targets(rows: Rows) -> List[dict]:
    """Issue 13's GPU targets (one H100 or H200, bf16, 32k tokens per call, H = 8, d = n = 64)."""
    return [
        _flat(rows, 512, 16384, 1.3, "abc time per token flat within 1.3x from N=512 to N=16384"),
        _every_length(rows, "abc-torch", 5.0, "abc >= 5x faster than abc-torch at every N"),
        _every_length(rows, "fla-abc", 1.0, "abc at least as fast as fla-abc wherever both run"),
        _every_length(rows, "sdpa", 1.0 + 1e-9, "abc faster than flash sdpa from N=8192 on", start=8192),
    ]


def targets(rows: List[dict], config: dict) -> List[dict]:
    by_case = {(row["method"], row["N"]): row for row in rows}
    return check_gpu_targets(by_case) if config["device"].startswith("cuda") else check_targets(by_case)


SUITE = Suite(
    name="attention", description=DESCRIPTION, add_arguments=add_arguments, validate=validate,
    measurements=measurements, derive=derive,
    progress="{ms_per_call:.2f} ms/call, {us_per_token:.3f} us/token, {peak_mib:.1f} MiB",
    title=lambda config: "Causal attention, forward + backward", header=header,
    columns=(Column("N", "N"), Column("batch", "batch"), Column("method", "method", right=False),
             Column("ms/call", "ms_per_call", ".2f", status=True), Column("us/token", "us_per_token", ".3f"),
             Column("x sdpa speed", "speed_vs_sdpa", "x"), Column("peak MiB", "peak_mib", ".1f"),
             Column("x sdpa memory", "memory_vs_sdpa", "x")),
    notes=notes, targets=targets,
    targets_title=lambda config: f"Targets ({'GPU; ' if config['device'].startswith('cuda') else ''}informational)",
    relative=[("sdpa", (("median_s", "speed_vs_sdpa", True), ("peak_mib", "memory_vs_sdpa", False)))],
    plot=Plot("lines", (Panel("Forward + backward time per token", "microseconds per token (log)", "us_per_token"),
                        Panel("Peak memory increase over the inputs", "MiB (log)", "peak_mib")),
              title=lambda c: (f"causal attention fwd+bwd, {c['tokens']} tokens/call, H={c['heads']}, "
                               f"d={c['head_dim']}, n={c['memory']}, {c['dtype']}, {c['device']}"),
              xlabel="sequence length N (log2)"),
)
