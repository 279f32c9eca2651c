"""Attention dropout over the memory slots, shared by every form of the ops.

ABC's counterpart of the attention weights that softmax attention drops are the probabilities
over the n slots, P_t = softmax(scale * K~_t q_t). With dropout rate p and a keep mask M_t in
{0, 1}^n (True = keep, Bernoulli(1 - p)), the output reads
    out_t = V~_t^T (P_t * M_t / (1 - p))
while the softmax and the prefix normalisers are unchanged. E[out_t] over masks is the output
without dropout. Callers apply it in training only (pass dropout_p = 0 in evaluation).
"""

from typing import Optional, Sequence

import torch


def dropout_keep_mask(dropout_p: float, dropout_mask: Optional[torch.Tensor], shape: Sequence[int],
                      device: torch.device) -> Optional[torch.Tensor]:
    """Validate the dropout arguments of an op and return its keep mask, or None for no dropout.

    dropout_p: in [0, 1). dropout_mask: bool [B, H, M, n] (``shape``), True = keep; only with
    dropout_p > 0. Without a mask and with dropout_p > 0 one is drawn from torch's RNG.
    """
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)):
        raise ValueError(f"dropout_p must be a float in [0, 1), got {dropout_p!r}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    if dropout_p == 0.0:
        if dropout_mask is not None:
            raise ValueError("dropout_mask was given with dropout_p = 0: pass the rate it was drawn with")
        return None
    shape = tuple(shape)
    if dropout_mask is None:
        return torch.empty(shape, device=device).bernoulli_(1.0 - dropout_p).bool()
    if not isinstance(dropout_mask, torch.Tensor) or dropout_mask.dtype != torch.bool:
        raise ValueError(f"dropout_mask must be a bool tensor (True = keep), got "
                         f"{getattr(dropout_mask, 'dtype', type(dropout_mask).__name__)}")
    if tuple(dropout_mask.shape) != shape:
        raise ValueError(f"dropout_mask must have shape [B, H, M, n] = {shape}, got "
                         f"{tuple(dropout_mask.shape)}")
    if dropout_mask.device != torch.device(device):
        raise ValueError(f"dropout_mask must be on {device}, got {dropout_mask.device}")
    return dropout_mask


def drop(probs: torch.Tensor, keep_mask: Optional[torch.Tensor], dropout_p: float) -> torch.Tensor:
    """probs * keep_mask / (1 - dropout_p) (out of place, differentiable); probs when no mask."""
    if keep_mask is None:
        return probs
    return probs * keep_mask * (1.0 / (1.0 - dropout_p))
