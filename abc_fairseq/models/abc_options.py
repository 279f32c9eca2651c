"""The options of bounded-memory attention, one schema for every model, and their reading.

Each attention position of a transformer has two options, ``--{position}-attn`` (``softmax`` or a
strategy of the registry that supports the position's mode: ``abc``, ``abc-relu``, ``linformer``,
``window``, ...) and ``--{position}-memory`` (slots n, a positive int; the window length or the
kernel feature size for those strategies). The settings strategies declare
(``Strategy.settings``: ``--linformer-max-positions``, ``--compressive-ratio``, ...) are one flag
each, shared by all positions, typed and checked by their ``Setting``. Choices and setting flags
are read from the registry when a parser is built (models' ``add_args``, which fairseq calls after
importing ``--user-dir``), never copied at import: a strategy registered by the user's own module
is a choice like the built-in ones. ``--untie-phi`` (off: the paper's
model) gives every layer its own W_phi (or Linformer matrix) instead of one per position.
``--abc-backend`` (``auto``, ``torch``, ``triton``) picks what runs the ABC ops; the environment
variable ``ABC_BACKEND`` wins over it and over a checkpoint's value (``read_backend``).

Models declare the options with ``attn_field`` / ``memory_field`` / ``with_setting_fields``
(dataclass models) or ``add_abc_args`` (argparse models), call ``harden_abc_flags`` in
``add_args`` (dataclass models) so that a bad value fails at argument parsing, and set defaults
in their architectures with ``set_abc_defaults``. ``read_attention`` turns a config into the
validated strategy class, memory size and the strategy's own settings (errors name the flags);
``attention_specs`` builds the spec from it.
"""

import argparse
import logging
import os
from dataclasses import field
from typing import Iterable, NamedTuple, Optional, Tuple, Type

from fairseq.dataclass import ChoiceEnum
from fairseq.utils import safe_getattr

from ..ops.backend import BACKENDS, backend_unavailable
from ..strategies import STRATEGIES, Setting, Strategy, StrategyOptions, all_settings, attention_choices, get_strategy
from .setting_fields import with_setting_fields  # noqa: F401 (part of the schema: dataclass models' settings)

logger = logging.getLogger(__name__)

DEFAULT_MEMORY_SIZE = 64
MEMORY = Setting("memory", "memory slots", "")  # how --{position}-memory parses and checks
UNTIE_KEY, UNTIE_FLAG = "untie_phi", "--untie-phi"
UNTIE_HELP = ("give every layer its own W_phi (and every other module a strategy ties across layers, "
              "e.g. the Linformer matrix) instead of one per attention position shared by all its "
              "layers, the paper's model (an ablation, off by default)")
BACKEND_KEY, BACKEND_FLAG, BACKEND_ENV = "abc_backend", "--abc-backend", "ABC_BACKEND"
BackendChoice = ChoiceEnum(list(BACKENDS))
BACKEND_HELP = ("what runs the ABC ops: 'auto' (the Triton kernels on CUDA, falling back to PyTorch, with a "
                "warning, where they cannot run), 'torch' (the PyTorch path: rule the kernels out) or "
                "'triton' (the kernels or an error). Stored in checkpoints; change it for a trained model "
                "with --model-overrides \"{'abc_backend': 'torch'}\"; the environment variable "
                f"{BACKEND_ENV} wins over both (see docs/gpu.md)")


class AttentionPosition(NamedTuple):
    """One place attention happens in a transformer.

    name: option prefix (``decoder_self`` -> ``--decoder-self-attn``, ``--decoder-self-memory``).
    phi_attr: attribute of the encoder/decoder that owns this position's shared module.
    description: for help texts.
    mode: the strategies' mode (``causal``, ``encoder``, ``cross``).
    max_positions_keys: the cfg fields that bound its sequences, first found wins (the default
        of settings like linformer's N_max; RoBERTa-style encoders call it max_positions).
    """

    name: str
    phi_attr: str
    description: str
    mode: str
    max_positions_keys: Tuple[str, ...]

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

    @property
    def choices(self) -> Tuple[str, ...]:
        """softmax and the strategies registered now that support this position's mode, in flag order."""
        return tuple(c for c in attention_choices() if c == "softmax" or self.mode in STRATEGIES[c].modes)


def __getattr__(name: str):
    """``ATTENTION_CHOICES`` and ``AttentionChoice`` (read now, not at import) for code written
    before the choices were read from the registry at parsing."""
    if name == "ATTENTION_CHOICES":
        return attention_choices()
    if name == "AttentionChoice":
        return ChoiceEnum(list(attention_choices()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


DECODER_SELF = AttentionPosition("decoder_self", "self_attn_phi", "decoder (causal) self attention",
                                 "causal", ("max_target_positions",))
ENCODER_SELF = AttentionPosition("encoder", "self_attn_phi", "encoder self attention",
                                 "encoder", ("max_source_positions", "max_positions"))
DECODER_CROSS = AttentionPosition("decoder_cross", "encoder_attn_phi", "encoder-decoder (cross) attention",
                                  "cross", ("max_source_positions", "max_positions"))
POSITIONS = (DECODER_SELF, ENCODER_SELF, DECODER_CROSS)


# ----------------------------------------------------------------------------- declaring
def _attn_help(position: AttentionPosition) -> str:
    others = [c for c in position.choices if c not in ("abc", "softmax")]
    return (f"attention used for {position.description}: 'softmax' (fairseq's MultiheadAttention) or a "
            f"bounded-memory strategy: 'abc' (ABC_MLP, Peng et al.), {', '.join(others)} "
            f"(see docs/strategies.md)")


def _memory_help(position: AttentionPosition) -> str:
    return (f"memory slots n of bounded-memory {position.description} (window length for 'window', "
            f"feature size for the kernel attentions; unused with {position.attn_flag} softmax)")


def attn_field(position: AttentionPosition, default: str = "abc"):
    """Dataclass field for ``{position}_attn``, annotated ``str``: the choices are the registry's
    when the parser is built (``harden_abc_flags``), and a config or checkpoint naming a strategy
    registered after import passes through omegaconf (``read_attention`` checks it)."""
    return field(default=default, metadata={"help": _attn_help(position)})


def memory_field(position: AttentionPosition, default: int = DEFAULT_MEMORY_SIZE):
    """Dataclass field for ``{position}_memory`` (an ``int``)."""
    return field(default=default, metadata={"help": _memory_help(position)})


def untie_field():
    """Dataclass field for ``untie_phi`` (a ``bool``; fairseq makes it a store-true flag)."""
    return field(default=False, metadata={"help": UNTIE_HELP})


def backend_field():
    """Dataclass field for ``abc_backend``; annotate it with ``BackendChoice``."""
    return field(default="auto", metadata={"help": BACKEND_HELP})


positive_int = MEMORY.parse  # argparse type of --{position}-memory


def _backend_problem(value: str) -> Optional[str]:
    """Why ``value`` is no backend that can run here, or None."""
    if value not in BACKENDS:
        return f"must be one of {', '.join(BACKENDS)}, got {value!r}"
    why = backend_unavailable(value)
    return None if why is None else f"{value} cannot run here: {why}; use auto or torch"


def check_backend_choice(value: str, source: str) -> str:
    """``value`` when it names a backend that can run here, else ValueError naming ``source``
    (the flag, or the environment variable): the one check of a backend choice."""
    problem = _backend_problem(value)
    if problem is not None:
        raise ValueError(f"{source} {problem}")
    return value


def parse_backend(text: str) -> str:
    """argparse type of ``--abc-backend`` (argparse prefixes the error with the flag)."""
    problem = _backend_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def _action(parser: argparse.ArgumentParser, flag: str) -> Optional[argparse.Action]:
    return parser._option_string_actions.get(flag)  # argparse keeps no public lookup


def add_abc_args(parser: argparse.ArgumentParser, positions: Iterable[AttentionPosition]) -> None:
    """Add ``--{position}-attn`` / ``--{position}-memory`` and every strategy setting's flag to an
    argparse model's parser (each once). No defaults are set here (fairseq lets architectures fill
    them): use ``set_abc_defaults``."""
    if _action(parser, UNTIE_FLAG) is None:
        parser.add_argument(UNTIE_FLAG, action="store_true", help=UNTIE_HELP)
    if _action(parser, BACKEND_FLAG) is None:
        parser.add_argument(BACKEND_FLAG, type=parse_backend, choices=BACKENDS, default="auto",
                            help=BACKEND_HELP)
    for position in positions:
        if _action(parser, position.attn_flag) is None:
            parser.add_argument(position.attn_flag, choices=position.choices, help=_attn_help(position))
        if _action(parser, position.memory_flag) is None:
            parser.add_argument(position.memory_flag, type=positive_int, metavar="N", help=_memory_help(position))
    for setting in all_settings():
        if _action(parser, setting.flag) is None:
            parser.add_argument(setting.flag, type=setting.parse, metavar=setting.metavar, help=setting.help)


def harden_abc_flags(parser: argparse.ArgumentParser, positions: Iterable[AttentionPosition]) -> None:
    """For flags a dataclass generated: ``--{position}-attn`` offers the strategies registered now
    that support the position's mode, ``--{position}-memory`` rejects values < 1, every setting
    parses and checks as its ``Setting`` says, and ``--abc-backend`` refuses a backend that cannot
    run here, at parsing."""
    backend = _action(parser, BACKEND_FLAG)
    if backend is not None:
        backend.type = parse_backend
    for position in positions:
        attn, memory = _action(parser, position.attn_flag), _action(parser, position.memory_flag)
        if attn is not None:
            attn.choices = position.choices
        if memory is not None:
            memory.type, memory.metavar = positive_int, "N"
    for setting in all_settings():
        action = _action(parser, setting.flag)
        if action is not None:
            action.type = setting.parse


def set_abc_defaults(args, position: AttentionPosition, attn: str = "abc",
                     memory: int = DEFAULT_MEMORY_SIZE) -> None:
    """Architecture defaults: keep values given on the command line."""
    setattr(args, position.attn_key, safe_getattr(args, position.attn_key, attn))
    setattr(args, position.memory_key, safe_getattr(args, position.memory_key, memory))


# ----------------------------------------------------------------------------- reading
class AttentionOptions(NamedTuple):
    """One position's options, resolved and validated: what ``ABCAttentionSpec.create`` takes,
    and whether each layer gets its own shared module (``--untie-phi``)."""

    strategy: Type[Strategy]
    memory_size: int
    options: StrategyOptions
    untied: bool = False
    backend: str = "auto"


def read_backend(cfg) -> str:
    """The backend the model's ABC ops run on: ``ABC_BACKEND`` when set, else ``cfg``'s
    ``abc_backend`` (the flag, a checkpoint's config or its ``--model-overrides``; "auto" when
    absent, as in checkpoints older than the option). ValueError naming the source when it
    cannot run here."""
    configured = safe_getattr(cfg, BACKEND_KEY, None)
    configured = getattr(configured, "value", configured) or "auto"
    chosen = os.environ.get(BACKEND_ENV, "").strip()
    if not chosen:
        return check_backend_choice(configured, BACKEND_FLAG)
    check_backend_choice(chosen, BACKEND_ENV)
    if chosen != configured:
        logger.info("%s=%s overrides %s %s", BACKEND_ENV, chosen, BACKEND_FLAG, configured)
    return chosen


def _flags(position: AttentionPosition) -> dict:
    return {"attn": position.attn_flag, "memory_size": position.memory_flag,
            **{setting.key: setting.flag for setting in all_settings()}}


def _setting_value(cfg, setting: Setting, position: AttentionPosition):
    value = safe_getattr(cfg, setting.key, None)
    if value is None and setting.default_is_max_positions:
        found = (safe_getattr(cfg, key, None) for key in position.max_positions_keys)
        value = next((v for v in found if v is not None), None)
    return value


def read_attention(cfg, position: AttentionPosition) -> Optional[AttentionOptions]:
    """``position``'s options from ``cfg`` (argparse args, a dataclass or DictConfig: configs that
    skipped argparse are checked here too), or None when it is softmax (also when unset). The
    strategy gets only its own settings; errors name the flags."""
    choice = safe_getattr(cfg, position.attn_key, None)
    choice = getattr(choice, "value", choice)  # ChoiceEnum members -> str
    if choice is None or choice == "softmax":
        return None
    flags = _flags(position)
    strategy = get_strategy(choice, flag=position.attn_flag)
    for setting in all_settings():  # a bad value fails whichever strategy reads it, as at parsing
        value = safe_getattr(cfg, setting.key, None)
        if value is not None:
            setting.check(value)
    memory = safe_getattr(cfg, position.memory_key, None)
    memory = DEFAULT_MEMORY_SIZE if memory is None else memory
    options = StrategyOptions(flags, **{s.key: _setting_value(cfg, s, position) for s in strategy.settings})
    strategy.validate(memory, options, position.mode)
    return AttentionOptions(strategy, memory, options, bool(safe_getattr(cfg, UNTIE_KEY, False)),
                            read_backend(cfg))


def attention_strategy(cfg, position: AttentionPosition) -> Optional[str]:
    """The strategy name ``position`` uses (validated), None when it is softmax."""
    found = read_attention(cfg, position)
    return None if found is None else found.strategy.name


def abc_memory_size(cfg, position: AttentionPosition) -> Optional[int]:
    """Slot count when ``position`` uses bounded-memory attention (validated), None for softmax."""
    found = read_attention(cfg, position)
    return None if found is None else found.memory_size


def strategy_options(cfg, position: AttentionPosition) -> Optional[StrategyOptions]:
    """The settings of ``position``'s strategy from ``cfg`` (None for softmax)."""
    found = read_attention(cfg, position)
    return None if found is None else found.options
