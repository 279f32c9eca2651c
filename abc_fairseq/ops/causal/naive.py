"""Naive causal ABC written straight from the paper's equations: the oracle for the tests.

Peng et al., "ABC: Attention with Bounded-memory Control", Eq. 3-4 and 12, with the causal
normaliser of footnote 5 (phi_i = alpha_i / sum_{j<=i} alpha_j is the paper's shorthand; Appendix B.1
normalises the memory of step t by the prefix sum up to t, which is what is written here).

These functions materialise the memory of every step and are O(N^2 n d): use them on small inputs.
"""

from typing import Optional

import torch

from ..utils import default_scale, drop, dropout_keep_mask


def reference_causal_abc(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    scale: Optional[float] = None,
    dropout_p: float = 0.0,
    dropout_mask: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Causal ABC_MLP: step t reads the memory of the prefix x_1..x_t.

    q, k, v: [B, H, N, d]; phi_logits: [B, H, N, n]; dropout_mask: bool [B, H, N, n], True =
    keep, the attention-dropout mask at rate dropout_p (drawn if not given). Returns [B, H, N, d].
    """
    keep = dropout_keep_mask(dropout_p, dropout_mask, phi_logits.shape, q.device)
    scale = default_scale(scale, q.shape[-1])
    N = q.shape[2]
    outputs = []
    for t in range(N):
        alpha = phi_logits[:, :, : t + 1].exp()  # alpha_i = exp(W_phi x_i), i <= t
        phi = alpha / alpha.sum(dim=2, keepdim=True)  # prefix normaliser
        K_mem = torch.einsum("bhin,bhid->bhnd", phi, k[:, :, : t + 1])
        V_mem = torch.einsum("bhin,bhid->bhnd", phi, v[:, :, : t + 1])
        attn = torch.softmax(scale * torch.einsum("bhnd,bhd->bhn", K_mem, q[:, :, t]), dim=-1)
        attn = drop(attn, None if keep is None else keep[:, :, t], dropout_p)
        outputs.append(torch.einsum("bhn,bhnd->bhd", attn, V_mem))
    return torch.stack(outputs, dim=2)
