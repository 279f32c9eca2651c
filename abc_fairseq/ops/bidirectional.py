"""Bidirectional ABC: encoder self attention and cross attention (Eq. 3-4 of the paper)."""

from functools import partial
from typing import Optional, Tuple

import torch

from ._checks import check_backend, check_padding_mask, check_qkv_phi, default_scale
from .dropout import drop, dropout_keep_mask
from .recurrent import compute_dtype
from .triton.dispatch import kernels_apply, run_kernels, unsupported_sizes


def _softmax_(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Softmax over ``dim`` in place (no autograd): x is strided, and torch.softmax would copy
    it to a contiguous buffer besides allocating its output."""
    x.sub_(x.amax(dim, keepdim=True)).exp_()
    return x.div_(x.sum(dim, keepdim=True))


def abc_memory(
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    key_padding_mask: Optional[torch.Tensor] = None,
    overwrite_logits: bool = False,
    backend: str = "auto",
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Write a whole sequence into n slots.

    k, v: [B, H, N, d]; phi_logits: [B, H, N, n]; key_padding_mask: [B, N], True at padding.
    overwrite_logits: phi may be computed in the logits' own storage when no gradient is
    needed (the caller hands them over; saves two [B, H, N, n] buffers at inference).
    backend: "auto" (Triton kernels for CUDA tensors when Triton imports), "torch" or "triton"
    (see ``causal_abc``).
    Returns (K~, V~), each [B, H, n, d] in fp32 (fp64 for fp64 inputs). Padding is never written:
    its logits are -inf, so its phi is exactly 0. A sequence made only of padding gives zero memory.
    """
    check_backend(backend)
    reason = unsupported_sizes(k.dtype, head_dim=k.shape[-1], value_dim=v.shape[-1],
                               memory_size=phi_logits.shape[-1])
    if k.numel() and v.numel() and kernels_apply(backend, k.device, reason, "abc_memory"):
        from .triton.bidirectional import memory_write
        # partial binds phi_logits now: the name is deleted below to free the logits early
        return run_kernels("abc_memory", backend, partial(memory_write, k, v, phi_logits, key_padding_mask, backend),
                           partial(abc_memory, k, v, phi_logits, key_padding_mask, backend="torch"))
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


def abc_read(q: torch.Tensor, key_memory: torch.Tensor, value_memory: torch.Tensor,
             scale: Optional[float] = None, dropout_p: float = 0.0,
             dropout_mask: Optional[torch.Tensor] = None, backend: str = "auto") -> torch.Tensor:
    """Read a bounded memory: V~^T softmax(scale K~ q), or V~^T (softmax(scale K~ q) * M / (1 - p))
    with attention dropout (``ops.dropout``; pass dropout_p = 0 in evaluation).

    q: [B, H, M, d]; key_memory, value_memory: [B, H, n, d]; dropout_mask: bool [B, H, M, n],
    True = keep (only with dropout_p > 0; drawn when not given); backend: as in ``abc_memory``.
    Returns [B, H, M, d] in q's dtype.
    """
    check_backend(backend)
    B, H, M, _ = q.shape
    keep_mask = dropout_keep_mask(dropout_p, dropout_mask, (B, H, M, key_memory.shape[2]), q.device)
    scale = default_scale(scale, q.shape[-1])
    reason = unsupported_sizes(q.dtype, head_dim=q.shape[-1], value_dim=value_memory.shape[-1],
                               memory_size=key_memory.shape[2])
    if q.numel() and kernels_apply(backend, q.device, reason, "abc_read"):
        from .triton.bidirectional import memory_read
        return run_kernels(
            "abc_read", backend, lambda: memory_read(q, key_memory, value_memory, scale, dropout_p, keep_mask, backend),
            lambda: abc_read(q, key_memory, value_memory, scale, dropout_p, keep_mask, backend="torch"))
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


def abc(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    key_padding_mask: Optional[torch.Tensor] = None,
    scale: Optional[float] = None,
    dropout_p: float = 0.0,
    dropout_mask: Optional[torch.Tensor] = None,
    backend: str = "auto",
) -> torch.Tensor:
    """Bidirectional ABC_MLP: phi normalised over all (non-padding) positions.

    q: [B, H, M, d] (M may differ from N); k, v: [B, H, N, d]; phi_logits: [B, H, N, n];
    key_padding_mask: [B, N], True at padding; dropout_p, dropout_mask: attention dropout as in
    ``abc_read``; backend: as in ``abc_memory``. Returns [B, H, M, d] in q's dtype.
    """
    check_qkv_phi(q, k, v, phi_logits, same_length=False)
    check_padding_mask(key_padding_mask, k)
    key_memory, value_memory = abc_memory(k, v, phi_logits, key_padding_mask, backend=backend)
    return abc_read(q, key_memory, value_memory, scale, dropout_p, dropout_mask, backend)
