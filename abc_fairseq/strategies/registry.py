"""Strategy registry: flag value -> Strategy class."""

from typing import Dict, Tuple, Type

from .base import Setting, Strategy

STRATEGIES: Dict[str, Type[Strategy]] = {}


def register(cls: Type[Strategy]) -> Type[Strategy]:
    """Class decorator: make ``cls`` selectable as ``cls.name`` (and its settings flags)."""
    if not cls.name or cls.name in STRATEGIES or cls.name == "softmax":
        raise ValueError(f"strategy name {cls.name!r} is empty, reserved or already registered")
    known = {setting.key: setting for setting in all_settings()}
    for setting in cls.settings:
        if known.get(setting.key, setting) != setting:
            raise ValueError(f"{cls.name}: setting {setting.key!r} is already declared differently")
    STRATEGIES[cls.name] = cls
    return cls


def all_settings() -> Tuple[Setting, ...]:
    """Every registered strategy's settings, once each, in registration order: one flag each."""
    found: Dict[str, Setting] = {}
    for cls in STRATEGIES.values():
        for setting in cls.settings:
            found.setdefault(setting.key, setting)
    return tuple(found.values())


def strategy_names() -> Tuple[str, ...]:
    """Registered names, in registration order."""
    return tuple(STRATEGIES)


def get_strategy(name: str, flag: str = "strategy") -> Type[Strategy]:
    """The class registered as ``name``; the error names ``flag`` and the choices."""
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(f"{flag} must be one of {', '.join(STRATEGIES)}; got {name!r}") from None
