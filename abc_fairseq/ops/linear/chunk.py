"""Causal linear-attention prefix sums, chunked: the workhorse of the non-exp strategies.

    o_t = sum_{i<=t} (q_t . k_i) v_i = q_t^T S_t,    S_t = sum_{i<=t} k_i v_i^T   [D x E]

computed chunk by chunk (C rows): inside a chunk a masked C x C product, across chunks the
exclusive prefix of the per-chunk states. Time O(N (C (D + E) + D E)), memory O(N (C + D E / C)):
linear in N, never the N x D x E of every S_t. Autograd differentiates it as written.

Kernel attention uses it once (numerator); slot strategies twice: scores with (q, k, phi) and
outputs with (p, phi, v) (see ``strategies._slots``).
"""

from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F

from ..utils import zero_safe_matmul

DEFAULT_CHUNK = 64


def causal_linear_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    initial_state: Optional[torch.Tensor] = None,
    chunk_size: int = DEFAULT_CHUNK,
    return_state: bool = False,
) -> Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
    """q, k: [B, H, N, D]; v: [B, H, N, E]; initial_state: [B, H, D, E] (sum over an earlier
    prefix) or None. Returns o [B, H, N, E] (and the final state S_N [B, H, D, E])."""
    B, H, N, D = q.shape
    E = v.shape[-1]
    C = max(1, min(chunk_size, N))
    pad = (-N) % C
    if pad:  # zero rows at the end write nothing and their outputs are dropped
        q, k, v = (F.pad(t, (0, 0, 0, pad)) for t in (q, k, v))
    chunks = (N + pad) // C
    qc = q.reshape(B, H, chunks, C, D)
    kc = k.reshape(B, H, chunks, C, D)
    vc = v.reshape(B, H, chunks, C, E)
    causal = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()
    scores = torch.matmul(qc, kc.transpose(-1, -2)).masked_fill(~causal, 0.0)
    chunk_states = torch.matmul(kc.transpose(-1, -2), vc)  # [B, H, chunks, D, E]
    inclusive = chunk_states.cumsum(dim=2)
    # Within each chunk; a non-finite v_i must not reach rows t < i through a masked zero.
    out = zero_safe_matmul(scores, vc, causal, summary=inclusive[:, :, -1])
    before = torch.cat([torch.zeros_like(inclusive[:, :, :1]), inclusive[:, :, :-1]], dim=2)
    if initial_state is not None:
        before = before + initial_state[:, :, None]
    out = out + torch.matmul(qc, before)  # what earlier chunks wrote
    out = out.reshape(B, H, N + pad, E)[:, :, :N]
    if not return_state:
        return out
    final = inclusive[:, :, -1]
    if initial_state is not None:
        final = final + initial_state
    return out, final
