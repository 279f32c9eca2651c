"""Command-line pieces every suite shares: value types whose errors name the flag (argparse
prefixes them: ``argument --tokens: must be a positive integer, got '0'``), a table form of flag
definitions, the run, model and output flags, and the checks that need the machine."""

import argparse
import math
import os
from typing import Sequence

import torch

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _number(convert, accept, requirement: str):
    """A type that parses with ``convert`` and keeps the values ``accept`` holds for."""

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not accept(value):
            raise argparse.ArgumentTypeError(f"must be {requirement}, got {text!r}")
        return value

    return parse


positive_int = _number(int, lambda value: value >= 1, "a positive integer")
non_negative_int = _number(int, lambda value: value >= 0, "an integer >= 0")
positive_float = _number(float, lambda value: 0 < value < math.inf, "a positive finite number")


def add_flags(parser: argparse.ArgumentParser, *flags: tuple) -> None:
    """Add each ``(flag, type, default, help[, more add_argument keywords])``."""
    for flag, kind, default, text, *more in flags:
        parser.add_argument(flag, type=kind, default=default, help=text, **(more[0] if more else {}))


def methods_flag(choices, default, what: str = "methods to measure") -> tuple:
    """The --methods flag's row for ``add_flags``: names from ``choices``, in the order given."""
    return ("--methods", None, default, f"{what}, from: {', '.join(choices)}",
            {"nargs": "+", "choices": list(choices), "metavar": "METHOD"})


def add_common_flags(parser: argparse.ArgumentParser, suite, repeats: int, warmup: int, max_seconds: float,
                     dtypes: Sequence[str] = tuple(DTYPES), dtype_default="float32",
                     dtype_help: str = "dtype of inputs and weights") -> None:
    """How the cases run and where the results go; ``suite.call`` names one timed call."""
    call, name = suite.call, suite.name
    add_flags(parser, ("--repeats", non_negative_int, repeats, f"timed {call}s per case after the untimed memory "
                       f"{call}, median reported; 0: time the memory {call} itself (CPU: unprobed)"),
              ("--warmup", non_negative_int, warmup, f"untimed {call}s before the timed ones"),
              ("--rounds", positive_int, 1, "run every case R times, round after round in fresh processes, timed "
               "calls pooled: every case sees the same machine drift (memory: first round)"),
              ("--threads", positive_int, None, "torch intra-op threads per worker (default: torch's own)"),
              ("--dtype", None, dtype_default, dtype_help, {"choices": list(dtypes)}),
              ("--device", None, "cpu", "torch device: cpu, or cuda / cuda:I"),
              ("--seed", non_negative_int, 0, "random seed of weights and inputs"),
              ("--max-seconds", positive_float, max_seconds, f"longest one {call} may take; longer: timeout"),
              ("--out-dir", None, os.path.join("benchmark_results", name), f"folder of {name}.json, .md and .png"))
    parser.add_argument("--profile", action="store_true", help=f"also profile one more, untimed {call} of every case "
                        "(cProfile; the top functions by own time close the report)")
    parser.add_argument("--no-plot", action="store_true", help=f"do not write {name}.png")


def add_model_flags(parser: argparse.ArgumentParser, vocab: int, vocab_help: str, layers: dict, embed_dim: int,
                    heads: int, ffn_dim: int) -> None:
    """A random-weight transformer's sizes; ``layers``: each layer flag and its default."""
    add_flags(parser, ("--vocab", positive_int, vocab, vocab_help),
              *((flag, positive_int, default, flag[2:].replace("-", " ")) for flag, default in layers.items()),
              ("--embed-dim", positive_int, embed_dim, "model dimension"),
              ("--heads", positive_int, heads, "attention heads"),
              ("--ffn-dim", positive_int, ffn_dim, "FFN hidden size"))


def check_model_flags(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    if args.embed_dim and args.heads and args.embed_dim % args.heads:
        parser.error(f"--embed-dim {args.embed_dim} must be divisible by --heads {args.heads}")
    if args.vocab is not None and args.vocab < 8:
        parser.error(f"--vocab {args.vocab} is too small: fairseq reserves 4 special symbols")


def check_common_flags(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Reject an unusable --device (naming it); sort sizes (names keep the order given) without repeats."""
    try:
        device = torch.device(args.device)
    except RuntimeError as exc:
        parser.error(f"--device {args.device!r}: {exc}")
    if device.type not in ("cpu", "cuda"):
        parser.error(f"--device must be cpu or cuda[:index], got {args.device!r}")
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error(f"--device {args.device}: CUDA is not available on this machine")
    for name, tidy in (("lengths", sorted), ("memories", sorted), ("methods", list), ("cases", list)):
        if isinstance(getattr(args, name, None), list):
            setattr(args, name, tidy(dict.fromkeys(getattr(args, name))))
