"""What a strategy may be configured with besides its memory size: ``Setting`` (one declared
option, its type and range, one command-line flag) and ``StrategyOptions`` (the values one
strategy gets, and the flags its errors name)."""

import argparse
import math
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Union

Number = Union[int, float]


def is_positive_int(value) -> bool:
    """Whether ``value`` is a positive int (bool excluded): the one test of memory sizes."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def check_memory_size(memory_size, flag: str) -> None:
    """ValueError naming ``flag`` unless ``memory_size`` is a positive int."""
    if not is_positive_int(memory_size):
        raise ValueError(f"{flag} must be a positive number of memory slots, got {memory_size!r}")


@dataclass(frozen=True)
class Setting:
    """A setting a strategy declares besides the memory size: one command-line flag shared by
    every attention position (``--`` + key with dashes).

    key: the config attribute and the ``StrategyOptions`` key, e.g. ``compressive_ratio``.
    unit: what the number counts or is, for help and errors.
    default: used when the setting is not given; None with ``default_is_max_positions``: the
        position's maximum sequence length.
    kind: ``int`` or ``float``, the value's type (the flag's, the config field's). A float setting
        also takes an int (a config written when the setting was an int still loads).
    low, high: the inclusive range of allowed values; both None: positive (ints from 1, floats
        above 0). Floats must be finite.
    """

    key: str
    unit: str
    help: str
    default: Optional[Number] = None
    default_is_max_positions: bool = False
    metavar: str = "N"
    kind: type = int
    low: Optional[Number] = None
    high: Optional[Number] = None

    def __post_init__(self):
        if self.kind not in (int, float):
            raise ValueError(f"setting {self.key}: kind must be int or float, got {self.kind!r}")

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")

    def _in_range(self, value: Number) -> bool:
        if self.low is None and self.high is None:
            return value > 0
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def _requirement(self) -> str:
        """What a valid value is, for errors: 'a positive integer', 'a number in [0, 1]', ..."""
        noun = "integer" if self.kind is int else "number"
        if self.low is None and self.high is None:
            return f"a positive {noun}"
        low = "-inf" if self.low is None else self.low
        high = "inf" if self.high is None else self.high
        return f"{'an' if noun == 'integer' else 'a'} {noun} in [{low}, {high}]"

    def check(self, value, flag: Optional[str] = None) -> Number:
        """``value`` as this setting's kind, or ValueError naming ``flag`` (default: the setting's)."""
        whole = isinstance(value, int) and not isinstance(value, bool)
        fits = whole or (self.kind is float and isinstance(value, float) and math.isfinite(value))
        if not fits or not self._in_range(value):
            raise ValueError(f"{flag or self.flag} must be {self._requirement()} ({self.unit}), got {value!r}")
        return self.kind(value)

    def parse(self, text: str) -> Number:
        """argparse type of the flag (argparse prefixes the error with the flag)."""
        positive_count = self.kind is int and self.low is None and self.high is None
        wanted = f"a positive number of {self.unit}" if positive_count else f"{self._requirement()} ({self.unit})"
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
        try:
            return self.check(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {wanted}, got {text}") from None


class StrategyOptions:
    """The settings of one strategy (keys of its ``Setting`` declarations) and the command-line
    flags errors should name (``{"memory_size": "--decoder-self-memory"}``; without one an error
    names the setting). Settings another strategy declares are ignored."""

    def __init__(self, flags: Optional[Mapping[str, str]] = None, **values: Optional[Number]):
        self.values: Dict[str, Optional[Number]] = dict(values)
        self.flags: Dict[str, str] = dict(flags or {})

    def flag(self, key: str) -> str:
        return self.flags.get(key, key)

    def get(self, setting: Setting) -> Optional[Number]:
        value = self.values.get(setting.key)
        return setting.default if value is None else value

    def __eq__(self, other) -> bool:
        return isinstance(other, StrategyOptions) and (self.values, self.flags) == (other.values, other.flags)

    def __repr__(self) -> str:
        return f"StrategyOptions({self.values}, flags={self.flags})"
