"""Strategy registry: flag value -> Strategy class. Everything that offers strategies (flag choices,
setting flags, config fields) reads it when it needs it, so a strategy registered later, by the
user's own module, is offered like a built-in one."""

from typing import Callable, Dict, List, Tuple, Type

from .base import Setting, Strategy

STRATEGIES: Dict[str, Type[Strategy]] = {}
_SETTINGS_LISTENERS: List[Callable[[Tuple[Setting, ...]], None]] = []


def register(cls: Type[Strategy]) -> Type[Strategy]:
    """Class decorator: make ``cls`` selectable as ``cls.name`` (and its settings flags)."""
    if not cls.name or cls.name in STRATEGIES or cls.name == "softmax":
        raise ValueError(f"strategy name {cls.name!r} is empty, reserved or already registered")
    known = {setting.key: setting for setting in all_settings()}
    for setting in cls.settings:
        if known.get(setting.key, setting) != setting:
            raise ValueError(f"{cls.name}: setting {setting.key!r} is already declared differently")
    new = tuple(setting for setting in cls.settings if setting.key not in known)
    for listener in _SETTINGS_LISTENERS if new else ():
        listener(new)  # before the strategy is offered: a listener's ValueError refuses it
    STRATEGIES[cls.name] = cls
    return cls


def on_new_settings(listener: Callable[[Tuple[Setting, ...]], None]) -> None:
    """Call ``listener(settings)`` with the settings each later registration declares first: what
    is built once from ``all_settings`` (the fairseq models' config fields) extends itself."""
    _SETTINGS_LISTENERS.append(listener)


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


def attention_choices() -> Tuple[str, ...]:
    """Every ``--{position}-attn`` value as the registry stands now: abc, softmax, then the other
    strategies in registration order."""
    return ("abc", "softmax") + tuple(name for name in STRATEGIES if name != "abc")


def get_strategy(name: str, flag: str = "strategy") -> Type[Strategy]:
    """The class registered as ``name``; the error names ``flag`` and the choices."""
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(f"{flag} must be one of {', '.join(STRATEGIES)}; got {name!r}") from None
