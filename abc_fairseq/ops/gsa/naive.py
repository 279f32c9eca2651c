"""Naive causal gated slot attention written straight from the equations: the oracle for the tests.

Zhang et al., "Gated Slot Attention for Efficient Linear-Time Sequence Modeling" (2024), per head
and slot j, with forget gates a_t in (0, 1]^n given as log gates g_t = log a_t:
    K~_t = diag(a_t) K~_{t-1} + (1 - a_t) (x) k_t        (K~_0 = 0)
    V~_t = diag(a_t) V~_{t-1} + (1 - a_t) (x) v_t
    o_t  = V~_t^T softmax(scale * K~_t q_t)
1 - a_t is computed as -expm1(g_t): exact however close a_t is to 1. O(N n d) time, one step at a
time; use it on small inputs.
"""

from typing import Optional

import torch

from ..utils import default_scale, drop, dropout_keep_mask
from .state import GSAState


def reference_causal_gsa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_gates: torch.Tensor,
                         scale: Optional[float] = None, initial_state: Optional[GSAState] = None,
                         dropout_p: float = 0.0, dropout_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """q, k: [B, H, N, d]; v: [B, H, N, dv]; log_gates: [B, H, N, n] (log a_t <= 0);
    initial_state: the memories before row 0 (default zero); dropout_mask: bool [B, H, N, n],
    True = keep, at rate dropout_p (drawn if not given). Returns [B, H, N, dv], computed in the
    inputs' dtype."""
    keep = dropout_keep_mask(dropout_p, dropout_mask, log_gates.shape, q.device)
    scale = default_scale(scale, q.shape[-1])
    B, H, N, d = q.shape
    n = log_gates.shape[-1]
    if initial_state is None:
        key_memory = q.new_zeros(B, H, n, d)
        value_memory = q.new_zeros(B, H, n, v.shape[-1])
    else:
        key_memory, value_memory = (field.to(q.dtype) for field in initial_state)
    outputs = []
    for t in range(N):
        forget = log_gates[:, :, t].exp()[..., None]  # a_t
        write = -torch.expm1(log_gates[:, :, t])[..., None]  # 1 - a_t
        key_memory = forget * key_memory + write * k[:, :, t, None, :]
        value_memory = forget * value_memory + write * v[:, :, t, None, :]
        attn = torch.softmax(scale * torch.einsum("bhnd,bhd->bhn", key_memory, q[:, :, t]), dim=-1)
        attn = drop(attn, None if keep is None else keep[:, :, t], dropout_p)
        outputs.append(torch.einsum("bhn,bhnd->bhd", attn, value_memory))
    return torch.stack(outputs, dim=2)
