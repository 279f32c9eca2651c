"""The command line of the data tools run as ``python -m data_prep.<package>.<tool>``."""

import argparse


def module_parser(module: str, doc: str) -> argparse.ArgumentParser:
    """A parser whose usage line shows the command to type (``python -m MODULE``) and whose
    --help prints the module docstring ``doc`` as it is laid out."""
    return argparse.ArgumentParser(prog="python -m " + module, description=doc,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
