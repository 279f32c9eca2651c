"""Sliding window plus attention sinks (Xiao et al. 2024, "Efficient Streaming Language Models with
Attention Sinks", StreamingLLM) as ABC: the first S real tokens (the sinks, always kept) and the
last W = n - S real tokens, so the memory holds n slots like every strategy here. It adds no
parameter: a softmax model converted to it runs with no training (the zero-training control of a
conversion), and with n at least the sequence length it is that model's softmax attention.

Definition, per head. Ranks count real tokens from 0; a row of rank r reads the keys of the ranks
R(r), with one softmax over them, each key once (a key that is both a sink and in the window is one
slot, the sink's), and outputs sum_{i in R(r)} softmax_i(scale q_r . k_i) v_i:

  causal   R(r) = {i <= r : i < S or r - i < W}
  encoder  R(r) = {i < L : i < S or -floor((W-1)/2) <= i - r <= ceil((W-1)/2)}  (L real tokens;
           the local window of ``window``'s encoder attention)
  cross    R    = {i < L : i < S or i >= L - W}  (every decoder row reads the same memory)

S = 0 is ``window`` with n slots, S = n is ``global``. Positions are the model's own (a token keeps
its absolute position embedding; StreamingLLM's renumbering of positions inside the cache is for
rotary models and changes nothing here).

As ABC (Table 1's pieces): slots 0 .. S-1 are ``global``'s (phi_t = e_t for the real token of rank
t < S), slots S .. n-1 a FIFO queue fed by ``window``'s shift matrix U with the tokens of rank >= S
only, so the two parts never hold the same token. Slots no token has written are left out of the
softmax.

Training (parallel form): one softmax over the S sink columns and a band of W keys, in blocks
(``_band``): O(N (S + W) d) time and O(N (S + W)) memory. Decoding state per head: K~, V~ [n, d]
(sinks, then the queue) and a token counter. Cross memory: K~, V~ [n, d] and the slots' occupancy.

Attention dropout (training): the keep mask is [B, H, M, n]; slot j < S is the sink of rank j, slot
S + j is the window's key of rank r - W + 1 + j (causal: slot n - 1 is the row's own token),
r - floor((W-1)/2) + j (encoder) or L - W + j (cross).
"""

import math
from typing import List, Optional, Tuple

import torch

from ..ops.utils import drop, zero_safe_matmul
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
from .reference import _keep_rows, _real_positions, _softmax_read
from .registry import register
from .settings import Setting

SINKS = Setting("sink_tokens", "positions",
                "window-sink: S, the first real positions every query keeps (attention sinks); the window holds "
                "the memory size minus S tokens", default=4, low=0, metavar="S")


def sink_band_attention(q, k, v, lengths, scale: float, sinks: int, lo: int, hi: int, causal: bool,
                        keep: Optional[torch.Tensor] = None, dropout_p: float = 0.0) -> torch.Tensor:
    """One softmax of row t over the sinks (rows i < ``sinks``; i <= t when ``causal``) and the band
    of rows i >= ``sinks`` with lo <= t - i <= hi, every key i < length.

    q, k, v: [B, H, N, d] left-aligned (row i < lengths[b] real); returns [B, H, N, d]. The band is
    empty when hi < lo. keep: dropout keep mask [B, H, N, sinks + hi - lo + 1] (entry j < sinks:
    sink j; entry sinks + j: the key t - hi + j) at rate ``dropout_p``, or None.
    """
    B, H, N, _ = q.shape
    width, S = max(hi - lo + 1, 0), min(sinks, N)
    block = min(max(abs(lo), abs(hi), 1), N)
    qb = pad_rows(q, block)
    blocks = qb.shape[2] // block
    rows = torch.arange(blocks * block, device=q.device)
    real = rows[None, :] < lengths[:, None]  # [B, rows]
    scores, allowed, values, keeps = [], [], [], []
    if S:  # the sinks: the same S keys for every block
        sink_keys, sink_values = k[:, :, :S], v[:, :, :S]
        scores.append(scale * torch.matmul(qb, sink_keys.transpose(-1, -2)).view(B, H, blocks, block, S))
        ok = real[:, None, :S].expand(B, blocks * block, S)
        if causal:
            ok = ok & (torch.arange(S, device=q.device)[None, :] <= rows[:, None])[None]
        allowed.append(ok.view(B, 1, blocks, block, S))
        values.append(sink_values[:, :, None].expand(B, H, blocks, S, -1))
        if keep is not None:
            keeps.append(pad_rows(keep[..., :S].to(q.dtype), block).view(B, H, blocks, block, S))
    if width:  # the band, past the sinks
        before, after = math.ceil(max(hi, 0) / block), math.ceil(max(-lo, 0) / block)
        keys = with_neighbours(pad_rows(k, block), block, before, after)
        band_values = with_neighbours(pad_rows(v, block), block, before, after)
        kept = (real & (rows[None, :] >= sinks)).to(q.dtype)  # real keys that are not sinks
        kept = with_neighbours(kept[:, None, :, None], block, before, after)[..., 0] > 0  # [B, 1, nb, cols]
        offsets = band_offsets(block, before, after, q.device)
        scores.append(scale * torch.matmul(qb.view(B, H, blocks, block, -1), keys.transpose(-1, -2)))
        allowed.append(((offsets >= lo) & (offsets <= hi))[None, None, None] & kept[:, :, :, None, :])
        values.append(band_values)
        if keep is not None:  # entry sinks + hi - (t - i) of row t's mask, for every band column
            entry = (sinks + hi - offsets).clamp(sinks, sinks + width - 1)[None, None, None]
            window = pad_rows(keep.to(q.dtype), block).view(B, H, blocks, block, -1)
            keeps.append(window.gather(-1, entry.expand(B, H, blocks, -1, -1)))
    probs = masked_softmax(torch.cat(scores, dim=-1), torch.cat([a.expand(B, H, -1, -1, -1) for a in allowed], -1))
    if keep is not None:
        probs = drop(probs, torch.cat(keeps, dim=-1), dropout_p)
    out, start = 0, 0
    for part_allowed, part_values, summary in zip(allowed, values, (v[:, :, :S], v) if S else (v,)):
        count = part_allowed.shape[-1]
        out = out + zero_safe_matmul(probs[..., start:start + count], part_values, part_allowed, summary=summary)
        start += count
    return out.reshape(B, H, blocks * block, -1)[:, :, :N]


def _reads(keys: List[int], sinks: int, first_window_rank: int) -> List[int]:
    """The keep-mask slot of each rank in ``keys``: its own below ``sinks``, else its window slot."""
    return [i if i < sinks else sinks + i - first_window_rank for i in keys]


@register
class WindowWithSinks(Strategy):
    """The first S real tokens and a window of n - S (module docstring). No parameters."""

    name = "window-sink"
    paper = "Xiao et al. 2024 (StreamingLLM's attention sinks); §3.3 and App. A.1 (Table 1: Sliding-window, L2G)"
    settings = (SINKS,)

    @classmethod
    def validate(cls, memory_size, options, mode=None) -> None:
        super().validate(memory_size, options, mode)
        sinks = options.get(SINKS)
        if sinks > memory_size:
            raise ValueError(f"{options.flag(SINKS.key)} ({sinks}) must not exceed {options.flag('memory_size')} "
                             f"({memory_size}) for window-sink: the memory holds the sinks and a window of the rest")

    @classmethod
    def applies_dropout(cls) -> bool:
        return True  # over the n slot probabilities, every form but decoding (training only)

    @property
    def sinks(self) -> int:
        return self.options.get(SINKS)

    @property
    def window(self) -> int:
        return self.memory_size - self.sinks

    def _banded(self, q, k, v, valid, lo: int, hi: int, causal: bool):
        def attend(q, k, v, lengths, keep):
            return sink_band_attention(q, k, v, lengths, self.scale, self.sinks, lo, hi, causal, keep,
                                       self.read_dropout())

        return on_real_rows(q, k, v, valid, self.keep_mask((*q.shape[:3], self.memory_size), q.device), attend)

    def causal(self, q, k, v, x, valid):
        return self._banded(q, k, v, valid, 0, self.window - 1, causal=True)

    def encode(self, q, k, v, x, valid):
        left = max(self.window - 1, 0) // 2  # tokens before the row; W - 1 - left after it
        return self._banded(q, k, v, valid, left + 1 - self.window, left if self.window else -1, causal=False)

    def naive(self, q, k, v, x, valid, keep=None, p=0.0):
        """The ranks R(r) of the module docstring, softmax over them token by token."""
        S, W = self.sinks, self.window
        out = torch.zeros_like(q)
        for b in range(q.shape[0]):
            real = _real_positions(valid, b, k.shape[2])
            L = len(real)
            if self.mode == "cross":
                ranks = [i for i in range(L) if i < S or i >= L - W]
                if ranks:
                    mask = _keep_rows(keep, b, slice(None), _reads(ranks, S, L - W))
                    out[b] = _softmax_read(q[b], k[b, :, [real[i] for i in ranks]], v[b, :, [real[i] for i in ranks]],
                                           self.scale, mask, p)
                continue
            left = (W - 1) // 2 if W else 0
            for r, t in enumerate(real):
                if self.mode == "causal":
                    ranks, first = [i for i in range(r + 1) if i < S or r - i < W], r - W + 1
                else:
                    ranks, first = [i for i in range(L) if i < S or (W and -left <= i - r <= W - 1 - left)], r - left
                mask = _keep_rows(keep, b, [t], _reads(ranks, S, first))
                keys, values = k[b, :, [real[i] for i in ranks]], v[b, :, [real[i] for i in ranks]]
                out[b, :, t] = _softmax_read(q[b, :, [t]], keys, values, self.scale, mask, p)[:, 0]
        return out

    def memory(self, k, v, x, valid) -> Memory:
        """Slot j < S: the real source token of rank j; slot S + j: rank L - W + j when >= S."""
        B, H, N, _ = k.shape
        S, W, work = self.sinks, self.window, compute_dtype(k.dtype)
        order, lengths = compaction(all_valid(valid, B, N, k.device))
        slots = torch.arange(self.memory_size, device=k.device)[None, :]
        rank = torch.where(slots < S, slots, lengths[:, None] - W + slots - S)  # [B, n]
        filled = (rank < lengths[:, None]) & ((slots < S) | (rank >= S))
        return slots_of_ranks(k, v, order, rank, filled, work)

    def read(self, q, memory: Memory):
        keep = self.keep_mask((*q.shape[:3], self.memory_size), q.device)
        return slot_read(q, memory, self.scale, mask_empty=True, keep=keep, dropout_p=self.read_dropout())

    def step(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        """State: ``key_memory`` / ``value_memory`` [B, H, n, d] (sinks, then the queue, oldest
        first) and ``count`` [B], the real tokens seen."""
        B, H, _, d = q.shape
        n, S, W, work = self.memory_size, self.sinks, self.window, compute_dtype(q.dtype)
        valid = all_valid(valid, B, 1, q.device)[:, 0]
        if not state:
            state = {"key_memory": q.new_zeros(B, H, n, d, dtype=work),
                     "value_memory": q.new_zeros(B, H, n, d, dtype=work),
                     "count": torch.zeros(B, dtype=torch.long, device=q.device)}
        count, slots = state["count"], torch.arange(n, device=q.device)
        to_sink = (valid & (count < S))[:, None] & (slots[None, :] == count[:, None])  # [B, n]
        to_queue = (valid & (count >= S))[:, None, None, None]
        new = {}
        for name, x_t in (("key_memory", k), ("value_memory", v)):
            memory, x_t = state[name], x_t.to(work)
            memory = torch.where(to_sink[:, None, :, None], x_t, memory)
            if W:  # U on the queue + e_n (x) k
                pushed = torch.cat([memory[:, :, :S], memory[:, :, S + 1:], x_t], dim=2)
                memory = torch.where(to_queue, pushed, memory)
            new[name] = memory
        new["count"] = count + valid.long()
        queued = (new["count"] - S).clamp(0, W)
        occupied = torch.where(slots[None, :] < S, slots[None, :] < new["count"][:, None],
                               slots[None, :] - S >= (W - queued)[:, None])  # [B, n]
        scores = self.scale * torch.matmul(q.to(work), new["key_memory"].transpose(-1, -2))
        out = torch.matmul(masked_softmax(scores, occupied[:, None, None, :]), new["value_memory"])
        return zero_padding_rows(out, valid[:, None]).to(q.dtype), new
