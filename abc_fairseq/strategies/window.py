"""Sliding-window attention as ABC (paper §3.3, Eq. 9-11; Table 1: Sliding-window).

Causal: the memory is a FIFO queue of the last n real tokens, K~_{t+1} = U K~_t + e_n (x) k_{t+1} with
U the upper shift matrix (likewise V~). Slots the queue has not filled yet (the first n - 1 tokens)
are left out of the read softmax, so row t is softmax attention over tokens max(1, t-n+1)..t (Eq. 9)
rather than over zero rows. Padding is never pushed (the window counts real tokens only) and a
padding row outputs 0.

Encoder self attention: a local window, each token attends to the n real tokens at offsets
-floor((n-1)/2) .. ceil((n-1)/2) around it (clipped at the ends).

Cross attention (the paper does not spell it out; this is §3.3 read over a source sequence): the
decoder reads the FIFO queue after the whole source has been pushed into it, i.e. the last n real
source tokens, K~ = (k_{L-n+1}, ..., k_L) and likewise V~ for a source of L real tokens (padding is
never pushed; fairseq's sources are left-padded). Every decoder position reads the same memory: a
bidirectional memory, built once from the encoder output and cached for decoding like any other
cross memory. A source shorter than n leaves slots 1 .. n - L empty, and they are left out of the
softmax, as in causal attention.

Training (parallel form): banded attention in blocks, O(N n d) time and O(N n) memory. Decoding
state per head: the queue K~, V~ [n, d] and a token counter. Cross memory: K~, V~ [n, d] and the
slots' occupancy [n].

Attention dropout (training): the keep mask is [B, H, M, n] in queue order, slot j of row t holding
the key n - 1 - j real tokens before t (causal; slot n - 1 is t itself), the key j - floor((n-1)/2)
tokens after t (encoder) or the source token of rank L - n + j (cross).
"""

import math
from typing import Optional, Tuple

import torch

from ..ops.utils import drop, zero_safe_matmul
from . import reference
from ._band import band_offsets, pad_rows, with_neighbours
from ._common import (
    all_valid,
    compaction,
    compute_dtype,
    masked_softmax,
    on_real_rows,
    slots_of_ranks,
    zero_padding_rows,
)
from ._slots import slot_read
from .base import Memory, State, Strategy
from .registry import register


def banded_attention(q, k, v, lengths, scale: float, lo: int, hi: int,
                     keep: Optional[torch.Tensor] = None, dropout_p: float = 0.0) -> torch.Tensor:
    """Softmax attention of row t over rows i with lo <= t - i <= hi and i < length.

    q, k, v: [B, H, N, d] left-aligned (row i < lengths[b] real); returns [B, H, N, d].
    keep: dropout keep mask [B, H, N, hi - lo + 1] (left-aligned rows; entry j of row t is the key
    t - hi + j) at rate ``dropout_p``, or None.
    """
    B, H, N, _ = q.shape
    reach = max(abs(lo), abs(hi), 1)
    block = min(reach, N)
    before, after = math.ceil(max(hi, 0) / block), math.ceil(max(-lo, 0) / block)
    qb = pad_rows(q, block)
    blocks = qb.shape[2] // block
    keys = with_neighbours(pad_rows(k, block), block, before, after)
    values = with_neighbours(pad_rows(v, block), block, before, after)
    real = (torch.arange(blocks * block, device=q.device)[None, :] < lengths[:, None]).to(q.dtype)
    real = with_neighbours(real[:, None, :, None], block, before, after)[..., 0] > 0  # [B, 1, nb, cols]
    offsets = band_offsets(block, before, after, q.device)
    allowed = ((offsets >= lo) & (offsets <= hi))[None, None, None] & real[:, :, :, None, :]
    scores = scale * torch.matmul(qb.view(B, H, blocks, block, -1), keys.transpose(-1, -2))
    probs = masked_softmax(scores, allowed)
    if keep is not None:  # entry hi - (t - i) of row t's mask, for every band column
        entry = (hi - offsets).clamp(0, hi - lo)[None, None, None]
        rows = pad_rows(keep.to(q.dtype), block).view(B, H, blocks, block, -1)
        probs = drop(probs, rows.gather(-1, entry.expand(B, H, blocks, -1, -1)), dropout_p)
    out = zero_safe_matmul(probs, values, allowed, summary=v)
    return out.reshape(B, H, blocks * block, -1)[:, :, :N]


@register
class SlidingWindow(Strategy):
    """Window of the last n tokens (causal), a local window of n tokens (encoder), the last n source
    tokens (cross). No parameters."""

    name = "window"
    paper = "§3.3, Eq. 9-11 (Table 1: Sliding-window)"
    added_modes = frozenset({"cross"})  # issue 15: older checkpoints use softmax cross attention

    @classmethod
    def applies_dropout(cls) -> bool:
        return True  # over the n window probabilities, every form but decoding (training only)

    def _banded(self, q, k, v, valid, lo: int, hi: int):
        def attend(q, k, v, lengths, keep):
            return banded_attention(q, k, v, lengths, self.scale, lo, hi, keep, self.read_dropout())

        return on_real_rows(q, k, v, valid, self.keep_mask((*q.shape[:3], self.memory_size), q.device), attend)

    def naive(self, q, k, v, x, valid, keep=None, p=0.0):
        """Softmax over the window of each mode (module docstring), token by token."""
        form = {"causal": reference.reference_window_causal, "encoder": reference.reference_local_window,
                "cross": reference.reference_window_cross}[self.mode]
        return form(q, k, v, valid, self.memory_size, self.scale, keep, p)

    def causal(self, q, k, v, x, valid):
        return self._banded(q, k, v, valid, 0, self.memory_size - 1)

    def encode(self, q, k, v, x, valid):
        left = (self.memory_size - 1) // 2
        return self._banded(q, k, v, valid, -(self.memory_size - 1 - left), left)

    def memory(self, k, v, x, valid) -> Memory:
        """The queue after the whole source: slot j holds the real token of rank L - n + j (j < n)."""
        B, H, N, _ = k.shape
        n, work = self.memory_size, compute_dtype(k.dtype)
        order, lengths = compaction(all_valid(valid, B, N, k.device))
        rank = lengths[:, None] - n + torch.arange(n, device=k.device)[None, :]  # [B, n]
        filled = rank >= 0
        return slots_of_ranks(k, v, order, rank, filled, work)

    def read(self, q, memory: Memory):
        keep = self.keep_mask((*q.shape[:3], self.memory_size), q.device)
        return slot_read(q, memory, self.scale, mask_empty=True, keep=keep, dropout_p=self.read_dropout())

    def step(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        B, H, _, d = q.shape
        n, work = self.memory_size, compute_dtype(q.dtype)
        valid = all_valid(valid, B, 1, q.device)[:, 0]
        if not state:
            state = {"key_memory": q.new_zeros(B, H, n, d, dtype=work),
                     "value_memory": q.new_zeros(B, H, n, d, dtype=work),
                     "count": torch.zeros(B, dtype=torch.long, device=q.device)}
        push = valid[:, None, None, None]
        new = {}
        for name, x_t in (("key_memory", k), ("value_memory", v)):
            queue = state[name]
            shifted = torch.cat([queue[:, :, 1:], x_t.to(work)], dim=2)  # U K~ + e_n (x) k
            new[name] = torch.where(push, shifted, queue)
        new["count"] = state["count"] + valid.long()
        filled = torch.minimum(new["count"], torch.full_like(new["count"], n))
        occupied = torch.arange(n, device=q.device)[None, :] >= (n - filled)[:, None]  # [B, n]
        scores = self.scale * torch.matmul(q.to(work), new["key_memory"].transpose(-1, -2))
        out = torch.matmul(masked_softmax(scores, occupied[:, None, None, :]), new["value_memory"])
        return zero_padding_rows(out, valid[:, None]).to(q.dtype), new
