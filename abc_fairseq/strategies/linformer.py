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

from typing import Optional, Tuple

import torch
import torch.nn as nn

from ._common import all_valid, token_ranks
from ._slots import causal_slot_attention, slot_memory, slot_read, slot_step
from .base import ControlModule, Memory, State, Strategy, StrategyOptions
from .registry import register


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
class Linformer(Strategy):
    """Linformer control; ``shared``: the position's LinformerProjection."""

    name = "linformer"
    paper = "§3.1, Eq. 6 (Table 1: Linformer)"

    @classmethod
    def build_shared(cls, in_dim: int, num_heads: int, memory_size: int,
                     options: StrategyOptions) -> nn.Module:
        if options.linformer_max_positions is None or options.linformer_max_positions < 1:
            raise ValueError(f"{options.flag('linformer_max_positions')} must be a positive number of "
                             f"positions for linformer, got {options.linformer_max_positions!r}")
        return LinformerProjection(num_heads, memory_size, options.linformer_max_positions)

    @classmethod
    def check_shared(cls, shared, in_dim: int, num_heads: int, memory_size: int) -> None:
        if not isinstance(shared, LinformerProjection) or tuple(shared.weight.shape[:2]) != (num_heads, memory_size):
            raise ValueError(f"linformer needs a LinformerProjection of {num_heads} heads x {memory_size} slots "
                             f"as its shared module, got {type(shared).__name__}")

    def _phi(self, ranks: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        limit = self.shared.max_positions
        longest = int(ranks.masked_fill(~valid, -1).max()) + 1 if ranks.numel() else 0
        if longest > limit:
            raise ValueError(
                f"linformer: a sequence has {longest} tokens, more than the {limit} positions of its "
                f"projection; raise {self.options.flag('linformer_max_positions')} (N_max) or use shorter "
                f"sequences")
        phi = self.shared.columns(ranks.clamp_max(limit - 1))
        return phi.masked_fill(~valid[:, None, :, None], 0.0)

    def causal(self, q, k, v, x, valid):
        valid = all_valid(valid, q.shape[0], q.shape[2], q.device)
        phi = self._phi(token_ranks(valid), valid)
        return causal_slot_attention(q, k, v, phi.to(q.dtype), self.scale)

    def step(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        valid = all_valid(valid, q.shape[0], 1, q.device)
        position = state["position"] if state else torch.zeros(q.shape[0], dtype=torch.long, device=q.device)
        phi = self._phi(position[:, None], valid)
        out, new = slot_step(q, k, v, phi.to(q.dtype), state, self.scale)
        new["position"] = position + valid[:, 0].long()
        return out, new

    def memory(self, k, v, x, valid) -> Memory:
        valid = all_valid(valid, k.shape[0], k.shape[2], k.device)
        return slot_memory(k, v, self._phi(token_ranks(valid), valid).to(k.dtype))

    def read(self, q, memory: Memory):
        return slot_read(q, memory, self.scale)
