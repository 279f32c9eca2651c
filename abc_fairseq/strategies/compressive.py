"""Compressive transformer with mean pooling as ABC (paper Appendix A.3, Eq. 14; Table 1: Comp. Trans.).

phi_i = e_{ceil(i/c)} / c: token i is added, divided by c, into the slot of its block of c tokens,
so a completed slot holds the mean of its block (Eq. 14), and the block being filled holds the sum
of its tokens so far divided by c.

Bounded how: unbounded, this memory grows as N / c slots. Causal attention caps it at n slots, a
FIFO like ``window``'s (§3.3): the block being filled plus the n - 1 most recently completed blocks;
older blocks are popped (U K~). Row t therefore reads the means of blocks b-n+1 .. b-1 and the
partial block b = floor((t-1)/c) (1-based t). c is ``--compressive-ratio``; n the memory flag.
Slots not filled yet are left out of the softmax. Padding is never written (blocks count real
tokens) and padding rows output 0.

Encoder / cross attention (whole sequence known): the paper's own setting, c = L / n for a sequence
of L real tokens: token of rank r (from 0) goes to slot floor(n r / L) and each slot holds the mean
of its tokens, so all L tokens are kept in at most n slots (Table 1: e_{floor(n t / N)}).

Causal training: banded attention over pooled blocks, O(N n d) time and O(N (n + d)) memory.
Decoding state per head: n slots of K~, V~ [n, d] and a token counter.

Attention dropout (training): the keep mask is [B, H, M, n] in the decoding state's slot order:
causal slot j < n - 1 is the completed block n - 1 - j blocks before the row's own, slot n - 1 the
row's partial block; encoder / cross slot j is slot floor(n r / L) = j.
"""

from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from ..ops.utils import drop, zero_safe_matmul
from . import reference
from ._band import pad_rows, with_neighbours
from ._common import all_valid, compute_dtype, masked_softmax, on_real_rows, token_ranks, zero_padding_rows
from ._slots import slot_memory, slot_read
from .base import Memory, Setting, State, Strategy
from .registry import register

RATIO = Setting("compressive_ratio", "tokens per slot",
                "compressive (causal): compression ratio c, tokens mean-pooled into one memory slot",
                default=4, metavar="C")


def pooled_causal_attention(q, k, v, ratio: int, slots: int, scale: float,
                            keep: Optional[torch.Tensor] = None, dropout_p: float = 0.0) -> torch.Tensor:
    """Causal compressive attention on left-aligned rows: q, k, v [B, H, N, d] -> [B, H, N, d];
    keep: dropout keep mask [B, H, N, n] (slots as in the module docstring) at rate ``dropout_p``.

    Rows are grouped S = max(n - 1, 1) blocks at a time; a group reads the pooled blocks of its own
    and the previous group (a band of 2 S blocks), plus each row's own partial block.
    """
    B, H, N, d = q.shape
    group_blocks = max(slots - 1, 1)
    rows = group_blocks * ratio
    q, k, v = (pad_rows(t, rows) for t in (q, k, v))
    padded = q.shape[2]
    groups, blocks = padded // rows, padded // ratio
    k_blocks, v_blocks = k.view(B, H, blocks, ratio, d), v.view(B, H, blocks, ratio, d)
    partial_k = (k_blocks.cumsum(dim=3) / ratio).view(B, H, groups, rows, d)
    partial_v = (v_blocks.cumsum(dim=3) / ratio).view(B, H, groups, rows, d)
    keys = with_neighbours(k_blocks.sum(dim=3) / ratio, group_blocks, 1, 0)  # [B, H, G, 2S, d]
    values = with_neighbours(v_blocks.sum(dim=3) / ratio, group_blocks, 1, 0)

    qg = q.view(B, H, groups, rows, d)
    band = scale * torch.matmul(qg, keys.transpose(-1, -2))  # [B, H, G, R, 2S]
    own = scale * (qg * partial_k).sum(dim=-1, keepdim=True)
    behind = group_blocks + torch.arange(rows, device=q.device)[:, None] // ratio \
        - torch.arange(2 * group_blocks, device=q.device)[None, :]  # query block - key block
    exists = with_neighbours(q.new_ones(1, 1, blocks, 1), group_blocks, 1, 0)[..., 0] > 0  # [1, 1, G, 2S]
    allowed = ((behind >= 1) & (behind <= slots - 1))[None, None, None] & exists[:, :, :, None, :]
    allowed = torch.cat([allowed, torch.ones_like(allowed[..., :1])], dim=-1)
    probs = masked_softmax(torch.cat([band, own], dim=-1), allowed)
    if keep is not None:  # band column -> slot n - 1 - behind, own partial block -> slot n - 1
        entry = torch.cat([(slots - 1 - behind).clamp(0, slots - 1), torch.full_like(behind[:, :1], slots - 1)], -1)
        rows_keep = pad_rows(keep.to(q.dtype), rows).view(B, H, groups, rows, slots)
        probs = drop(probs, rows_keep.gather(-1, entry[None, None, None].expand(B, H, groups, -1, -1)), dropout_p)
    out = zero_safe_matmul(probs[..., :-1], values, allowed[..., :-1], summary=v)
    out = out + probs[..., -1:] * partial_v
    return out.reshape(B, H, padded, d)[:, :, :N]


@register
class CompressiveMeanPool(Strategy):
    """Mean-pooled blocks of c tokens in a FIFO of n slots (causal); L / n per slot otherwise."""

    name = "compressive"
    paper = "Appendix A.3, Eq. 14 (Table 1: Comp. Trans.)"

    settings = (RATIO,)

    @classmethod
    def applies_dropout(cls) -> bool:
        return True  # over the n slot probabilities, causal and read forms (training only)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ratio = self.options.get(RATIO)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, ratio={self.ratio}"

    def naive(self, q, k, v, x, valid, keep=None, p=0.0):
        """Eq. 14's pooled blocks (causal: a FIFO of n) or the n slot means (encoder, cross), token by token."""
        if self.mode == "causal":
            return reference.reference_compressive_causal(q, k, v, valid, self.memory_size, self.ratio, self.scale,
                                                          keep, p)
        return reference.reference_compressive_bidirectional(q, k, v, valid, self.memory_size, self.scale, keep, p)

    def causal(self, q, k, v, x, valid):
        def attend(q, k, v, lengths, keep):
            return pooled_causal_attention(q, k, v, self.ratio, self.memory_size, self.scale, keep,
                                           self.read_dropout())

        return on_real_rows(q, k, v, valid, self.keep_mask((*q.shape[:3], self.memory_size), q.device), attend)

    def step(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        B, H, _, d = q.shape
        n, c, work = self.memory_size, self.ratio, compute_dtype(q.dtype)
        valid = all_valid(valid, B, 1, q.device)[:, 0]
        if not state:
            state = {"completed_keys": q.new_zeros(B, H, n - 1, d, dtype=work),
                     "completed_values": q.new_zeros(B, H, n - 1, d, dtype=work),
                     "partial_key": q.new_zeros(B, H, 1, d, dtype=work),
                     "partial_value": q.new_zeros(B, H, 1, d, dtype=work),
                     "count": torch.zeros(B, dtype=torch.long, device=q.device)}
        count = state["count"]
        starts_block = (valid & (count > 0) & (count % c == 0))[:, None, None, None]
        write = valid[:, None, None, None].to(work)
        new = {"count": count + valid.long()}
        for kind, x_t in (("key", k), ("value", v)):
            completed, partial = state[f"completed_{kind}s"], state[f"partial_{kind}"]
            if n > 1:  # push the finished block, pop the oldest (U K~ + e (x) mean)
                pushed = torch.cat([completed[:, :, 1:], partial], dim=2)
                completed = torch.where(starts_block, pushed, completed)
            partial = torch.where(starts_block, torch.zeros_like(partial), partial)
            new[f"completed_{kind}s"] = completed
            new[f"partial_{kind}"] = partial + write * x_t.to(work) / c
        done = (new["count"] - 1).clamp_min(0) // c  # completed blocks before the current one
        filled = torch.minimum(done, torch.full_like(done, n - 1))
        occupied = torch.cat([torch.arange(n - 1, device=q.device)[None, :] >= (n - 1 - filled)[:, None],
                              (new["count"] > 0)[:, None]], dim=1)  # [B, n]
        keys = torch.cat([new["completed_keys"], new["partial_key"]], dim=2)
        values = torch.cat([new["completed_values"], new["partial_value"]], dim=2)
        scores = self.scale * torch.matmul(q.to(work), keys.transpose(-1, -2))
        out = torch.matmul(masked_softmax(scores, occupied[:, None, None, :]), values)
        return zero_padding_rows(out, valid[:, None]).to(q.dtype), new

    def memory(self, k, v, x, valid) -> Memory:
        valid = all_valid(valid, k.shape[0], k.shape[2], k.device)
        lengths = valid.sum(dim=1, keepdim=True).clamp_min(1)
        slot = (token_ranks(valid) * self.memory_size) // lengths  # floor(n r / L) < n
        phi = F.one_hot(slot.clamp_max(self.memory_size - 1), self.memory_size).to(k.dtype)
        phi = (phi * valid[..., None].to(k.dtype))[:, None].expand(-1, self.num_heads, -1, -1)
        return slot_memory(k, v, phi, normalize=True)

    def read(self, q, memory: Memory):
        keep = self.keep_mask((*q.shape[:3], self.memory_size), q.device)
        return slot_read(q, memory, self.scale, normalize=True, mask_empty=True, keep=keep,
                         dropout_p=self.read_dropout())
