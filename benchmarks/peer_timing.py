"""Causal attention forward + backward in one process: ours beside flash-linear-attention and
flash attention, on the same problem.

    python -m benchmarks.peer_timing --device cuda --out-dir peers
    python -m benchmarks.peer_timing --device cuda --methods abc fla-abc gsa-op fla-gsa sdpa --out-dir peers

Methods: ``abc`` (causal_abc on the Triton kernels), ``fla-abc`` (fla-core's chunk_abc), ``gsa-op``
(causal_gsa on ABC's kernels, log gates logsigmoid(x) / 8 as the gsa strategy makes them),
``fla-gsa`` (fla-core's chunk_gsa on the same gates) and ``sdpa`` (the flash kernel on CUDA in
half precision). fla's inputs are built by abc_fairseq.selfcheck.fla_peer in fla's layout
[B, T, H, *] before the timing, so that fla solves our problem (tests/ops/test_fla_peer.py).

Every N at batch = tokens // N; loss = sum(output * a fixed random tensor), gradients for every
input. One process times every case (median of --repeats after --warmup calls; CUDA events on
CUDA), so fla's autotuning and our chunk measurement run once per size, not once per case as in
the suites' fresh workers. Writes peer_timing.json (rows; environment with fla's version and
layout) and peer_timing.md to --out-dir, a new or empty folder, after every case ("complete":
false until the last). On CPU the kernels run only under
Triton's interpreter (TRITON_INTERPRET=1; else the PyTorch path) and fla's rows are skipped: its
kernels need CUDA there (CI checks this tool with it at toy sizes).
"""

import argparse
import json
import os
import statistics
import sys
import time
from typing import Callable, Dict, List, Sequence

import torch

from abc_fairseq.selfcheck import fla_peer

from . import flags
from .environment import environment_info

METHODS = ("abc", "fla-abc", "gsa-op", "fla-gsa", "sdpa")
DEFAULT_METHODS = ("abc", "fla-abc", "sdpa")
DEFAULT_LENGTHS = (512, 1024, 2048, 4096, 8192, 16384)
GATE_TEMPERATURE = 8.0  # the gsa strategy's log gates: logsigmoid(x) / 8


class Unavailable(Exception):
    """The method cannot run here (fla without CUDA, ...): its row says skipped."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peer_timing", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    flags.add_flags(parser,
                    ("--lengths", flags.positive_int, list(DEFAULT_LENGTHS), "sequence lengths N",
                     {"nargs": "+", "metavar": "N"}),
                    ("--tokens", flags.positive_int, 32768, "tokens per call: batch = tokens // N (>= the largest N)"),
                    ("--heads", flags.positive_int, 8, "attention heads H"),
                    ("--head-dim", flags.positive_int, 64, "dimension d per head"),
                    ("--memory", flags.positive_int, 64, "memory slots n (fla's chunk_abc: a power of two)"),
                    flags.methods_flag(METHODS, list(DEFAULT_METHODS),
                                       f"methods (default: {' '.join(DEFAULT_METHODS)})"),
                    ("--dtype", None, "float16", "dtype of the inputs",
                     {"choices": ["float32", "float16", "bfloat16"]}),
                    ("--device", None, "cuda", "torch device: cuda / cuda:I, or cpu (a check of the tool)"),
                    ("--repeats", flags.positive_int, 10, "timed calls per case, median reported"),
                    ("--warmup", flags.non_negative_int, 3, "untimed calls per case first (compilation, tuning)"),
                    ("--seed", flags.non_negative_int, 0, "random seed of the inputs"),
                    ("--out-dir", None, os.path.join("benchmark_results", "peer_timing"),
                     "folder of peer_timing.json and .md (new or empty)"))
    return parser


def _check(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    flags.check_common_flags(args, parser)
    if args.tokens < max(args.lengths):
        parser.error(f"--tokens {args.tokens} is below the largest --lengths {max(args.lengths)}")
    if os.path.isdir(args.out_dir) and os.listdir(args.out_dir):
        parser.error(f"--out-dir {args.out_dir} exists and is not empty: name a new folder (nothing is overwritten)")
    if os.path.exists(args.out_dir) and not os.path.isdir(args.out_dir):
        parser.error(f"--out-dir {args.out_dir} is a file")


def _backend(device: torch.device) -> str:
    """Our kernels on CUDA, or on CPU under Triton's interpreter; else the PyTorch path."""
    return "triton" if device.type == "cuda" or os.environ.get("TRITON_INTERPRET") == "1" else "torch"


def _leaves(shapes: Sequence[Sequence[int]], dtype, device, gen) -> List[torch.Tensor]:
    return [torch.randn(*shape, generator=gen).to(device, dtype).requires_grad_() for shape in shapes]


def _gates(x: torch.Tensor) -> torch.Tensor:
    return (torch.nn.functional.logsigmoid(x.float()) / GATE_TEMPERATURE).to(x.dtype)


def build(method: str, B: int, H: int, N: int, d: int, n: int, dtype, device, seed: int) -> Callable[[], None]:
    """One forward + backward of ``method`` on fresh inputs (ours [B, H, N, *]; fla's made from
    them in its layout, outside the call)."""
    from abc_fairseq.ops import causal_abc
    from abc_fairseq.ops.gsa import causal_gsa

    gen = torch.Generator().manual_seed(seed)
    q, k, v, x = _leaves([(B, H, N, d)] * 3 + [(B, H, N, n)], dtype, device, gen)
    backend = _backend(device)
    if method.startswith("fla-"):
        kind = method[len("fla-"):]
        if device.type != "cuda":
            raise Unavailable(f"{method}: fla-core's Triton kernels need CUDA here")
        try:
            op = fla_peer.fla_op(kind)
        except Exception as exc:  # noqa: BLE001 (optional: never a dependency)
            raise Unavailable(f"{method}: fla-core does not import: {type(exc).__name__}: {exc}") from exc
        inputs = [t.detach().requires_grad_() for t in fla_peer.to_fla_layout(q, k, v, x)]
        control = (lambda y: y) if kind == "abc" else _gates
        forward = lambda: fla_peer.fla_attention(kind, *inputs[:3], control(inputs[3]), op=op)  # noqa: E731
    elif method == "abc":
        forward = lambda: causal_abc(q, k, v, x, backend=backend)  # noqa: E731
    elif method == "gsa-op":
        forward = lambda: causal_gsa(q, k, v, _gates(x), backend=backend)  # noqa: E731
    else:  # sdpa: the flash kernel where CUDA has it in half precision
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.nn.functional import scaled_dot_product_attention

        flash = device.type == "cuda" and dtype in (torch.float16, torch.bfloat16)

        def forward():
            if not flash:
                return scaled_dot_product_attention(q, k, v, is_causal=True)
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                return scaled_dot_product_attention(q, k, v, is_causal=True)

    weight = torch.randn(tuple(forward().shape), generator=gen).to(device, dtype)

    def run():
        forward().backward(weight)

    return run


def median_ms(run: Callable[[], None], device: torch.device, warmup: int, repeats: int) -> float:
    """Median milliseconds of ``repeats`` calls after ``warmup`` untimed ones."""
    cuda = device.type == "cuda"
    for _ in range(warmup):
        run()
    times = []
    for _ in range(repeats):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize(device)
            start.record()
            run()
            end.record()
            torch.cuda.synchronize(device)
            times.append(start.elapsed_time(end))
        else:
            began = time.perf_counter()
            run()
            times.append(1e3 * (time.perf_counter() - began))
    return statistics.median(times)


def measure(args: argparse.Namespace, record: dict, save: Callable[[], None]) -> None:
    """Every (N, method) case into ``record["results"]``, saved after each (a stopped run keeps them)."""
    device, dtype = torch.device(args.device), flags.DTYPES[args.dtype]
    for N in args.lengths:
        B = args.tokens // N
        for method in args.methods:
            row = {"N": N, "batch": B, "heads": args.heads, "method": method}
            try:
                run = build(method, B, args.heads, N, args.head_dim, args.memory, dtype, device, args.seed)
                row.update(status="ok", ms=median_ms(run, device, args.warmup, args.repeats))
            except Unavailable as why:
                row.update(status="skipped", message=str(why))
            except Exception as error:  # noqa: BLE001 (one failed case is reported; the others still run)
                row.update(status="error", message=f"{type(error).__name__}: {error}"[:500])
            if device.type == "cuda":
                torch.cuda.empty_cache()
            print(f"N={N} batch={B} {method}: " + (f"{row['ms']:.3f} ms" if row["status"] == "ok"
                                                  else f"{row['status']}: {row['message']}"), flush=True)
            record["results"].append(row)
            save()


def markdown(record: dict) -> str:
    """The table: one line per N, each method's ms and its time over SDPA's (where SDPA ran)."""
    config, rows = record["config"], record["results"]
    env = record["environment"]
    methods = config["methods"]
    by_case: Dict[tuple, dict] = {(row["N"], row["method"]): row for row in rows}
    lines = [f"# Causal attention forward + backward, ms ({config['dtype']}, {config['tokens']:,} tokens x "
             f"{config['heads']} heads, d = {config['head_dim']}, n = {config['memory']})", "",
             f"{env.get('cuda_device') or env.get('cpu_model')}, torch {env['torch']}, triton {env.get('triton')}, "
             f"fla-core {env['fla_version']} called in {env['fla_layout']}, commit {env['commit']}; median of "
             f"{config['repeats']} after {config['warmup']} warm-up calls; (x sdpa) = time over SDPA's.", "",
             "| N | batch | " + " | ".join(methods) + " |", "|---:|---:|" + "---:|" * len(methods)]
    for N in config["lengths"]:
        sdpa = by_case.get((N, "sdpa"), {}).get("ms")
        cells = []
        for method in methods:
            row = by_case.get((N, method), {})
            if row.get("status") != "ok":
                cells.append(row.get("status", "not run"))
            else:
                cells.append(f"{row['ms']:.2f}" + (f" ({row['ms'] / sdpa:.2f}x)" if sdpa and method != "sdpa" else ""))
        lines.append(f"| {N:,} | {config['tokens'] // N} | " + " | ".join(cells) + " |")
    notes = [f"- {row['method']} at N = {row['N']}: {row['status']}: {row['message']}" for row in rows
             if row.get("message")]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def main(argv=None) -> int:
    parser = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    _check(args, parser)
    env = environment_info("python -m benchmarks.peer_timing", argv, args.device)
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:
        env["triton"] = None
    env.update(fla_peer.fla_record(), backend=_backend(torch.device(args.device)))
    record = {"benchmark": "peer_timing", "complete": False, "config": vars(args), "environment": env, "results": []}
    os.makedirs(args.out_dir, exist_ok=True)
    paths = [os.path.join(args.out_dir, f"peer_timing.{ext}") for ext in ("json", "md")]

    def save() -> None:  # our own two files, rewritten after every case
        with open(paths[0], "w") as handle:
            json.dump(record, handle, indent=1, allow_nan=False)
        with open(paths[1], "w") as handle:
            handle.write(markdown(record))

    measure(args, record, save)
    record["complete"] = True
    save()
    print(markdown(record) + "wrote " + ", ".join(paths))
    failed = [row for row in record["results"] if row["status"] == "error"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
