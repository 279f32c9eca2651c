"""argparse value types. argparse prefixes their messages with the flag, e.g.
``argument --tokens: must be a positive integer, got '0'``."""

import argparse
import math
from typing import Callable


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
