"""Bidirectional ABC on the PyTorch path: the memory write and read (Eq. 3-4 of the paper)."""

from typing import Optional, Tuple

import torch

from ..utils import compute_dtype, drop


def _softmax_(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Softmax over ``dim`` in place (no autograd): x is strided, and torch.softmax would copy
    it to a contiguous buffer besides allocating its output."""
    x.sub_(x.amax(dim, keepdim=True)).exp_()
    return x.div_(x.sum(dim, keepdim=True))


def parallel_abc_memory(k: torch.Tensor, v: torch.Tensor, phi_logits: torch.Tensor,
                        key_padding_mask: Optional[torch.Tensor], overwrite_logits: bool
                        ) -> Tuple[torch.Tensor, torch.Tensor]:
    """``abc_memory`` on the PyTorch path, its arguments checked (``bidirectional.op``).

    k, v: [B, H, N, d]; phi_logits: [B, H, N, n]; key_padding_mask: [B, N], True at padding, or
    None; overwrite_logits: phi may be computed in the logits' storage. Returns (K~, V~) fp32.
    """
    work = compute_dtype(k.dtype)
    owned = phi_logits.dtype != work or key_padding_mask is not None  # a fresh tensor below
    logits = phi_logits.to(work)
    del phi_logits  # a caller that handed its logits over gets them freed as soon as phi exists
    if key_padding_mask is not None:
        logits = logits.masked_fill(key_padding_mask[:, None, :, None], float("-inf"))
    if (owned or overwrite_logits) and not (torch.is_grad_enabled() and logits.requires_grad):
        phi = _softmax_(logits, dim=2)  # over positions, one distribution per slot
    else:
        phi = torch.softmax(logits, dim=2)
    del logits
    if key_padding_mask is not None:
        phi = phi.nan_to_num(0.0)  # all-padding rows: softmax of -inf is NaN
    phi_t = phi.transpose(-1, -2)  # matmul reads fairseq's strided k, v in place (einsum copies them)
    key_memory = torch.matmul(phi_t, k.to(work))
    value_memory = torch.matmul(phi_t, v.to(work))
    return key_memory, value_memory


def parallel_abc_read(q: torch.Tensor, key_memory: torch.Tensor, value_memory: torch.Tensor, scale: float,
                      dropout_p: float, keep_mask: Optional[torch.Tensor]) -> torch.Tensor:
    """``abc_read`` on the PyTorch path, its arguments checked (``bidirectional.op``): q [B, H, M, d];
    memories [B, H, n, d]; keep_mask bool [B, H, M, n] (True = kept) or None. Returns [B, H, M, dv]."""
    M = q.shape[2]
    # The scale goes on the smaller of q and the n x d memory (decoding reads with M < n rows),
    # never on the [B, H, M, n] scores, and the scores are a temporary: only the probabilities
    # are alive during the second product.
    if M < key_memory.shape[2]:
        scores = torch.matmul(q.to(key_memory.dtype) * scale, key_memory.transpose(-1, -2))
    else:
        scores = torch.matmul(q.to(key_memory.dtype), (key_memory * scale).transpose(-1, -2))
    probs = torch.softmax(scores, dim=-1)
    probs = drop(probs, keep_mask, dropout_p)
    return torch.matmul(probs, value_memory).to(q.dtype)
