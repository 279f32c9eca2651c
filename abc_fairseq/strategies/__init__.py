"""Memory-control strategies of ABC (Peng et al.) and the kernel attentions it is compared with,
as plain PyTorch modules (no fairseq imports), selected by name.

``STRATEGIES`` maps each flag value (``--decoder-self-attn``, ``--decoder-cross-attn``,
``--encoder-attn``) to its ``Strategy`` class; every class has a parallel causal form (training),
a recurrent step (decoding) that agrees with it, a bidirectional memory/read form (encoder
self attention, cross attention) where the strategy applies, and its naive form (``naive``, the
tests' oracle). See ``base`` for the conventions, docs/strategies.md for the table of strategies
and docs/architecture.md ("Adding a strategy") for registering one, also from the user's own module
(``SlotStrategy`` and ``KernelAttention`` are the bases to build on).
"""

# Registration order is the order of the flag's choices: ABC family, then the other ABC instances
# of the paper, then the kernel baselines, then GSA and the window with sinks.
from . import abc_mlp  # noqa: F401, I001
from . import linformer, random_slots, window, cluster, compressive, global_tokens  # noqa: F401, I001
from . import elu, rfa, t2r, linear  # noqa: F401, I001
from . import gsa  # noqa: F401, I001 (beyond the paper: ABC's slots with a forget gate)
from . import window_sink  # noqa: F401, I001 (beyond the paper: a window plus attention sinks)
from ._kernel import KernelAttention
from ._slots import SlotStrategy
from .base import MODES, ControlModule, Memory, Setting, State, Strategy, StrategyOptions
from .phi import PhiProjection
from .registry import STRATEGIES, all_settings, attention_choices, get_strategy, register, strategy_names
from .spec import ABCAttentionSpec

__all__ = [
    "ABCAttentionSpec",
    "MODES",
    "STRATEGIES",
    "attention_choices",
    "ControlModule",
    "KernelAttention",
    "Memory",
    "PhiProjection",
    "Setting",
    "SlotStrategy",
    "State",
    "Strategy",
    "StrategyOptions",
    "all_settings",
    "get_strategy",
    "register",
    "strategy_names",
]
