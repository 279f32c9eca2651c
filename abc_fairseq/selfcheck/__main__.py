"""Check the Triton kernels of ABC against the PyTorch path on this machine's GPU: run this first
on a new GPU, before training with ``--abc-backend auto`` or ``triton``.

    python -m abc_fairseq.selfcheck                 # CUDA: fp32, fp16, bf16; d, n in {64, 128}; N up to 8192
    python -m abc_fairseq.selfcheck --json out.json --no-timing

Every Triton op (``causal_abc``, ``causal_gsa``, ``causal_abc_step``, ``abc_memory``, ``abc_read``)
is compared with the PyTorch path on the same device, at every pairing of head dim and memory size
64 and 128 (and one pair that is not a power of two): values and gradients within the tolerance of
the input precision (see ``checks.TOLERANCE``), no output row changed by later rows, a state
carried from a prefix continuing the sequence as the full pass does, and padding that writes
nothing. On CUDA it also times causal ABC forward + backward against
``scaled_dot_product_attention`` and, when installed, flash-linear-attention's ``chunk_abc``.
Without CUDA the same checks run under Triton's interpreter (TRITON_INTERPRET=1) at small sizes, in
fp32 and fp16 (the interpreter's bf16 ``tl.dot`` is wrong). Prints PASS/FAIL per check and a table,
writes JSON, and exits 1 on any mismatch (0 when everything passes).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m abc_fairseq.selfcheck", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default=None,
                        help="where to write the results (default: abc_selfcheck_<date-time>.json here; an "
                             "existing file is never overwritten)")
    parser.add_argument("--no-timing", action="store_true", help="skip the timings (CUDA only)")
    parser.add_argument("--quick", action="store_true", help="CUDA: N up to 2048 only")
    return parser


# Head dims and memory sizes the checks cover on CUDA: every padded tile width the launchers take
# from 64 up (64 and 128, in every pairing), and one pair of widths that are not powers of two
# (their tiles are masked). Narrower tiles are the interpreter's sizes, run in CI.
CUDA_WIDTHS = ((64, 64), (64, 128), (128, 64), (128, 128), (40, 24))


def _cases(cuda: bool, quick: bool):
    """(size, dtype) pairs of the checks. On CUDA every pair of ``CUDA_WIDTHS`` at 1,000 rows (not
    a multiple of any chunk) in fp32 and bf16 (fp16 shares bf16's code path: each width compiles
    every kernel once more), then longer sequences at d = n = 64 in fp32, fp16 and bf16. Under the
    interpreter (no bf16) a few chunks of 16 rows in fp32 and fp16."""
    import torch

    from .checks import Size

    if not cuda:  # the interpreter runs every program in NumPy: a few chunks of 16 rows
        sizes = [Size(1, 2, 40, 16, 8), Size(1, 1, 36, 32, 16), Size(1, 1, 20, 8, 32)]
        return [(size, dtype) for size in sizes for dtype in (torch.float32, torch.float16)]
    lengths = (2048,) if quick else (2048, 8192)
    widths = [(Size(2, 4, 1000, d, n), dtype) for d, n in CUDA_WIDTHS for dtype in (torch.float32, torch.bfloat16)]
    return widths + [(Size(max(1, 16384 // N), 4, N, 64, 64), dtype) for N in lengths
                     for dtype in (torch.float32, torch.float16, torch.bfloat16)]


def _timing_sizes(quick: bool):
    """The timed sizes (CUDA): 8,192 tokens at N = 512 .. 8,192, d = 64 and 128, n = 64."""
    from .checks import Size

    lengths = (512, 2048) if quick else (512, 2048, 8192)
    return [Size(max(1, 8192 // N), 4, N, d, 64) for N in lengths for d in (64, 128)]


def _environment(cuda: bool) -> dict:
    import torch

    env = dict(torch=torch.__version__, python=platform.python_version(), date=time.strftime("%Y-%m-%d %H:%M:%S"),
               machine=platform.processor() or platform.machine(), threads=torch.get_num_threads())
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:
        env["triton"] = None
    from .fla_peer import fla_record

    env.update(fla_record())  # the peer the timings compare with: fla-core's version (None: absent), its layout
    if cuda:
        props = torch.cuda.get_device_properties(0)
        env.update(device=props.name, capability=f"sm_{props.major}{props.minor}",
                   shared_memory_per_block=getattr(props, "shared_memory_per_block_optin", None))
    else:
        env.update(device="cpu (Triton interpreter)")
    try:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                       text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        env["commit"] = None
    return env


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    import torch

    cuda = torch.cuda.is_available()
    if not cuda:
        os.environ["TRITON_INTERPRET"] = "1"  # before Triton is imported (it reads it then)
    import importlib.util
    if importlib.util.find_spec("triton") is None:
        print("FAIL: the triton package is not installed (pip install triton)")
        return 1
    path = args.json or time.strftime("abc_selfcheck_%Y%m%d-%H%M%S.json")
    if os.path.exists(path):
        _parser().error(f"--json {path} exists: name a new file (nothing is overwritten)")

    from .checks import CHECKS

    device = "cuda" if cuda else "cpu"
    results = []
    for size, dtype in _cases(cuda, args.quick):
        for check in CHECKS:
            for result in check(size, dtype, device):
                results.append(result)
                print(f"{'PASS' if result.passed else 'FAIL'}  {result.op:16s} {result.check:40s} "
                      f"{result.dtype:9s} {result.size:28s} error {result.error:.2e} <= {result.tolerance:.0e}",
                      flush=True)
    timings = []
    if cuda and not args.no_timing:
        from .timing import time_causal

        print("\ncausal ABC forward + backward, ms (median of 5)")
        for size in _timing_sizes(args.quick):
            for dtype in (torch.float16, torch.bfloat16):
                row = dict(size=str(size), dtype=str(dtype).replace("torch.", ""), **time_causal(size, dtype))
                timings.append(row)
                print("  " + "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()))
    failed = [r for r in results if not r.passed]
    print(f"\n{len(results) - len(failed)} of {len(results)} checks passed"
          + (f"; FAILED: {', '.join(sorted({f'{r.op} {r.check} ({r.dtype})' for r in failed}))}" if failed else ""))
    with open(path, "x") as f:
        json.dump(dict(environment=_environment(cuda), passed=not failed, checks=[r.as_dict() for r in results],
                       timings=timings), f, indent=1)
    print(f"{'PASS' if not failed else 'FAIL'}: results in {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
