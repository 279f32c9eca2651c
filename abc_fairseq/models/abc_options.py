"""Where bounded-memory attention replaces softmax attention, which strategy, and with how many
slots: one definition for every model.

Each attention position of a transformer has two options, ``--{position}-attn`` (``softmax`` or
a strategy of ``abc_fairseq.strategies``: ``abc``, ``abc-relu``, ``linformer``, ``window``, ...)
and ``--{position}-memory`` (slots n, a positive int; the window length or the kernel feature
size for those strategies). Two settings are shared by all positions: ``--linformer-max-positions``
(N_max of ``linformer``; default: the position's maximum source / target positions) and
``--compressive-ratio`` (c of causal ``compressive``).

Models declare the options with the field helpers (dataclass models) or ``add_abc_args``
(argparse models), call ``harden_memory_flags`` in ``add_args`` so a bad size fails at argument
parsing, set defaults in their architectures with ``set_abc_defaults``, and build each layer's
attention spec with ``abc_attention_spec`` (or read the size alone with ``abc_memory_size`` and the
strategy with ``attention_strategy``).
"""

import argparse
from dataclasses import field
from typing import Dict, Iterable, NamedTuple, Optional

from fairseq.dataclass import ChoiceEnum
from fairseq.utils import safe_getattr

from ..modules.phi_projection import ABCAttentionSpec
from ..strategies import StrategyOptions, get_strategy, strategy_names

ATTENTION_CHOICES = ("abc", "softmax") + tuple(name for name in strategy_names() if name != "abc")
AttentionChoice = ChoiceEnum(list(ATTENTION_CHOICES))
DEFAULT_MEMORY_SIZE = 64
DEFAULT_COMPRESSIVE_RATIO = StrategyOptions().compressive_ratio

LINFORMER_MAX_POSITIONS_FLAG = "--linformer-max-positions"
COMPRESSIVE_RATIO_FLAG = "--compressive-ratio"
_OPTION_FLAGS = {"linformer_max_positions": LINFORMER_MAX_POSITIONS_FLAG,
                 "compressive_ratio": COMPRESSIVE_RATIO_FLAG}


class AttentionPosition(NamedTuple):
    """One place attention happens in a transformer.

    name: option prefix (``decoder_self`` -> ``--decoder-self-attn``, ``--decoder-self-memory``).
    phi_attr: attribute of the encoder/decoder that owns this position's shared W_phi.
    description: for help texts.
    """

    name: str
    phi_attr: str
    description: str

    @property
    def attn_key(self) -> str:
        return f"{self.name}_attn"

    @property
    def memory_key(self) -> str:
        return f"{self.name}_memory"

    @property
    def attn_flag(self) -> str:
        return "--" + self.attn_key.replace("_", "-")

    @property
    def memory_flag(self) -> str:
        return "--" + self.memory_key.replace("_", "-")


DECODER_SELF = AttentionPosition("decoder_self", "self_attn_phi", "decoder (causal) self attention")
ENCODER_SELF = AttentionPosition("encoder", "self_attn_phi", "encoder self attention")
DECODER_CROSS = AttentionPosition("decoder_cross", "encoder_attn_phi", "encoder-decoder (cross) attention")
POSITIONS = (DECODER_SELF, ENCODER_SELF, DECODER_CROSS)


# The cfg fields that bound the sequences each position sees, first found wins (the default N_max
# of linformer; RoBERTa-style encoders call it max_positions).
_MAX_POSITIONS_KEYS = {"decoder_self": ("max_target_positions",),
                       "encoder": ("max_source_positions", "max_positions"),
                       "decoder_cross": ("max_source_positions", "max_positions")}


def _attn_help(position: AttentionPosition) -> str:
    return (f"attention used for {position.description}: 'softmax' (fairseq's MultiheadAttention) or a "
            f"bounded-memory strategy: 'abc' (ABC_MLP, Peng et al.), {', '.join(ATTENTION_CHOICES[2:])} "
            f"(see docs/strategies.md)")


def _memory_help(position: AttentionPosition) -> str:
    return (f"memory slots n of bounded-memory {position.description} (window length for 'window', "
            f"feature size for the kernel attentions; unused with {position.attn_flag} softmax)")


def _linformer_help() -> str:
    return ("linformer: N_max, the number of positions (columns) of the learned projection; a longer "
            "sequence is an error. Default: the model's maximum source / target positions")


def _compressive_help() -> str:
    return "compressive (causal): compression ratio c, tokens mean-pooled into one memory slot"


def attn_field(position: AttentionPosition, default: str = "abc"):
    """Dataclass field for ``{position}_attn``; annotate it with ``AttentionChoice``."""
    return field(default=default, metadata={"help": _attn_help(position)})


def memory_field(position: AttentionPosition, default: int = DEFAULT_MEMORY_SIZE):
    """Dataclass field for ``{position}_memory`` (an ``int``)."""
    return field(default=default, metadata={"help": _memory_help(position)})


def linformer_max_positions_field(default: Optional[int] = None):
    """Dataclass field for ``linformer_max_positions`` (an ``Optional[int]``)."""
    return field(default=default, metadata={"help": _linformer_help()})


def compressive_ratio_field(default: int = DEFAULT_COMPRESSIVE_RATIO):
    """Dataclass field for ``compressive_ratio`` (an ``int``)."""
    return field(default=default, metadata={"help": _compressive_help()})


def _positive_count(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number of {what}, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive number of {what}, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type for slot counts; argparse prefixes the error with the flag's name."""
    return _positive_count(text, "memory slots")


def _positive_positions(text: str) -> int:
    return _positive_count(text, "positions")


def _positive_ratio(text: str) -> int:
    return _positive_count(text, "tokens per slot")


def _find_action(parser: argparse.ArgumentParser, flag: str) -> Optional[argparse.Action]:
    return parser._option_string_actions.get(flag)  # argparse keeps no public lookup


def add_abc_args(parser: argparse.ArgumentParser, positions: Iterable[AttentionPosition]) -> None:
    """Add ``--{position}-attn`` / ``--{position}-memory`` to an argparse model's parser.

    Also adds the shared strategy settings ``--linformer-max-positions`` and ``--compressive-ratio``
    (once). No defaults are set here (fairseq lets architectures fill them): use ``set_abc_defaults``.
    """
    positions = list(positions)
    for position in positions:
        if _find_action(parser, position.attn_flag) is None:
            parser.add_argument(position.attn_flag, choices=ATTENTION_CHOICES, help=_attn_help(position))
        if _find_action(parser, position.memory_flag) is None:
            parser.add_argument(position.memory_flag, type=positive_int, metavar="N",
                                help=_memory_help(position))
    if _find_action(parser, LINFORMER_MAX_POSITIONS_FLAG) is None:
        parser.add_argument(LINFORMER_MAX_POSITIONS_FLAG, type=_positive_positions, metavar="N",
                            help=_linformer_help())
    if _find_action(parser, COMPRESSIVE_RATIO_FLAG) is None:
        parser.add_argument(COMPRESSIVE_RATIO_FLAG, type=_positive_ratio, metavar="C",
                            help=_compressive_help())
    harden_memory_flags(parser, positions)


def harden_memory_flags(parser: argparse.ArgumentParser, positions: Iterable[AttentionPosition]) -> None:
    """Make ``--{position}-memory`` flags (and the shared strategy settings) generated from a
    dataclass reject values < 1 at parsing."""
    for position in positions:
        action = _find_action(parser, position.memory_flag)
        if action is not None:
            action.type = positive_int
            action.metavar = "N"
    for flag, parse in ((LINFORMER_MAX_POSITIONS_FLAG, _positive_positions),
                        (COMPRESSIVE_RATIO_FLAG, _positive_ratio)):
        action = _find_action(parser, flag)
        if action is not None:
            action.type = parse


def set_abc_defaults(args, position: AttentionPosition, attn: str = "abc",
                     memory: int = DEFAULT_MEMORY_SIZE) -> None:
    """Architecture defaults: keep values given on the command line."""
    setattr(args, position.attn_key, safe_getattr(args, position.attn_key, attn))
    setattr(args, position.memory_key, safe_getattr(args, position.memory_key, memory))


def attention_strategy(cfg, position: AttentionPosition) -> Optional[str]:
    """The strategy name ``position`` uses, None when it is softmax (also when unset); validated
    against the registry, the error naming the flag."""
    choice = safe_getattr(cfg, position.attn_key, None)
    choice = getattr(choice, "value", choice)  # ChoiceEnum members -> str
    if choice is None or choice == "softmax":
        return None
    if choice not in ATTENTION_CHOICES:
        raise ValueError(
            f"{position.attn_flag} must be one of {', '.join(ATTENTION_CHOICES)}; got {choice!r}")
    return choice


def abc_memory_size(cfg, position: AttentionPosition) -> Optional[int]:
    """Slot count when ``position`` uses bounded-memory attention (any strategy), None when it is
    softmax (also when unset).

    Validates again at model-build time, for configs that never went through argparse (hydra
    configs, checkpoints, hub loading); errors name the command-line flag.
    """
    if attention_strategy(cfg, position) is None:
        return None
    memory = safe_getattr(cfg, position.memory_key, None)
    if memory is None:
        memory = DEFAULT_MEMORY_SIZE
    if isinstance(memory, bool) or not isinstance(memory, int) or memory < 1:
        raise ValueError(
            f"{position.memory_flag} must be a positive number of memory slots, got {memory!r}")
    return memory


def _positive_setting(cfg, key: str, flag: str, default):
    value = safe_getattr(cfg, key, None)
    value = default if value is None else value
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{flag} must be a positive integer, got {value!r}")
    return value


def strategy_options(cfg, position: AttentionPosition) -> StrategyOptions:
    """The strategy settings of ``position`` from ``cfg``, with the flags errors should name."""
    found = (safe_getattr(cfg, key, None) for key in _MAX_POSITIONS_KEYS.get(position.name, ()))
    max_positions = next((value for value in found if value is not None), None)
    return StrategyOptions(
        linformer_max_positions=_positive_setting(cfg, "linformer_max_positions", LINFORMER_MAX_POSITIONS_FLAG,
                                                  max_positions),
        compressive_ratio=_positive_setting(cfg, "compressive_ratio", COMPRESSIVE_RATIO_FLAG,
                                            DEFAULT_COMPRESSIVE_RATIO),
        flags=_flags(position),
    )


def _flags(position: AttentionPosition) -> Dict[str, str]:
    return {"attn": position.attn_flag, "memory_size": position.memory_flag, **_OPTION_FLAGS}


def abc_attention_spec(owner, cfg, position: AttentionPosition, in_dim: int,
                       num_heads: int) -> Optional[ABCAttentionSpec]:
    """The spec a layer builds ``position``'s attention from, or None when it is softmax.

    The module the strategy ties across layers (W_phi, the Linformer matrix) is created and
    registered on ``owner`` (the encoder or decoder) as ``position.phi_attr`` the first time a
    layer asks, and shared by every later layer. ``in_dim`` is the size of the key input (the
    encoder's embed dim for cross attention).
    """
    name = attention_strategy(cfg, position)
    if name is None:
        return None
    memory_size = abc_memory_size(cfg, position)
    options = strategy_options(cfg, position)
    cls = get_strategy(name, flag=position.attn_flag)
    shared = owner._modules.get(position.phi_attr)
    if shared is None:
        shared = cls.build_shared(in_dim, num_heads, memory_size, options)
        if shared is not None:
            owner.add_module(position.phi_attr, shared)
    return ABCAttentionSpec(memory_size, shared, name, options)
