"""``attention`` subcommand: forward+backward time and peak memory of causal attention.

Compares ABC (``abc_fairseq.ops.causal_abc``) with torch's fused SDPA and fairseq's
MultiheadAttention over sequence lengths N at a fixed number of tokens per call
(batch = tokens // N). Every (method, N) runs in a fresh Python process (``runner``), so one
method's crash, timeout or out-of-memory is a row in the table, not the end of the run.

Outputs in --out-dir: attention.json (raw numbers, environment, command), attention.md (the
printed report) and attention.png (time per token and peak memory against N).
"""

import argparse

from . import cli_types, driver
from .attention_methods import DEFAULT_METHODS, DTYPES, METHODS
from .attention_report import add_relative, make_row, plot_panels, report
from .attention_targets import check_targets, format_targets
from .environment import environment_info
from .resources import add_output_flags, check_device_and_memory
from .plot import save_panels

DESCRIPTION = """\
Forward+backward time and peak memory of causal attention (ABC, SDPA, fairseq MHA).

Measures every method at each N with batch = tokens // N, each (method, N) in a fresh process.
A method that errors, runs out of memory or exceeds --max-seconds at some N is reported as
such in the table. Prints a Markdown table and PASS/FAIL targets (informational: the exit code
is 0 unless the benchmark itself crashes) and writes attention.json, attention.md and
attention.png to --out-dir."""
PROG = "python -m abc_fairseq.benchmark"
DEFAULT_LENGTHS = [512, 1024, 2048, 4096, 8192]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommand's flags."""
    parser.add_argument("--lengths", type=cli_types.positive_int, nargs="+", default=DEFAULT_LENGTHS,
                        metavar="N", help="sequence lengths N to measure")
    parser.add_argument("--tokens", type=cli_types.positive_int, default=32768,
                        help="tokens per call; batch = tokens // N, so it must be >= the largest N")
    parser.add_argument("--heads", type=cli_types.positive_int, default=8, help="attention heads H")
    parser.add_argument("--head-dim", type=cli_types.positive_int, default=64, help="dimension d per head")
    parser.add_argument("--memory", type=cli_types.positive_int, default=64,
                        help="ABC memory slots n (the size of phi_logits' last dim)")
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(DEFAULT_METHODS),
                        metavar="METHOD", help=f"methods to measure, from: {', '.join(METHODS)} "
                                               f"(default: {' '.join(DEFAULT_METHODS)})")
    parser.add_argument("--repeats", type=cli_types.positive_int, default=5,
                        help="timed calls per (method, N); the median is reported")
    driver.add_rounds_flag(parser)
    parser.add_argument("--warmup", type=cli_types.non_negative_int, default=2,
                        help="untimed calls before the timed ones (after the memory call)")
    parser.add_argument("--threads", type=cli_types.positive_int, default=None,
                        help="torch intra-op threads in each worker (default: torch's own default)")
    parser.add_argument("--dtype", choices=list(DTYPES), default="float32", help="dtype of inputs and weights")
    parser.add_argument("--device", default="cpu",
                        help="torch device: cpu, or cuda / cuda:I (memory from torch.cuda.max_memory_allocated)")
    parser.add_argument("--seed", type=cli_types.non_negative_int, default=0, help="random seed of the inputs")
    parser.add_argument("--max-seconds", type=cli_types.positive_float, default=120.0,
                        help="longest one forward+backward call may take; a method over it at some N "
                             "is reported as timeout for that N")
    add_output_flags(parser, "attention")


def validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Checks that involve several flags or the machine; errors name the flag."""
    args.lengths = sorted(set(args.lengths))
    args.methods = list(dict.fromkeys(args.methods))
    if args.tokens < max(args.lengths):
        parser.error(f"--tokens {args.tokens} is smaller than the largest of --lengths ({max(args.lengths)}); "
                     "batch = tokens // N would be 0")
    check_device_and_memory(args, parser)


def _case(args: argparse.Namespace, method: str, length: int) -> driver.Measurement:
    """The measurement of one (method, N)."""
    batch = args.tokens // length
    params = {"method": method, "length": length, "batch": batch, "heads": args.heads,
              "head_dim": args.head_dim, "memory": args.memory, "dtype": args.dtype}
    spec = driver.worker_spec(args, "abc_fairseq.benchmark.attention_methods:build_case", params)
    return driver.Measurement(f"{method} N={length} batch={batch}", spec,
                       lambda result: make_row(method, length, batch, result))


def _describe(row: dict) -> str:
    return f"{row['ms_per_call']:.2f} ms/call, {row['us_per_token']:.3f} us/token, {row.get('peak_mib', 0):.1f} MiB"


def run(args: argparse.Namespace) -> int:
    """Measure every (method, N), print the report and targets, write the output files."""
    validate(args, args._parser)
    env = environment_info(PROG, args.argv, args.device)
    cases = [_case(args, method, length) for length in args.lengths for method in args.methods]
    record = driver.measure("attention", args, env, cases, _describe, rounds=args.rounds)
    rows = record["results"]
    add_relative(rows)
    targets = check_targets({(row["method"], row["N"]): row for row in rows})
    text = report(rows, env, record["config"], driver.memory_probes(rows)) + "\n\n" + format_targets(targets) + "\n"
    title = (f"causal attention fwd+bwd, {args.tokens} tokens/call, H={args.heads}, d={args.head_dim}, "
             f"n={args.memory}, {args.dtype}, {args.device}")
    driver.publish("attention", args, record, text, targets, lambda path: save_panels(
        path, plot_panels(rows), xlabel="sequence length N (log2)", title=title))
    return 0
