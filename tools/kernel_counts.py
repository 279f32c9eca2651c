"""Counted traffic and work of one forward + backward on the Triton kernels, under Triton's
interpreter (TRITON_INTERPRET=1, CPU): per kernel the launches and programs, the bytes loaded and
stored, the ``tl.dot`` products by operand type and tile shape, and every PyTorch op between the
launches, with those that scan the sequence (N dependent steps on a GPU) flagged.

    python -m tools.kernel_counts --out-dir docs/gpu_counts --replace
    python -m tools.kernel_counts -N 256 --batch 2 --heads 2 -d 64 -n 64 --dtype fp32 --ops abc --out-dir DIR

The ops: causal ABC (``ops.causal.causal_abc``) and causal GSA (``ops.gsa.causal_gsa``) with
backend="triton", and flash-linear-attention's ``chunk_abc`` / ``chunk_gsa`` (fla-core) on the same
problem in fla's layout [B, T, H, *]. Bytes count only the active lanes of each load and store
(the mask's True lanes), two ways: requested (every lane of every load, reloads included) and
distinct (each address once per launch: the traffic of a perfect cache, which is what
``tools.causal_cost`` models; its per-launch bytes are set beside both). A PyTorch op's bytes are
its tensor operands read once and its results written once (views and allocations move nothing,
fills and new tensors only write, index_select reads the rows it selects).
fla's autotuned kernels run their first configuration (the interpreter cannot time the others).
Writes counts.json and counts.md (commit, command, sizes) to --out-dir.
"""

import argparse
import json
import os
import sys
from typing import List

from .interpreter_counter import DTYPES, KERNEL_VARIABLES, OPS, InterpreterCounter  # noqa: F401 (the package's names)
from .kernel_count_report import HEADER, Sizes, count, markdown, model_name, op_record  # noqa: F401

H100_SHARED = 232448  # bytes of shared memory one block may opt into on an H100 (sm_90)


def launcher_chunk(N: int, d: int, n: int, dtype: str) -> int:
    """The chunk the causal launcher takes on an H100 without measuring (``sizes.device_chunk``:
    the compile table's largest chunk without spills, else the one spilling least)."""
    import torch

    from abc_fairseq.ops.backend import kernel_chunk
    from abc_fairseq.ops.triton.sizes import pick_chunk

    return pick_chunk(kernel_chunk(64, N), 90, H100_SHARED, n, d, d, getattr(torch, DTYPES[dtype]))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.kernel_counts", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-N", "--length", type=int, default=512, help="sequence length N (default: %(default)s)")
    parser.add_argument("--batch", type=int, default=1, help="batch B (default: %(default)s)")
    parser.add_argument("--heads", type=int, default=2, help="heads H (default: %(default)s)")
    parser.add_argument("-d", "--head-dim", type=int, default=64, help="key and value width d (default: %(default)s)")
    parser.add_argument("-n", "--memory", type=int, default=64, help="memory slots n (default: %(default)s)")
    parser.add_argument("--chunk", type=int, default=None,
                        help="our kernels' chunk C (default: what the launcher takes on an H100 from "
                             "compile_table.json without measuring; fla picks its own)")
    parser.add_argument("--dtype", choices=tuple(DTYPES), default="fp16", help="input dtype (default: %(default)s)")
    parser.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS), help="ops to count (default: all)")
    parser.add_argument("--out-dir", default="docs/gpu_counts",
                        help="folder for counts.{json,md} (default: %(default)s)")
    parser.add_argument("--replace", action="store_true",
                        help="replace counts.{json,md} in --out-dir when this tool wrote them (never other files)")
    return parser


def _check(args, parser) -> None:
    for flag in ("length", "batch", "heads", "head_dim", "memory"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.chunk is not None and args.chunk not in (16, 32, 64, 128):
        parser.error(f"--chunk must be 16, 32, 64 or 128, got {args.chunk}")
    if any(op.startswith("fla-") for op in args.ops) and args.memory & (args.memory - 1):
        parser.error(f"--memory {args.memory}: fla's chunk_abc / chunk_gsa take a power of two (drop the fla ops)")
    for name in ("counts.json", "counts.md"):
        path = os.path.join(args.out_dir, name)
        if os.path.exists(path) and not (args.replace and _ours(path)):
            parser.error(f"--out-dir {args.out_dir} already holds {name}"
                         + (" (not written by this tool: nothing is overwritten)" if args.replace
                            else ": pass --replace to replace what this tool wrote, or name a new folder"))


def _ours(path: str) -> bool:
    """Whether ``path`` is a counts file this tool wrote."""
    with open(path) as f:
        text = f.read()
    if path.endswith(".json"):
        try:
            return json.loads(text).get("tool") == "tools.kernel_counts"
        except ValueError:
            return False
    return text.startswith(HEADER)


def _dirty_paths() -> List[str]:
    """Uncommitted changes to the code counted (the kernels, the ops, the model), as git lists them."""
    import subprocess

    try:
        return subprocess.run(["git", "status", "--porcelain", "--", "abc_fairseq/ops", "tools/causal_cost.py"],
                              capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return []


def _interpreted() -> bool:
    """Switch Triton's interpreter on before Triton is imported; False if it was imported compiled."""
    if "triton" not in sys.modules:
        os.environ["TRITON_INTERPRET"] = "1"
        return True
    from triton import knobs

    return bool(knobs.runtime.interpret)


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _check(args, parser)
    if not _interpreted():
        parser.error("Triton was imported without its interpreter: run this tool in its own process")
    chunk = args.chunk or launcher_chunk(args.length, args.head_dim, args.memory, args.dtype)
    sizes = Sizes(args.length, args.batch, args.heads, args.head_dim, args.memory, chunk, args.dtype)
    from benchmarks.environment import environment_info

    record = dict(tool="tools.kernel_counts", environment=environment_info(
        "python -m tools.kernel_counts", sys.argv[1:] if argv is None else list(map(str, argv))),
        uncommitted=_dirty_paths(), sizes=vars(sizes), ops={}, unavailable={},
        variables={name: os.environ[name] for name in KERNEL_VARIABLES if name in os.environ})
    for op in args.ops:
        print(f"counting {op} ...", flush=True)
        try:
            record["ops"][op] = op_record(op, sizes)
        except ImportError as error:  # fla-core absent
            record["unavailable"][op] = f"{type(error).__name__}: {error}"
    text = markdown(record)
    os.makedirs(args.out_dir, exist_ok=True)
    mode = "w" if args.replace else "x"
    with open(os.path.join(args.out_dir, "counts.json"), mode) as f:
        json.dump(record, f, indent=1)
    with open(os.path.join(args.out_dir, "counts.md"), mode) as f:
        f.write(text)
    print(text)
    print(f"wrote {os.path.join(args.out_dir, 'counts.json')} and counts.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
