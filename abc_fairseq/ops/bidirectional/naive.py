"""Naive bidirectional ABC written straight from the paper's equations: the oracle for the tests.

Peng et al., "ABC: Attention with Bounded-memory Control", Eq. 3-4 and 12: phi
normalised over every (non-padding) position.

These functions materialise the whole phi matrix: use them on small inputs.
"""

from typing import Optional

import torch

from ..utils import default_scale, drop, dropout_keep_mask


def reference_abc(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, phi_logits: torch.Tensor,
                  key_padding_mask: Optional[torch.Tensor] = None, scale: Optional[float] = None,
                  dropout_p: float = 0.0, dropout_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Bidirectional ABC_MLP.

    q: [B, H, M, d]; k, v: [B, H, N, d]; phi_logits: [B, H, N, n];
    key_padding_mask: [B, N] (True = padding); dropout_mask: bool [B, H, M, n], True = keep, the
    attention-dropout mask over the slots at rate dropout_p (drawn if not given). Returns [B, H, M, d].
    """
    keep = dropout_keep_mask(dropout_p, dropout_mask, (*q.shape[:3], phi_logits.shape[-1]), q.device)
    scale = default_scale(scale, q.shape[-1])
    alpha = phi_logits.exp()  # [B, H, N, n]
    if key_padding_mask is not None:
        alpha = alpha.masked_fill(key_padding_mask[:, None, :, None], 0.0)
    phi = alpha / alpha.sum(dim=2, keepdim=True)  # normalise over positions, per slot
    K_mem = torch.einsum("bhin,bhid->bhnd", phi, k)  # K~ = sum_i phi_i (x) k_i
    V_mem = torch.einsum("bhin,bhid->bhnd", phi, v)  # V~ = sum_i phi_i (x) v_i
    attn = torch.softmax(scale * torch.einsum("bhnd,bhmd->bhmn", K_mem, q), dim=-1)
    attn = drop(attn, keep, dropout_p)  # P * M / (1 - p)
    return torch.einsum("bhmn,bhnd->bhmd", attn, V_mem)  # V~^T softmax(K~ q)
