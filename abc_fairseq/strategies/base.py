"""The interface every memory-control strategy implements, and the options they read.

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

from dataclasses import dataclass, field
from typing import ClassVar, Dict, FrozenSet, Optional, Tuple

import torch
import torch.nn as nn

State = Dict[str, torch.Tensor]
Memory = Dict[str, torch.Tensor]

MODES = ("causal", "encoder", "cross")


class ControlModule:
    """Marker for modules whose parameters exist only because of a memory-control strategy
    (W_phi, the Linformer matrix, T2R's MLP, ...): the parameter overhead over softmax attention."""


@dataclass(frozen=True)
class StrategyOptions:
    """Settings besides the memory size, and the command-line flags that set them (for errors).

    linformer_max_positions: N_max, the number of columns of the Linformer matrix.
    compressive_ratio: c, tokens pooled into one slot by causal ``compressive`` attention.
    flags: setting name -> flag, e.g. ``{"memory_size": "--decoder-self-memory"}``; errors name
        the flag when one is given, else the setting.
    """

    linformer_max_positions: Optional[int] = None
    compressive_ratio: int = 4
    flags: Dict[str, str] = field(default_factory=dict)

    def flag(self, setting: str) -> str:
        return self.flags.get(setting, setting)


class Strategy(nn.Module, ControlModule):
    """One way of writing keys and values into a bounded memory and reading it back.

    Subclasses set ``name`` (the flag value), ``paper`` (where the paper defines it), ``modes``
    (where it applies) and implement the three forms below. Parameters tied across layers (W_phi,
    the Linformer matrix) come from ``build_shared``, are created once per attention position by
    the model and reach every layer's strategy as ``shared``, held in a plain list so that each
    layer does not register them again. Other parameters belong to the strategy (one per layer).

    Causal (training / scoring):  ``causal(q, k, v, x, valid) -> out``, linear in N.
    Causal (decoding):            ``step(q, k, v, x, valid, state) -> (out, state)`` on one token;
                                  ``extend`` takes several tokens (default: one step at a time).
    Bidirectional:                ``memory(k, v, x, valid) -> Memory``, ``read(q, memory) -> out``
                                  (cross attention caches the memory); ``encode`` = read(memory).
    """

    name: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    modes: ClassVar[FrozenSet[str]] = frozenset(MODES)
    uses_control_input: ClassVar[bool] = False  # whether x (not only k, v) shapes the memory

    def __init__(self, num_heads: int, head_dim: int, memory_size: int, mode: str,
                 shared: Optional[nn.Module] = None, scale: Optional[float] = None,
                 options: Optional[StrategyOptions] = None):
        super().__init__()
        options = options if options is not None else StrategyOptions()
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if mode not in self.modes:
            raise ValueError(
                f"{options.flag('attn')} {self.name} is not available for {mode} attention "
                f"(it supports: {', '.join(m for m in MODES if m in self.modes)})")
        if memory_size < 1:
            raise ValueError(
                f"{options.flag('memory_size')} must be a positive number of memory slots, got {memory_size}")
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.memory_size = memory_size
        self.mode = mode
        self.scale = head_dim ** -0.5 if scale is None else float(scale)
        self.options = options
        self._shared = [shared]  # a plain list: the owner registers the shared module once

    @property
    def shared(self) -> Optional[nn.Module]:
        return self._shared[0]

    @classmethod
    def build_shared(cls, in_dim: int, num_heads: int, memory_size: int,
                     options: StrategyOptions) -> Optional[nn.Module]:
        """The module tied across the layers of one attention position, or None."""
        return None

    @classmethod
    def check_shared(cls, shared: Optional[nn.Module], in_dim: int, num_heads: int, memory_size: int) -> None:
        """Raise ValueError when ``shared`` does not fit (checked by the attention module)."""

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
