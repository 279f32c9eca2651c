"""Strategy registry: flag value -> Strategy class."""

from typing import Dict, Tuple, Type

from .base import Strategy

STRATEGIES: Dict[str, Type[Strategy]] = {}


def register(cls: Type[Strategy]) -> Type[Strategy]:
    """Class decorator: make ``cls`` selectable as ``cls.name``."""
    if not cls.name or cls.name in STRATEGIES or cls.name == "softmax":
        raise ValueError(f"strategy name {cls.name!r} is empty, reserved or already registered")
    STRATEGIES[cls.name] = cls
    return cls


def strategy_names() -> Tuple[str, ...]:
    """Registered names, in registration order."""
    return tuple(STRATEGIES)


def get_strategy(name: str, flag: str = "strategy") -> Type[Strategy]:
    """The class registered as ``name``; the error names ``flag`` and the choices."""
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(f"{flag} must be one of {', '.join(STRATEGIES)}; got {name!r}") from None
