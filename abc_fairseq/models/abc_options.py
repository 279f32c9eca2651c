"""Where ABC replaces softmax attention, and with how many slots: one definition for every model.

Each attention position of a transformer has two options, ``--{position}-attn`` (``abc`` or
``softmax``) and ``--{position}-memory`` (slots n, a positive int). Models declare them with the
field helpers (dataclass models) or ``add_abc_args`` (argparse models), call
``harden_memory_flags`` in ``add_args`` so a bad size fails at argument parsing, set defaults in
their architectures with ``set_abc_defaults``, and read them with ``abc_memory_size``.
"""

import argparse
from dataclasses import field
from typing import Iterable, NamedTuple, Optional

from fairseq.dataclass import ChoiceEnum
from fairseq.utils import safe_getattr

ATTENTION_CHOICES = ("abc", "softmax")
AttentionChoice = ChoiceEnum(list(ATTENTION_CHOICES))
DEFAULT_MEMORY_SIZE = 64


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


def _attn_help(position: AttentionPosition) -> str:
    return (f"attention used for {position.description}: 'abc' (bounded memory, Peng et al.) or "
            f"'softmax' (fairseq's MultiheadAttention)")


def _memory_help(position: AttentionPosition) -> str:
    return f"memory slots n of ABC {position.description} (used with {position.attn_flag} abc)"


def attn_field(position: AttentionPosition, default: str = "abc"):
    """Dataclass field for ``{position}_attn``; annotate it with ``AttentionChoice``."""
    return field(default=default, metadata={"help": _attn_help(position)})


def memory_field(position: AttentionPosition, default: int = DEFAULT_MEMORY_SIZE):
    """Dataclass field for ``{position}_memory`` (an ``int``)."""
    return field(default=default, metadata={"help": _memory_help(position)})


def positive_int(text: str) -> int:
    """argparse type for slot counts; argparse prefixes the error with the flag's name."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number of memory slots, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive number of memory slots, got {value}")
    return value


def _find_action(parser: argparse.ArgumentParser, flag: str) -> Optional[argparse.Action]:
    return parser._option_string_actions.get(flag)  # argparse keeps no public lookup


def add_abc_args(parser: argparse.ArgumentParser, positions: Iterable[AttentionPosition]) -> None:
    """Add ``--{position}-attn`` / ``--{position}-memory`` to an argparse model's parser.

    No defaults are set here (fairseq lets architectures fill them): use ``set_abc_defaults``.
    """
    for position in positions:
        if _find_action(parser, position.attn_flag) is None:
            parser.add_argument(position.attn_flag, choices=ATTENTION_CHOICES, help=_attn_help(position))
        if _find_action(parser, position.memory_flag) is None:
            parser.add_argument(position.memory_flag, type=positive_int, metavar="N",
                                help=_memory_help(position))
    harden_memory_flags(parser, positions)


def harden_memory_flags(parser: argparse.ArgumentParser, positions: Iterable[AttentionPosition]) -> None:
    """Make ``--{position}-memory`` flags generated from a dataclass reject sizes < 1 at parsing."""
    for position in positions:
        action = _find_action(parser, position.memory_flag)
        if action is not None:
            action.type = positive_int
            action.metavar = "N"


def set_abc_defaults(args, position: AttentionPosition, attn: str = "abc",
                     memory: int = DEFAULT_MEMORY_SIZE) -> None:
    """Architecture defaults: keep values given on the command line."""
    setattr(args, position.attn_key, safe_getattr(args, position.attn_key, attn))
    setattr(args, position.memory_key, safe_getattr(args, position.memory_key, memory))


def abc_memory_size(cfg, position: AttentionPosition) -> Optional[int]:
    """Slot count when ``position`` uses ABC, None when it is softmax (also when unset).

    Validates again at model-build time, for configs that never went through argparse (hydra
    configs, checkpoints, hub loading); errors name the command-line flag.
    """
    choice = safe_getattr(cfg, position.attn_key, None)
    choice = getattr(choice, "value", choice)  # ChoiceEnum members -> str
    if choice is None or choice == "softmax":
        return None
    if choice != "abc":
        raise ValueError(
            f"{position.attn_flag} must be one of {', '.join(ATTENTION_CHOICES)}; got {choice!r}")
    memory = safe_getattr(cfg, position.memory_key, None)
    if memory is None:
        memory = DEFAULT_MEMORY_SIZE
    if isinstance(memory, bool) or not isinstance(memory, int) or memory < 1:
        raise ValueError(
            f"{position.memory_flag} must be a positive number of memory slots, got {memory!r}")
    return memory
