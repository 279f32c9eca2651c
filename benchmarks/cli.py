"""The command-line pieces every suite shares: value types whose errors name the flag
(argparse prefixes them, e.g. ``argument --tokens: must be a positive integer, got '0'``), the
measurement flags (dtype, device, seed, threads, repeats, warmup, time limit, rounds), the output
flags, and the checks that need the machine."""

import argparse
import math
import os
from typing import Callable, Optional, Sequence

import torch

from .probes import CPU_PROBES

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _number(convert: Callable[[str], float], accept: Callable[[float], bool], requirement: str):
    """A type that parses with ``convert`` and keeps values for which ``accept`` holds."""

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {requirement}, got {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"must be {requirement}, got {text!r}")
        return value

    parse.__doc__ = f"A value that must be {requirement}."
    return parse


positive_int = _number(int, lambda value: value >= 1, "a positive integer")
non_negative_int = _number(int, lambda value: value >= 0, "an integer >= 0")
positive_float = _number(float, lambda value: 0 < value < math.inf, "a positive finite number")
non_negative_float = _number(float, lambda value: 0 <= value < math.inf, "a finite number >= 0")


def add_run_flags(parser: argparse.ArgumentParser, call: str, repeats: int, warmup: int, max_seconds: float,
                  rounds: bool = True, repeats_help: Optional[str] = None, repeats_flag: str = "--repeats",
                  dtypes: Sequence[str] = tuple(DTYPES), dtype_default: Optional[str] = "float32",
                  dtype_help: str = "dtype of inputs and weights") -> None:
    """The flags of how a suite's cases run: --repeats (named ``repeats_flag``), --warmup, --rounds
    (when ``rounds``), --threads, --dtype (from ``dtypes``), --device, --seed,
    --max-seconds. ``call`` names one timed call in the help ("forward", "decode", ...)."""
    parser.add_argument(repeats_flag, dest="repeats", metavar=repeats_flag[2:].upper(),
                        type=non_negative_int if repeats_help else positive_int, default=repeats,
                        help=repeats_help or f"timed {call}s per case, after the untimed memory {call}; "
                                             "the median is reported")
    if rounds:
        parser.add_argument("--rounds", type=positive_int, default=1,
                            help="run every case this many times, round after round, each time in a fresh "
                                 "process, and pool the timed calls: on machines whose speed drifts, this "
                                 "exposes every case to the same drift (memory is taken from the first round)")
    parser.add_argument("--warmup", type=non_negative_int, default=warmup,
                        help=f"untimed {call}s before the timed ones (after the memory {call})")
    parser.add_argument("--threads", type=positive_int, default=None,
                        help="torch intra-op threads in each worker (default: torch's own default)")
    parser.add_argument("--dtype", choices=list(dtypes), default=dtype_default, help=dtype_help)
    parser.add_argument("--device", default="cpu",
                        help="torch device: cpu, or cuda / cuda:I (memory from torch.cuda.max_memory_allocated)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="random seed of weights and inputs")
    parser.add_argument("--max-seconds", type=positive_float, default=max_seconds,
                        help=f"longest one {call} may take; a case over it is reported as timeout")


def add_model_flags(parser: argparse.ArgumentParser, vocab: int, vocab_help: str, layers: dict, embed_dim: int,
                    heads: int, ffn_dim: int) -> None:
    """The dimensions of a model suite's random-weight transformer; ``layers`` maps each layer
    flag (e.g. ``--encoder-layers``) to its default."""
    parser.add_argument("--vocab", type=positive_int, default=vocab, help=vocab_help)
    for flag, default in layers.items():
        parser.add_argument(flag, type=positive_int, default=default, help=flag[2:].replace("-", " "))
    parser.add_argument("--embed-dim", type=positive_int, default=embed_dim, help="model dimension")
    parser.add_argument("--heads", type=positive_int, default=heads, help="attention heads")
    parser.add_argument("--ffn-dim", type=positive_int, default=ffn_dim, help="FFN hidden size")


def check_model_flags(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """The checks of the model flags' values that involve two flags or fairseq (None: not given)."""
    if args.embed_dim and args.heads and args.embed_dim % args.heads:
        parser.error(f"--embed-dim {args.embed_dim} must be divisible by --heads {args.heads}")
    if args.vocab is not None and args.vocab < 8:
        parser.error(f"--vocab {args.vocab} is too small: fairseq reserves 4 special symbols")


DEFAULT_MEMORY_FRACTION = 0.8  # of MemAvailable, the default --max-memory-gib


def mem_available_bytes() -> Optional[int]:
    """MemAvailable from /proc/meminfo, or None where it cannot be read."""
    try:
        with open("/proc/meminfo") as handle:
            return next(int(line.split()[1]) * 1024 for line in handle if line.startswith("MemAvailable:"))
    except (OSError, ValueError, StopIteration):
        return None


def add_output_flags(parser: argparse.ArgumentParser, name: str, cpu_memory_probe: str = "auto") -> None:
    """--max-memory-gib, --cpu-memory-probe (default ``cpu_memory_probe``), --out-dir and
    --no-plot; ``name`` names the files."""
    parser.add_argument("--max-memory-gib", type=non_negative_float, default=None,
                        help="CPU only: cap each worker's extra address space so an oversized case fails "
                             "as oom instead of invoking the system's OOM killer; 0 disables "
                             f"(default: {DEFAULT_MEMORY_FRACTION:g} x MemAvailable at start)")
    parser.add_argument("--cpu-memory-probe", choices=CPU_PROBES, default=cpu_memory_probe,
                        help="how CPU peak memory is measured (see benchmarks/probes.py): "
                             "hwm = kernel high-water mark reset via /proc/self/clear_refs, sampler = "
                             "1 ms /proc/self/statm polling, maxrss = getrusage; auto = hwm if possible; "
                             "tensors = peak bytes held in tensors, from torch.profiler's allocation events "
                             "(deterministic; ignores memory held outside tensors)")
    parser.add_argument("--out-dir", default=os.path.join("benchmark_results", name),
                        help=f"directory for {name}.json, {name}.md and {name}.png")
    parser.add_argument("--no-plot", action="store_true", help=f"do not write {name}.png")


def normalise_lists(args: argparse.Namespace) -> None:
    """Sizes sorted without repeats, names in the order given without repeats (None: not given)."""
    for name in ("lengths", "memories"):
        if isinstance(getattr(args, name, None), list):
            setattr(args, name, sorted(set(getattr(args, name))))
    for name in ("methods", "cases"):
        if isinstance(getattr(args, name, None), list):
            setattr(args, name, list(dict.fromkeys(getattr(args, name))))


def check_device_and_memory(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Reject an unusable --device (naming it) and resolve the default --max-memory-gib."""
    try:
        device = torch.device(args.device)
    except RuntimeError as exc:
        parser.error(f"--device {args.device!r}: {exc}")
    if device.type not in ("cpu", "cuda"):
        parser.error(f"--device must be cpu or cuda[:index], got {args.device!r}")
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error(f"--device {args.device}: CUDA is not available on this machine")
    if args.max_memory_gib is None:
        available = mem_available_bytes()
        args.max_memory_gib = DEFAULT_MEMORY_FRACTION * available / 2 ** 30 if available else 0.0
