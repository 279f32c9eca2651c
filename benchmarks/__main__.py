"""Entry point: ``python -m benchmarks <subcommand> [flags]``.

Each subcommand is a suite: a module of this package exposing ``NAME``, ``DESCRIPTION``,
``add_arguments(parser)`` and what ``driver.run_suite`` calls; adding one means adding its name
to ``SUBCOMMANDS``.
"""

import argparse
import importlib
import sys
from typing import List, Optional

from .driver import run_suite

# Subcommand name -> suite module inside this package.
SUBCOMMANDS = {
    "attention": "attention",
    "decode": "decode",
    "encode": "encode",
    "generate": "generate",
    "train": "train",
}


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows defaults, except None and False (those flags say in their help what happens)."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per entry of ``SUBCOMMANDS``."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmarks for abc-fairseq (ABC, Attention with Bounded-memory Control).",
    )
    subparsers = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    subparsers.required = True
    for name, module_name in SUBCOMMANDS.items():
        module = importlib.import_module(f"{__package__}.{module_name}")
        sub = subparsers.add_parser(
            name,
            help=module.DESCRIPTION.splitlines()[0],
            description=module.DESCRIPTION,
            formatter_class=_HelpFormatter,
        )
        module.add_arguments(sub)
        sub.set_defaults(_module=module, _parser=sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``) and run the chosen subcommand."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv
    return run_suite(args._module, args)


if __name__ == "__main__":
    sys.exit(main())
