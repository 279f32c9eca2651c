"""Causal linear attention written straight from its definition: the oracle for the tests.

    o_t = sum_{i<=t} (q_t . k_i) v_i

as one masked N x N product, O(N^2 (D + E)): use it on small inputs.
"""

from typing import Optional

import torch


def reference_causal_linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                      initial_state: Optional[torch.Tensor] = None) -> torch.Tensor:
    """q, k: [B, H, N, D]; v: [B, H, N, E]; initial_state: [B, H, D, E] (sum over an earlier prefix)
    or None. Returns o [B, H, N, E]."""
    N = q.shape[2]
    causal = torch.ones(N, N, dtype=torch.bool, device=q.device).tril()
    weights = torch.matmul(q, k.transpose(-1, -2)).masked_fill(~causal, 0.0)
    out = torch.matmul(weights, v)
    if initial_state is not None:
        out = out + torch.matmul(q, initial_state)
    return out
