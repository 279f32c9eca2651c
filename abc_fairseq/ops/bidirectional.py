"""Bidirectional ABC: encoder self attention and cross attention (Eq. 3-4 of the paper)."""

from typing import Optional, Tuple

import torch

from ._checks import check_padding_mask, check_qkv_phi, default_scale
from .recurrent import compute_dtype


def abc_memory(
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    key_padding_mask: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Write a whole sequence into n slots.

    k, v: [B, H, N, d]; phi_logits: [B, H, N, n]; key_padding_mask: [B, N], True at padding.
    Returns (K~, V~), each [B, H, n, d] in fp32 (fp64 for fp64 inputs). Padding is never written:
    its logits are -inf, so its phi is exactly 0. A sequence made only of padding gives zero memory.
    """
    work = compute_dtype(k.dtype)
    logits = phi_logits.to(work)
    if key_padding_mask is not None:
        logits = logits.masked_fill(key_padding_mask[:, None, :, None], float("-inf"))
    phi = torch.softmax(logits, dim=2)  # over positions, one distribution per slot
    if key_padding_mask is not None:
        phi = phi.nan_to_num(0.0)  # all-padding rows: softmax of -inf is NaN
    key_memory = torch.einsum("bhin,bhid->bhnd", phi, k.to(work))
    value_memory = torch.einsum("bhin,bhid->bhnd", phi, v.to(work))
    return key_memory, value_memory


def abc_read(q: torch.Tensor, key_memory: torch.Tensor, value_memory: torch.Tensor,
             scale: Optional[float] = None) -> torch.Tensor:
    """Read a bounded memory: V~^T softmax(scale K~ q).

    q: [B, H, M, d]; key_memory, value_memory: [B, H, n, d]. Returns [B, H, M, d] in q's dtype.
    """
    scale = default_scale(scale, q.shape[-1])
    scores = scale * torch.matmul(q.to(key_memory.dtype), key_memory.transpose(-1, -2))
    return torch.matmul(torch.softmax(scores, dim=-1), value_memory).to(q.dtype)


def abc(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    key_padding_mask: Optional[torch.Tensor] = None,
    scale: Optional[float] = None,
) -> torch.Tensor:
    """Bidirectional ABC_MLP: phi normalised over all (non-padding) positions.

    q: [B, H, M, d] (M may differ from N); k, v: [B, H, N, d]; phi_logits: [B, H, N, n];
    key_padding_mask: [B, N], True at padding. Returns [B, H, M, d] in q's dtype.
    """
    check_qkv_phi(q, k, v, phi_logits, same_length=False)
    check_padding_mask(key_padding_mask, k)
    key_memory, value_memory = abc_memory(k, v, phi_logits, key_padding_mask)
    return abc_read(q, key_memory, value_memory, scale)
