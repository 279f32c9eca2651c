"""Causal gated slot attention as a recurrence: one token in, one output out, O(n d) per head."""

from typing import Optional, Tuple

import torch

from .._checks import check_qkv_phi, default_scale
from ..recurrent import compute_dtype
from .state import GSAState


def causal_gsa_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_gates: torch.Tensor,
                    state: Optional[GSAState] = None, scale: Optional[float] = None) -> Tuple[torch.Tensor, GSAState]:
    """One decoding step of causal GSA (see ``naive`` for the equations).

    q, k: [B, H, 1, d]; v: [B, H, 1, dv]; log_gates: [B, H, 1, n] (log a <= 0; 0 at padding keeps
    the state unchanged); state: the GSAState of the prefix, or None (empty). Returns the output
    [B, H, 1, dv] in q's dtype and the new state (float32, float64 for float64 inputs).
    """
    check_qkv_phi(q, k, v, log_gates, same_length=True, control_name="log_gates")
    if q.shape[2] != 1:
        raise ValueError(f"causal_gsa_step takes one token: q has shape {tuple(q.shape)}")
    B, H, _, d = q.shape
    n, dv, work = log_gates.shape[-1], v.shape[-1], compute_dtype(q.dtype)
    if state is None:
        state = GSAState.empty(B, H, n, d, dv, device=q.device, dtype=work)
    elif not isinstance(state, GSAState):
        raise ValueError(f"state must be a GSAState, got {type(state).__name__}")
    else:
        state.check(B, H, n, d, dv)
    g = log_gates[:, :, 0].to(work)[..., None]  # [B, H, n, 1]
    forget, write = torch.exp(g), -torch.expm1(g)
    key_memory = forget * state.key_memory.to(work) + write * k[:, :, 0, None, :].to(work)
    value_memory = forget * state.value_memory.to(work) + write * v[:, :, 0, None, :].to(work)
    scores = default_scale(scale, d) * torch.einsum("bhnd,bhd->bhn", key_memory, q[:, :, 0].to(work))
    out = torch.einsum("bhn,bhnd->bhd", torch.softmax(scores, dim=-1), value_memory)
    return out.unsqueeze(2).to(q.dtype), GSAState(key_memory, value_memory)
