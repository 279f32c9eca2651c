"""``python -m abc_fairseq.transfer``: the flags, their checks, the run."""

import argparse
import logging
import os
import sys
from typing import List, Optional

from .config import TransferConfig
from .errors import TransferError


def _positive(kind, name):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive {name}, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a positive {name}, got {text!r}")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    from .. import transfer as package

    count, number = _positive(int, "integer"), _positive(float, "number")
    parser = argparse.ArgumentParser(prog="python -m abc_fairseq.transfer", description=package.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", required=True, metavar="ABC_PT",
                        help="a converted checkpoint (python -m abc_fairseq.convert)")
    parser.add_argument("--output", required=True, metavar="OUT_PT",
                        help="the checkpoint to write (never an existing file, never the input)")
    parser.add_argument("--save-dir", required=True, metavar="DIR",
                        help="the run state (transfer_last.pt): a new or empty folder, or this tool's to resume")
    parser.add_argument("--data", metavar="DIR", help="the dataset folder (default: the checkpoint's task's)")
    parser.add_argument("--subset", default="train", help="the split to train on (default: train)")
    parser.add_argument("--max-updates", type=count, default=1000, metavar="K", help="updates (default: 1000)")
    parser.add_argument("--lr", type=number, default=1e-3, help="Adam's learning rate, constant (default: 1e-3)")
    parser.add_argument("--max-tokens", type=count, default=4096, metavar="N",
                        help="tokens per batch (default: 4096)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the data order (default: 1)")
    parser.add_argument("--train-qk", action="store_true",
                        help="also train the q and k projections of the converted attention")
    parser.add_argument("--log-interval", type=count, default=10, metavar="N",
                        help="updates between log lines (default: 10)")
    parser.add_argument("--save-interval", type=count, default=100, metavar="N",
                        help="updates between saves of the run state (default: 100; also at the end)")
    parser.add_argument("--cpu", action="store_true", help="run on CPU even where CUDA is available")
    parser.add_argument("--force", action="store_true",
                        help="replace --output when it is an earlier output of transfer (nothing else)")
    return parser


def config_of(args: argparse.Namespace) -> TransferConfig:
    """The parsed flags as the run's one settings object; files that must exist are checked here."""
    if not os.path.isfile(args.input):
        raise TransferError(f"--input {args.input}: no such file")
    if args.data is not None and not os.path.isdir(args.data):
        raise TransferError(f"--data {args.data}: no such folder")
    return TransferConfig(input=args.input, output=args.output, save_dir=args.save_dir, data=args.data,
                          subset=args.subset, max_updates=args.max_updates, lr=args.lr, max_tokens=args.max_tokens,
                          seed=args.seed, train_qk=args.train_qk, log_interval=args.log_interval,
                          save_interval=args.save_interval, cpu=args.cpu, force=args.force)


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from ..convert.checkpoint_io import ConversionError
    from .loop import transfer

    try:
        transfer(config_of(args))
    except (TransferError, ConversionError) as e:
        print(f"transfer: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
