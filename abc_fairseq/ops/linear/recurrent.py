"""Causal linear attention as a recurrence: the state S_t = S_{t-1} + k_t v_t^T, one token at a time."""

from typing import Optional

import torch


def linear_state_update(state: Optional[torch.Tensor], k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """S + k v^T for one token: state [B, H, D, E] or None; k [B, H, D]; v [B, H, E]."""
    update = k[..., :, None] * v[..., None, :]
    return update if state is None else state + update
