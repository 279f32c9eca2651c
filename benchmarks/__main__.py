"""Entry point: ``python -m benchmarks <suite> [flags]``, one sub-parser per suite of ``SUITES``."""

import argparse
import importlib
import sys
from typing import List, Optional

from . import SUITES
from .harness import run_suite


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows defaults, except None and False (those flags say in their help what happens)."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per suite."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmarks for abc-fairseq (ABC, Attention with Bounded-memory Control).")
    subparsers = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", required=True)
    for name in SUITES:
        suite = importlib.import_module(f"{__package__}.{name}").SUITE
        sub = subparsers.add_parser(name, help=suite.description.splitlines()[0], description=suite.description,
                                    formatter_class=_HelpFormatter)
        suite.add_arguments(sub)
        sub.set_defaults(_suite=suite, _parser=sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``) and run the chosen suite."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    return run_suite(args._suite, args)


if __name__ == "__main__":
    sys.exit(main())
