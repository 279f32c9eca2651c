"""ABC_RD (paper Appendix A.2, Table 1): each token is written into one uniformly drawn slot,
phi_t = e_{i_t}, i_t ~ unif{1..n}, per head; K~ = sum_t e_{i_t} (x) k_t (sums, no normalisation, as
in Table 1). Slots no token has been written to are left out of the read softmax.

How i_t is drawn:
- training (``module.train()``): a fresh uniform draw for every (sequence, head, token) at every
  forward call, from torch's global generator (so fairseq's --seed makes runs reproducible);
- evaluation (``module.eval()``): a fixed hash of (token rank, head, layer seed), where the rank is
  the token's index among the real tokens of its sequence and the layer seed is drawn once at
  construction and saved in the checkpoint (buffer ``slot_seed``); deterministic across calls;
- incremental decoding in eval mode hashes the same rank, so every token lands in the slot a full
  forward pass gives it (decoding equals scoring). In training mode steps draw afresh.

Training O(N (C d + d n)) time and O(N (C + n)) memory; decoding state per head: K~, V~ [n, d],
slot occupancy [n] and a position counter.
"""

from typing import Optional, Tuple

import torch

from ._common import all_valid, token_ranks
from ._slots import causal_slot_attention, slot_memory, slot_read, slot_step
from .base import Memory, State, Strategy
from .registry import register

_PRIME = 2_147_483_647  # 2^31 - 1: every product below stays under 2^62, exact in int64


def hashed_slots(ranks: torch.Tensor, num_heads: int, memory_size: int, seed: torch.Tensor) -> torch.Tensor:
    """Deterministic, roughly uniform slot per (rank, head): ranks [B, N] long -> [B, H, N] long."""
    heads = torch.arange(num_heads, device=ranks.device)[None, :, None]
    h = (ranks[:, None, :] % _PRIME) * 1_000_003 + heads * 7_919 + seed
    for multiplier, increment in ((48_271, 11), (69_621, 12_345), (40_692, 7)):  # three LCG rounds
        h = (h % _PRIME) * multiplier + increment
    return (h % _PRIME) % memory_size


@register
class RandomSlots(Strategy):
    """ABC_RD. No parameters; one int64 buffer (the layer's hash seed)."""

    name = "random"
    paper = "Appendix A.2 (Table 1: ABC_RD)"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register_buffer("slot_seed", torch.randint(0, _PRIME, ()), persistent=True)

    def slots(self, ranks: torch.Tensor) -> torch.Tensor:
        """ranks [B, N] -> slot index [B, H, N]: fresh draws in training, a hash in eval."""
        if self.training:
            shape = (ranks.shape[0], self.num_heads, ranks.shape[1])
            return torch.randint(0, self.memory_size, shape, device=ranks.device)
        return hashed_slots(ranks, self.num_heads, self.memory_size, self.slot_seed)

    def _phi(self, ranks: torch.Tensor, valid: torch.Tensor, dtype) -> torch.Tensor:
        phi = torch.nn.functional.one_hot(self.slots(ranks), self.memory_size).to(dtype)
        return phi * valid[:, None, :, None].to(dtype)

    def causal(self, q, k, v, x, valid):
        valid = all_valid(valid, q.shape[0], q.shape[2], q.device)
        phi = self._phi(token_ranks(valid), valid, q.dtype)
        return causal_slot_attention(q, k, v, phi, self.scale, mask_empty=True)

    def step(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        valid = all_valid(valid, q.shape[0], 1, q.device)
        position = state["position"] if state else torch.zeros(q.shape[0], dtype=torch.long, device=q.device)
        phi = self._phi(position[:, None], valid, q.dtype)
        out, new = slot_step(q, k, v, phi, state, self.scale, mask_empty=True)
        new["position"] = position + valid[:, 0].long()
        return out, new

    def memory(self, k, v, x, valid) -> Memory:
        valid = all_valid(valid, k.shape[0], k.shape[2], k.device)
        return slot_memory(k, v, self._phi(token_ranks(valid), valid, k.dtype))

    def read(self, q, memory: Memory):
        return slot_read(q, memory, self.scale, mask_empty=True)
