"""Bidirectional ABC's public ops (encoder self attention, cross attention): their arguments checked
once, then run by ``ops.backend`` on the Triton kernels (``bidirectional.triton``) or the PyTorch
path (``bidirectional.parallel``)."""

from typing import List, Optional, Tuple

import torch

from ..backend import check_backend, dispatch, unsupported
from ..utils import check_padding_mask, check_qkv_phi, default_scale, dropout_keep_mask
from .parallel import parallel_abc_memory, parallel_abc_read


def _handed_over(inputs: List[torch.Tensor]) -> List[torch.Tensor]:
    """The tensors of ``inputs``, emptying the list: the PyTorch write then holds the only
    reference to the logits a caller handed over, and frees them as soon as phi exists."""
    taken = list(inputs)
    inputs.clear()
    return taken


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
    reason = unsupported(k.dtype, head_dim=k.shape[-1], value_dim=v.shape[-1],
                                  memory_size=phi_logits.shape[-1])
    inputs = [k, v, phi_logits]
    del phi_logits
    torch_path = lambda: parallel_abc_memory(*_handed_over(inputs), key_padding_mask, overwrite_logits)  # noqa: E731
    if not (k.numel() and v.numel()):
        return torch_path()
    return dispatch("abc_memory", backend, k.device, reason, parallel_abc_memory, torch_path,
                    "bidirectional.triton.function",
                    lambda kernels, guard: kernels.memory_write(*inputs, key_padding_mask, guard))


def abc_read(q: torch.Tensor, key_memory: torch.Tensor, value_memory: torch.Tensor,
             scale: Optional[float] = None, dropout_p: float = 0.0,
             dropout_mask: Optional[torch.Tensor] = None, backend: str = "auto") -> torch.Tensor:
    """Read a bounded memory: V~^T softmax(scale K~ q), or V~^T (softmax(scale K~ q) * M / (1 - p))
    with attention dropout (``ops.utils``; pass dropout_p = 0 in evaluation).

    q: [B, H, M, d]; key_memory, value_memory: [B, H, n, d]; dropout_mask: bool [B, H, M, n],
    True = keep (only with dropout_p > 0; drawn when not given); backend: as in ``abc_memory``.
    Returns [B, H, M, d] in q's dtype.
    """
    check_backend(backend)
    B, H, M, d = q.shape
    n = key_memory.shape[2]
    keep_mask = dropout_keep_mask(dropout_p, dropout_mask, (B, H, M, n), q.device)
    scale = default_scale(scale, d)
    reason = unsupported(q.dtype, head_dim=d, value_dim=value_memory.shape[-1], memory_size=n)
    torch_path = lambda: parallel_abc_read(q, key_memory, value_memory, scale, dropout_p, keep_mask)  # noqa: E731
    if not q.numel():
        return torch_path()
    return dispatch("abc_read", backend, q.device, reason, parallel_abc_read, torch_path,
                    "bidirectional.triton.function",
                    lambda kernels, guard: kernels.memory_read(q, key_memory, value_memory, scale, dropout_p,
                                                               keep_mask, guard))


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
