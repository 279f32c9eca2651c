"""Causal gated slot attention as a recurrence on the PyTorch path: one token in, one output out,
O(n d) per head."""

from typing import Tuple

import torch

from ..utils import compute_dtype
from .state import GSAState


def recurrent_causal_gsa_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_gates: torch.Tensor,
                              state: GSAState, scale: float, in_place: bool = False) -> Tuple[torch.Tensor, GSAState]:
    """``causal_gsa_step`` on the PyTorch path, its arguments checked (``gsa.op``).

    q, k: [B, H, 1, d]; v: [B, H, 1, dv]; log_gates: [B, H, 1, n]; state: the GSAState of the
    prefix. Returns (out [B, H, 1, dv] in q's dtype, the next GSAState). ``in_place``: the next
    state is written into ``state``'s tensors, which are returned (the same storage every step).
    """
    work = compute_dtype(q.dtype)
    g = log_gates[:, :, 0].to(work)[..., None]  # [B, H, n, 1]
    forget, write = torch.exp(g), -torch.expm1(g)
    key, value = k[:, :, 0, None, :].to(work), v[:, :, 0, None, :].to(work)  # [B, H, 1, d]
    if in_place:
        key_memory = state.key_memory.mul_(forget).addcmul_(write, key)
        value_memory = state.value_memory.mul_(forget).addcmul_(write, value)
    else:
        key_memory = forget * state.key_memory.to(work) + write * key
        value_memory = forget * state.value_memory.to(work) + write * value
    scores = scale * torch.einsum("bhnd,bhd->bhn", key_memory, q[:, :, 0].to(work))
    out = torch.einsum("bhn,bhnd->bhd", torch.softmax(scores, dim=-1), value_memory)
    return out.unsqueeze(2).to(q.dtype), GSAState(key_memory, value_memory)
