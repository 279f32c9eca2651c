"""ABC with explicit control vectors phi_i [n] (any sign): the shared core of Linformer, random,
clustering, global-token and bidirectional compressive control.

Memory after row t (per head, per slot j), Eq. 3 and 5 of the paper:
    K~_t[j] = sum_{i<=t} phi_i[j] k_i        (divided by z_t[j] = sum_{i<=t} phi_i[j] if ``normalize``)
    out_t   = V~_t^T softmax_j(scale * K~_t[j] . q_t)
With ``mask_empty`` a slot no token has written yet (phi_i[j] == 0 for every i <= t) takes no part
in the softmax: it holds nothing to attend to (slot-assignment strategies). A row that can read no
slot at all (only padding so far) outputs 0.

The causal form never materialises K~_t: scores are the linear-attention sum
s_t = sum_{i<=t} (q_t . k_i) phi_i, and outputs o_t = sum_{i<=t} (w_t . phi_i) v_i with w_t = p_t (/ z_t):
two chunked passes of ``causal_linear_attention``, linear time and memory in N.

Attention dropout (training): p_t is multiplied by a keep mask over the n slots and divided by
1 - rate (``ops.utils.drop``) before it reads the values; slot j of the mask is slot j of the
memory (mask [B, H, M, n], row t, slot j).
"""

from typing import ClassVar, Optional, Tuple

import torch

from ..ops.linear import causal_linear_attention, linear_state_update
from ..ops.utils import drop
from ._common import all_valid, compute_dtype, masked_softmax, token_ranks
from .base import Memory, State, Strategy
from .reference import phi_by_token, reference_slot_bidirectional, reference_slot_causal


def _normalised(scores: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """scores / z where z != 0, else 0 (an empty normalised slot holds nothing)."""
    safe = z != 0
    return torch.where(safe, scores / torch.where(safe, z, torch.ones_like(z)), torch.zeros_like(scores))


def causal_slot_attention(q, k, v, phi, scale: float, normalize: bool = False, mask_empty: bool = False,
                          keep: Optional[torch.Tensor] = None, dropout_p: float = 0.0) -> torch.Tensor:
    """q, k, v: [B, H, N, d]; phi: [B, H, N, n] (0 at padding); keep: dropout keep mask [B, H, N, n]
    at rate ``dropout_p``, or None. Returns [B, H, N, d] in q's dtype."""
    out_dtype, work = q.dtype, compute_dtype(q.dtype)
    q, k, v, phi = (t.to(work) for t in (q, k, v, phi))
    scores = causal_linear_attention(q * scale, k, phi)  # [B, H, N, n]
    z = phi.cumsum(dim=2) if normalize else None
    if normalize:
        scores = _normalised(scores, z)
    allowed = (phi != 0).cumsum(dim=2) > 0 if mask_empty else None
    probs = drop(masked_softmax(scores, allowed), keep, dropout_p)
    if normalize:
        probs = _normalised(probs, z)
    return causal_linear_attention(probs, phi, v).to(out_dtype)


def slot_step(q, k, v, phi, state: Optional[State], scale: float, normalize: bool = False,
              mask_empty: bool = False) -> Tuple[torch.Tensor, State]:
    """One token: q, k, v [B, H, 1, d]; phi [B, H, 1, n]. State: ``key_memory`` / ``value_memory``
    [B, H, n, d] (unnormalised sums), ``normalizer`` [B, H, n] (sum of phi), ``written`` [B, H, n]
    (1 once a token has written the slot)."""
    work = compute_dtype(q.dtype)
    q1, k1, v1, phi1 = (t[:, :, 0].to(work) for t in (q, k, v, phi))
    previous = state or {}
    key_memory = linear_state_update(previous.get("key_memory"), phi1, k1)
    value_memory = linear_state_update(previous.get("value_memory"), phi1, v1)
    normalizer = phi1 if not previous else previous["normalizer"] + phi1
    written = (phi1 != 0).to(work) if not previous else torch.maximum(previous["written"], (phi1 != 0).to(work))
    state = {"key_memory": key_memory, "value_memory": value_memory, "normalizer": normalizer,
             "written": written}
    out = slot_read(q, state, scale, normalize, mask_empty)
    return out, state


def slot_memory(k, v, phi, normalize: bool = False) -> Memory:
    """Bidirectional memory: k, v [B, H, N, d]; phi [B, H, N, n] (0 at padding)."""
    work = compute_dtype(k.dtype)
    k, v, phi = (t.to(work) for t in (k, v, phi))
    z = phi.sum(dim=2)
    key_memory = torch.einsum("bhin,bhid->bhnd", phi, k)
    value_memory = torch.einsum("bhin,bhid->bhnd", phi, v)
    return {"key_memory": key_memory, "value_memory": value_memory, "normalizer": z,
            "written": ((phi != 0).sum(dim=2) > 0).to(work)}


def slot_read(q, memory: Memory, scale: float, normalize: bool = False, mask_empty: bool = False,
              keep: Optional[torch.Tensor] = None, dropout_p: float = 0.0) -> torch.Tensor:
    """q [B, H, M, d] reads a slot memory (``slot_memory`` / ``slot_step`` state); keep: dropout
    keep mask [B, H, M, n] at rate ``dropout_p``, or None."""
    key_memory, value_memory = memory["key_memory"], memory["value_memory"]
    if normalize:
        z = memory["normalizer"][..., None]
        key_memory, value_memory = _normalised(key_memory, z), _normalised(value_memory, z)
    scores = scale * torch.matmul(q.to(key_memory.dtype), key_memory.transpose(-1, -2))
    allowed = memory["written"][:, :, None, :] > 0 if mask_empty else None
    probs = drop(masked_softmax(scores, allowed), keep, dropout_p)
    return torch.matmul(probs, value_memory).to(q.dtype)


class SlotStrategy(Strategy):
    """A strategy whose control is an explicit phi per token: a subclass supplies only ``control``
    (and sets ``normalize`` / ``mask_empty``); the causal, decoding, memory and read forms are
    these. Decoding states carry ``position``, the number of real tokens seen, so that a decoded
    token gets the rank a full pass gives it."""

    normalize: ClassVar[bool] = False  # divide the slots by sum(phi) (means rather than sums)
    mask_empty: ClassVar[bool] = False  # leave slots no token has written out of the softmax

    @classmethod
    def applies_dropout(cls) -> bool:
        return True  # over the n slot probabilities, causal and read forms (training only)

    def control(self, ranks: torch.Tensor, valid: torch.Tensor, k: torch.Tensor, dtype) -> torch.Tensor:
        """phi [B, H, N, n], 0 at padding, for tokens of rank ``ranks`` [B, N] (among the real tokens
        of their sequence), ``valid`` [B, N] and keys k [B, H, N, d]; in ``dtype`` unless the
        strategy needs its work dtype."""
        raise NotImplementedError

    def naive_phi(self, rank: int, key: torch.Tensor) -> torch.Tensor:
        """phi of one real token [H, n] from the strategy's definition, given its rank among the real
        tokens of its sequence and its key [H, d]: what ``naive`` writes token by token."""
        raise NotImplementedError

    def naive(self, q, k, v, x, valid, keep=None, p=0.0):
        """Eq. 3-5 with phi built token by token by ``naive_phi``."""
        phi = phi_by_token(lambda b, t, rank: self.naive_phi(rank, k[b, :, t]), valid, k.shape, self.memory_size,
                           q.dtype)
        form = reference_slot_causal if self.mode == "causal" else reference_slot_bidirectional
        return form(q, k, v, phi, self.scale, self.normalize, self.mask_empty, keep, p)

    def written(self, k: torch.Tensor, phi: torch.Tensor) -> None:
        """Called after a full pass wrote keys k with control phi (training-time updates)."""

    def causal(self, q, k, v, x, valid):
        valid = all_valid(valid, q.shape[0], q.shape[2], q.device)
        phi = self.control(token_ranks(valid), valid, k, q.dtype)
        keep = self.keep_mask(phi.shape, q.device)
        out = causal_slot_attention(q, k, v, phi, self.scale, self.normalize, self.mask_empty, keep,
                                    self.read_dropout())
        self.written(k.detach(), phi)
        return out

    def step(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        valid = all_valid(valid, q.shape[0], 1, q.device)
        position = state["position"] if state else torch.zeros(q.shape[0], dtype=torch.long, device=q.device)
        phi = self.control(position[:, None], valid, k, q.dtype)
        out, new = slot_step(q, k, v, phi, state, self.scale, self.normalize, self.mask_empty)
        new["position"] = position + valid[:, 0].long()
        return out, new

    def memory(self, k, v, x, valid) -> Memory:
        valid = all_valid(valid, k.shape[0], k.shape[2], k.device)
        phi = self.control(token_ranks(valid), valid, k, k.dtype)
        memory = slot_memory(k, v, phi, self.normalize)
        self.written(k.detach(), phi)
        return memory

    def read(self, q, memory: Memory):
        keep = self.keep_mask((*q.shape[:3], memory["key_memory"].shape[2]), q.device)
        return slot_read(q, memory, self.scale, self.normalize, self.mask_empty, keep, self.read_dropout())
