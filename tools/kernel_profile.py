"""Where causal ABC's time goes on a GPU: every kernel of one forward + backward on the Triton
kernels, timed by torch.profiler, beside the cost model of ``tools.causal_cost`` (its launches,
programs, sequential steps, multiply-adds and bytes, and what they take at the device's peaks).

    python -m tools.kernel_profile --out-dir docs/benchmarks/h100/profile
    python -m tools.kernel_profile --lengths 1024 4096 16384 --dtype bfloat16 --out-dir DIR

Sizes are the attention suite's: ``--tokens`` per call (batch = tokens // N), ``--heads``,
``--head-dim`` (keys and values), ``--memory`` slots, at the chunk the launcher measures fastest
on this device. Writes kernel_profile.json (environment, sizes, per launch: model and measured
microseconds, the mean over ``--repeats`` profiled calls) and kernel_profile.md. Without CUDA the
op runs under Triton's interpreter (TRITON_INTERPRET=1, toy sizes only: CI's check of this tool)
and the measured column is empty.
"""

import argparse
import json
import os
import sys
from collections import defaultdict
from typing import Dict, List

from . import causal_cost

TRITON_KERNELS = ("chunk_sums_kernel", "output_kernel", "rows_kernel", "columns_kernel")
SCAN = "chunk_scan_kernel"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.kernel_profile", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=[4096], metavar="N",
                        help="sequence lengths N (default: %(default)s)")
    parser.add_argument("--tokens", type=int, default=32768, help="tokens per call (default: %(default)s)")
    parser.add_argument("--heads", type=int, default=8, help="heads H (default: %(default)s)")
    parser.add_argument("--head-dim", type=int, default=64, help="head dim d (default: %(default)s)")
    parser.add_argument("--memory", type=int, default=64, help="memory slots n (default: %(default)s)")
    parser.add_argument("--dtype", choices=("float16", "bfloat16", "float32"), default="float16",
                        help="input dtype (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5, help="profiled calls per size (default: %(default)s)")
    parser.add_argument("--model-only", action="store_true",
                        help="write the cost model only, at --chunk on --model-device (no op is run)")
    parser.add_argument("--model-device", default=None,
                        help="the device whose peaks the model assumes (default: this GPU; without one: H100)")
    parser.add_argument("--chunk", type=int, default=None,
                        help="the chunk C of the model (default: the launcher's pick on this device; "
                             "with --model-only: 64)")
    parser.add_argument("--out-dir", required=True, help="folder for kernel_profile.{json,md}; files there "
                                                         "are never overwritten")
    return parser


def _check(args, parser) -> None:
    for flag in ("tokens", "heads", "head_dim", "memory", "repeats"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.chunk is not None and args.chunk not in (16, 32, 64, 128):
        parser.error(f"--chunk must be 16, 32, 64 or 128, got {args.chunk}")
    if args.chunk is not None and not args.model_only:
        parser.error("--chunk is for --model-only (a run takes the launcher's chunk; ABC_TRITON_CHUNK forces one)")
    for N in args.lengths:
        if N < 1 or N > args.tokens:
            parser.error(f"--lengths: {N} is not in 1 .. --tokens ({args.tokens})")
    for name in ("kernel_profile.json", "kernel_profile.md"):
        if os.path.exists(os.path.join(args.out_dir, name)):
            parser.error(f"--out-dir {args.out_dir} already holds {name}: name a new folder (nothing is overwritten)")


def _kernel_times(events, calls: int) -> Dict[str, float]:
    """Microseconds per call of every CUDA kernel, named as the cost model names its launches:
    the scan's first launch of each call is the forward one, the second the reverse one; every
    other kernel counts as PyTorch glue (the normalisers, casts and the dl sum)."""
    totals: Dict[str, float] = defaultdict(float)
    scans = 0
    for event in events:
        name = event.name
        if name == SCAN:
            name = f"{SCAN} ({'forward' if scans % 2 == 0 else 'reverse'})"
            scans += 1
        elif name not in TRITON_KERNELS:
            name = "PyTorch glue"
        totals[name] += event.device_time / calls
    return dict(totals)


def profile(B: int, H: int, N: int, d: int, n: int, dtype, repeats: int) -> Dict[str, float]:
    """Measured microseconds per forward + backward call, by launch (empty off CUDA)."""
    import torch

    from abc_fairseq.ops import causal_abc

    device = "cuda" if torch.cuda.is_available() else "cpu"
    gen = torch.Generator(device="cpu").manual_seed(0)
    inputs = [torch.randn(B, H, N, width, generator=gen).to(device=device, dtype=dtype).requires_grad_()
              for width in (d, d, d, n)]
    weight = torch.randn(B, H, N, d, generator=gen).to(device=device, dtype=dtype)

    def call():
        out = causal_abc(*inputs, backend="triton")
        torch.autograd.grad((out * weight).sum(), inputs)

    call()  # compile
    if device == "cpu":
        return {}
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity
    with torch.profiler.profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(repeats):
            call()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return _kernel_times(kernels, repeats)


def _rows_with_glue(rows: List[dict], measured: Dict[str, float]) -> List[dict]:
    """The model's PyTorch rows take the measured glue time between them (the profiler cannot
    tell the logcumsumexp, the other normaliser ops and the dl sum apart): the first holds their
    sum, the others are dropped."""
    glue = [row for row in rows if row["name"].startswith("PyTorch")]
    if measured and glue:
        first = glue[0]
        first["measured_us"] = measured.get("PyTorch glue")
        first["name"] = "PyTorch glue (normalisers + dl sum)"
        for other in glue[1:]:
            for key in ("launches", "macs", "bytes", "steps"):
                first[key] = max(first[key], other[key]) if key == "steps" else first[key] + other[key]
            first["model_us"] = None if first["model_us"] is None else first["model_us"] + other["model_us"]
            rows.remove(other)
    return rows


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _check(args, parser)
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"  # before Triton is imported
    from abc_fairseq.ops.backend import kernel_chunk
    from abc_fairseq.ops.triton import tuning
    from abc_fairseq.ops.triton.sizes import device_chunk, pad

    dtype = getattr(torch, args.dtype)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device_name = torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu (Triton interpreter)"
    model_device = args.model_device or (device_name if device.type == "cuda" else "H100")
    if args.model_only:
        device_name = f"model only, {model_device} peaks"
    d, n, H = args.head_dim, args.memory, args.heads
    sizes, sections = [], [f"# Causal ABC forward + backward on the Triton kernels: {device_name}, {args.dtype}\n",
                            "Model: tools/causal_cost.py (lower bounds at the device's peaks; "
                            "docs/gpu.md explains it). Measured: torch.profiler, the mean over "
                            f"{args.repeats} profiled calls, microseconds per call.\n"]
    for N in args.lengths:
        B = max(1, args.tokens // N)
        measured = {} if args.model_only else profile(B, H, N, d, n, dtype, args.repeats)
        if args.chunk is not None:
            chunk = args.chunk
        elif args.model_only:
            chunk = 64
        else:  # the chunk the launcher measured fastest (one candidate off CUDA: the table's)
            key = tuning.size_class("causal_abc", device, [pad(w) for w in (n, d, d)], dtype, N)
            chunk = tuning.chosen().get(key) or device_chunk(kernel_chunk(64, N), n, d, d, dtype, device)
        rows = causal_cost.table(B * H, N, d, d, n, chunk, torch.finfo(dtype).bits // 8,
                                 model_device, measured if measured else None)
        rows = _rows_with_glue(rows, measured)
        sizes.append(dict(B=B, H=H, N=N, d=d, n=n, chunk=chunk, launches=rows))
        sections.append(f"## N = {N}, batch {B}, H = {H}, d = {d}, n = {n}, chunk {chunk}\n\n"
                        + causal_cost.markdown(rows) + "\n")
    from benchmarks.environment import environment_info

    os.makedirs(args.out_dir, exist_ok=True)
    record = dict(environment=environment_info("python -m tools.kernel_profile", sys.argv[1:] if argv is None
                                               else argv, device.type),
                  device=device_name, dtype=args.dtype, repeats=args.repeats, sizes=sizes)
    with open(os.path.join(args.out_dir, "kernel_profile.json"), "x") as f:
        json.dump(record, f, indent=1)
    with open(os.path.join(args.out_dir, "kernel_profile.md"), "x") as f:
        f.write("\n".join(sections))
    print("\n".join(sections))
    print(f"wrote {os.path.join(args.out_dir, 'kernel_profile.json')} and kernel_profile.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
