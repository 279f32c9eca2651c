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

import torch

from ._slots import SlotStrategy
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
class RandomSlots(SlotStrategy):
    """ABC_RD. No parameters; one int64 buffer (the layer's hash seed)."""

    name = "random"
    paper = "Appendix A.2 (Table 1: ABC_RD)"
    mask_empty = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register_buffer("slot_seed", torch.randint(0, _PRIME, ()), persistent=True)
        self.fresh_draws = True  # False: training hashes as evaluation does (``use_evaluation_draws``)

    def use_evaluation_draws(self) -> None:
        self.fresh_draws = False

    def slots(self, ranks: torch.Tensor) -> torch.Tensor:
        """ranks [B, N] -> slot index [B, H, N]: fresh draws in training, a hash in eval."""
        if self.training and self.fresh_draws:
            shape = (ranks.shape[0], self.num_heads, ranks.shape[1])
            return torch.randint(0, self.memory_size, shape, device=ranks.device)
        return hashed_slots(ranks, self.num_heads, self.memory_size, self.slot_seed)

    def naive_phi(self, rank, key):
        """e_{i_t}, i_t the hash of the token's rank (the evaluation draw)."""
        slots = hashed_slots(torch.tensor([[rank]]), self.num_heads, self.memory_size, self.slot_seed)[0, :, 0]
        return torch.nn.functional.one_hot(slots, self.memory_size)

    def control(self, ranks, valid, k, dtype):
        phi = torch.nn.functional.one_hot(self.slots(ranks), self.memory_size).to(dtype)
        return phi * valid[:, None, :, None].to(dtype)
