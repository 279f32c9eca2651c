"""Linformer as ABC (paper §3.1, Table 1): phi_i = W^LF[:, i], a learned column per position.

K~ = W^LF K, V~ = W^LF V (Eq. 6) with W^LF [n x N_max] per head, tied across layers (the sharing
ABC_MLP borrows from Wang et al.). No normalisation and no activation: phi may be negative.
Causal attention uses the recurrence K~_{t+1} = K~_t + phi_{t+1} (x) k_{t+1} (the paper's point:
Linformer *is* applicable to causal attention): row t reads sum_{i<=t} W^LF[:, i] (x) k_i.
Position i is the token's rank among the real tokens of its sequence; a sequence with more than
N_max real tokens is an error naming the flag that sets N_max.

Training O(N (C d + d n)) time, O(N (C + n)) memory; decoding state per head: K~, V~ [n, d] and a
position counter.
"""

import torch
import torch.nn as nn

from ._slots import SlotStrategy
from .base import ControlModule, Setting, StrategyOptions
from .registry import register

MAX_POSITIONS = Setting(
    "linformer_max_positions", "positions",
    "linformer: N_max, the number of positions (columns) of the learned projection; a longer sequence "
    "is an error. Default: the model's maximum source / target positions", default_is_max_positions=True)


class LinformerProjection(nn.Module, ControlModule):
    """W^LF: [num_heads, memory_size, max_positions]; column i of head h is that head's phi_i."""

    def __init__(self, num_heads: int, memory_size: int, max_positions: int):
        super().__init__()
        self.max_positions = max_positions
        self.weight = nn.Parameter(torch.empty(num_heads, memory_size, max_positions))
        bound = (6.0 / (memory_size + max_positions)) ** 0.5  # Xavier, as for Linear(N_max, n)
        nn.init.uniform_(self.weight, -bound, bound)

    def columns(self, ranks: torch.Tensor) -> torch.Tensor:
        """ranks [B, N] (all < max_positions) -> phi [B, H, N, n]."""
        per_position = self.weight.permute(2, 0, 1)  # [N_max, H, n]
        return per_position[ranks].permute(0, 2, 1, 3)

    def extra_repr(self) -> str:
        heads, slots, positions = self.weight.shape
        return f"num_heads={heads}, memory_size={slots}, max_positions={positions}"


@register
class Linformer(SlotStrategy):
    """Linformer control; ``shared``: the position's LinformerProjection."""

    name = "linformer"
    paper = "§3.1, Eq. 6 (Table 1: Linformer)"
    settings = (MAX_POSITIONS,)

    @classmethod
    def build_shared(cls, in_dim: int, num_heads: int, memory_size: int,
                     options: StrategyOptions) -> nn.Module:
        cls.validate(memory_size, options)
        return LinformerProjection(num_heads, memory_size, options.get(MAX_POSITIONS))

    @classmethod
    def check_shared(cls, shared, in_dim: int, num_heads: int, memory_size: int) -> None:
        if not isinstance(shared, LinformerProjection) or tuple(shared.weight.shape[:2]) != (num_heads, memory_size):
            raise ValueError(f"linformer needs a LinformerProjection of {num_heads} heads x {memory_size} slots "
                             f"as its shared module, got {type(shared).__name__}")

    def naive_phi(self, rank, key):
        return self.shared.weight[:, :, rank]  # column ``rank`` of every head's W^LF

    def control(self, ranks, valid, k, dtype):
        limit = self.shared.max_positions
        longest = int(ranks.masked_fill(~valid, -1).max()) + 1 if ranks.numel() else 0
        if longest > limit:
            raise ValueError(
                f"linformer: a sequence has {longest} tokens, more than the {limit} positions of its "
                f"projection; raise {self.options.flag(MAX_POSITIONS.key)} (N_max) or use shorter "
                f"sequences")
        phi = self.shared.columns(ranks.clamp_max(limit - 1))
        return phi.masked_fill(~valid[:, None, :, None], 0.0).to(dtype)
