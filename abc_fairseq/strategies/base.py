"""The interface every memory-control strategy implements, and the settings they declare.

Conventions (every strategy, every method):

- Per-head tensors are batch first: ``q [B, H, M, d]``, ``k, v [B, H, N, d]``; outputs ``[B, H, M, d]``
  in q's dtype. Sums, normalisers and states are kept in fp32 (fp64 for fp64 inputs).
- ``x [B, N, C]`` is the control input, the un-projected key input (what W_phi reads).
- ``valid [B, N]`` bool, True at real tokens, False at padding; None means no padding. Padding is
  never written to memory. Position-based controls (Linformer columns, random slots, windows,
  pooled blocks, global tokens) index tokens by their rank among the real tokens of their
  sequence, as fairseq numbers positions, so a left-padded sequence behaves like the same
  sequence without padding.
- A decoding state is a ``Dict[str, Tensor]`` whose tensors all have the batch first, so beam
  search reorders it with ``index_select(0, order)`` on every entry.

Modes: ``causal`` (decoder self attention: each row reads the memory of its prefix), ``encoder``
(bidirectional self attention) and ``cross`` (encoder-decoder attention: queries and keys differ).
"""

from typing import ClassVar, Dict, FrozenSet, Optional, Tuple

import torch
import torch.nn as nn

from ..ops.utils import dropout_keep_mask
from .settings import Setting, StrategyOptions, check_memory_size

State = Dict[str, torch.Tensor]
Memory = Dict[str, torch.Tensor]

MODES = ("causal", "encoder", "cross")


class ControlModule:
    """Marker for modules whose parameters exist only because of a memory-control strategy
    (W_phi, the Linformer matrix, T2R's MLP, ...): the parameter overhead over softmax attention."""


class Strategy(nn.Module, ControlModule):
    """One way of writing keys and values into a bounded memory and reading it back.

    Subclasses set ``name`` (the flag value), ``paper`` (where the paper defines it), ``modes``
    (where it applies), ``settings`` (their own options, each a flag) and implement the three
    forms below. Parameters tied across layers (W_phi,
    the Linformer matrix) come from ``build_shared``, are created once per attention position by
    the model and reach every layer's strategy as ``shared``, held in a plain list so that each
    layer does not register them again. Other parameters belong to the strategy (one per layer).

    Causal (training / scoring):  ``causal(q, k, v, x, valid) -> out``, linear in N.
    Causal (decoding):            ``step(q, k, v, x, valid, state) -> (out, state)`` on one token;
                                  ``extend`` takes several tokens (default: one step at a time).
    Bidirectional:                ``memory(k, v, x, valid) -> Memory``, ``read(q, memory) -> out``
                                  (cross attention caches the memory); ``encode`` = read(memory).
    Oracle:                       ``naive(q, k, v, x, valid, keep, p)``, the paper's equations token
                                  by token; the generic tests compare every form with it and read
                                  the facts below (``added_modes``, ``dropout_through_keep_mask``,
                                  ``applies_dropout``, ``use_evaluation_draws``), never a name.
    """

    name: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    modes: ClassVar[FrozenSet[str]] = frozenset(MODES)
    uses_control_input: ClassVar[bool] = False  # whether x (not only k, v) shapes the memory
    settings: ClassVar[Tuple[Setting, ...]] = ()  # its own settings besides the memory size
    # Modes added after the strategy first shipped: checkpoints older than that use softmax there.
    added_modes: ClassVar[FrozenSet[str]] = frozenset()
    # Whether the forms that apply dropout draw their mask with ``keep_mask`` (a test can then fix
    # it); False where the ops draw it themselves (ABC_MLP).
    dropout_through_keep_mask: ClassVar[bool] = True

    def __init__(self, num_heads: int, head_dim: int, memory_size: int, mode: str,
                 shared: Optional[nn.Module] = None, scale: Optional[float] = None,
                 options: Optional[StrategyOptions] = None, dropout: float = 0.0, backend: str = "auto"):
        super().__init__()
        options = options if options is not None else StrategyOptions()
        self.validate(memory_size, options, mode)
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.memory_size = memory_size
        self.mode = mode
        self.scale = head_dim ** -0.5 if scale is None else float(scale)
        self.options = options
        self.dropout = dropout  # attention dropout over the memory slots, training only (see read_dropout)
        self._shared = [shared]  # a plain list: the owner registers the shared module once
        self.backend = backend  # the ops' backend= ("auto", "torch", "triton"), resolved by the model

    @classmethod
    def validate(cls, memory_size, options: StrategyOptions, mode: Optional[str] = None) -> None:
        """Raise ValueError, naming the flag, when this strategy cannot run ``mode`` (None: any)
        with ``memory_size`` slots and ``options``. The one check of these values: the
        constructor, ``build_shared`` and the model's option reader call it. Strategies with
        further constraints extend it."""
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if mode is not None and mode not in cls.modes:
            raise ValueError(
                f"{options.flag('attn')} {cls.name} is not available for {mode} attention "
                f"(it supports: {', '.join(m for m in MODES if m in cls.modes)})")
        check_memory_size(memory_size, options.flag("memory_size"))
        for setting in cls.settings:
            setting.check(options.get(setting), options.flag(setting.key))

    @classmethod
    def applies_dropout(cls) -> bool:
        """Whether the forms apply ``dropout`` (attention dropout over the slots); False: none."""
        return False

    def read_dropout(self) -> float:
        """The dropout probability of the read over memory slots: ``dropout`` in training, else 0."""
        return self.dropout if self.training else 0.0

    def keep_mask(self, shape: Tuple[int, ...], device) -> Optional[torch.Tensor]:
        """Attention dropout's keep mask over the read probabilities, bool ``shape`` = [B, H, M, n]
        (query row, memory slot; True = keep, drawn from torch's RNG), or None when nothing is
        dropped (evaluation, or rate 0). The forms that apply dropout draw it here, in this one
        layout per strategy (its docstring says which slot is which), and map it onto whatever
        blocks they compute; tests replace it to give a fixed mask."""
        return dropout_keep_mask(self.read_dropout(), None, shape, device)

    def use_evaluation_draws(self) -> None:
        """Make the training forms draw what evaluation draws (for strategies whose control is
        random in training, as ``random``), so that training can be compared with ``naive``;
        attention dropout is untouched. Nothing to do for the others."""

    def naive(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, x: torch.Tensor,
              valid: Optional[torch.Tensor], keep: Optional[torch.Tensor] = None, p: float = 0.0) -> torch.Tensor:
        """The oracle: this strategy in its mode written straight from its paper's equations, token
        by token (``reference`` holds the shared pieces); O(N^2) or worse, for tests on small
        inputs. Same shapes as ``causal`` (causal) or ``encode`` / ``read(memory(...))`` (encoder,
        cross); rows of padding queries are unspecified. ``keep`` [B, H, M, n] (the slot layout of
        ``keep_mask``) and ``p``: attention dropout, the read probabilities times keep / (1 - p)."""
        raise NotImplementedError(f"{self.name} has no naive form")

    @property
    def shared(self) -> Optional[nn.Module]:
        return self._shared[0]

    @classmethod
    def build_shared(cls, in_dim: int, num_heads: int, memory_size: int,
                     options: StrategyOptions) -> Optional[nn.Module]:
        """The module tied across the layers of one attention position, or None. Called once
        per position, after ``validate``."""
        return None

    @classmethod
    def check_shared(cls, shared: Optional[nn.Module], in_dim: int, num_heads: int, memory_size: int) -> None:
        """Raise ValueError when ``shared`` does not fit (checked when a spec is created)."""

    def extra_repr(self) -> str:
        return f"name={self.name}, mode={self.mode}, heads={self.num_heads}, memory_size={self.memory_size}"

    # -- causal -------------------------------------------------------------------------------
    def causal(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, x: torch.Tensor,
               valid: Optional[torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError

    def step(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, x: torch.Tensor,
             valid: Optional[torch.Tensor], state: Optional[State]) -> Tuple[torch.Tensor, State]:
        """One token: q, k, v [B, H, 1, d]; x [B, 1, C]; valid [B, 1] or None."""
        raise NotImplementedError

    def extend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, x: torch.Tensor,
               valid: Optional[torch.Tensor], state: Optional[State]) -> Tuple[torch.Tensor, State]:
        """Several new tokens after ``state``: the outputs ``causal`` gives them in a full pass."""
        outs = []
        for t in range(q.shape[2]):
            row = slice(t, t + 1)
            out, state = self.step(q[:, :, row], k[:, :, row], v[:, :, row], x[:, row],
                                   None if valid is None else valid[:, row], state)
            outs.append(out)
        return torch.cat(outs, dim=2), state

    # -- bidirectional --------------------------------------------------------------------------
    def memory(self, k: torch.Tensor, v: torch.Tensor, x: torch.Tensor,
               valid: Optional[torch.Tensor]) -> Memory:
        raise NotImplementedError

    def read(self, q: torch.Tensor, memory: Memory) -> torch.Tensor:
        raise NotImplementedError

    def encode(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, x: torch.Tensor,
               valid: Optional[torch.Tensor]) -> torch.Tensor:
        return self.read(q, self.memory(k, v, x, valid))

    @classmethod
    def encodes_through_memory(cls) -> bool:
        """Whether ``encode`` is read(memory) (not overridden): the attention module may then
        write the memory and drop k and v before it projects the queries."""
        return cls.encode is Strategy.encode
