"""Causal ABC as a recurrence on the PyTorch path: one token in, one output out, O(n d) work and
state per head."""

import torch

from ..utils import compute_dtype
from .state import ABCState


def recurrent_causal_abc_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, phi_logits: torch.Tensor,
                              state: ABCState, scale: float, in_place: bool = False):
    """``causal_abc_step`` on the PyTorch path, its arguments checked (``causal.op``).

    q, k: [B, H, 1, d]; v: [B, H, 1, dv]; phi_logits: [B, H, 1, n]; state: the ABCState of the
    prefix (the empty state at the first token). Returns (out [B, H, 1, dv] in q's dtype, the
    next ABCState). ``in_place``: the next state is written into ``state``'s tensors, which are
    returned (the same storage every step; the same values as the new tensors otherwise made).
    """
    work = compute_dtype(q.dtype)
    # One fused multiply-add per memory: K~' = exp(g - g') K~ + exp(l - g') k with g' = logaddexp(g, l).
    # (Not lerp(K~, k, exp(l - g')): the two weights sum to 1 only while the normaliser can hold
    # log 2, which fails for runs of padding at PAD_LOGIT, where the parallel form sums.)
    logits = phi_logits[:, :, 0].to(work)  # [B, H, n]
    g_new = torch.logaddexp(state.log_normalizer, logits)
    keep = torch.exp(state.log_normalizer - g_new).unsqueeze(-1)  # 0 at the first token
    write = torch.exp(logits - g_new).unsqueeze(-1)  # this token's phi, <= 1
    if in_place:  # the same two operations per memory, written into the state's storage
        key_memory = state.key_memory.mul_(keep).addcmul_(write, k.to(work))
        value_memory = state.value_memory.mul_(keep).addcmul_(write, v.to(work))
        g_new = state.log_normalizer.copy_(g_new)
    else:
        key_memory = torch.addcmul(state.key_memory * keep, write, k.to(work))
        value_memory = torch.addcmul(state.value_memory * keep, write, v.to(work))
    # The scale goes on the d-vector q, not on the n x d memory; matmul keeps [B, H] as batch.
    scores = torch.matmul(key_memory, (q.to(work) * scale).transpose(-1, -2))  # [B, H, n, 1]
    attn = torch.softmax(scores, dim=-2)
    out = torch.matmul(attn.transpose(-1, -2), value_memory)  # [B, H, 1, d]
    return out.to(q.dtype), ABCState(key_memory, value_memory, g_new)
