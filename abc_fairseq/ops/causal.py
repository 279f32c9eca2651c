"""Causal ABC over a whole sequence (TEMPORARY: step loop; the chunked kernel replaces it)."""
from typing import Optional

import torch

from ._checks import check_qkv_phi
from .recurrent import causal_abc_step


def causal_abc(q, k, v, phi_logits, scale: Optional[float] = None, chunk_size: int = 64):
    check_qkv_phi(q, k, v, phi_logits, same_length=True)
    state, outs = None, []
    for t in range(q.shape[2]):
        sl = slice(t, t + 1)
        out, state = causal_abc_step(q[:, :, sl], k[:, :, sl], v[:, :, sl], phi_logits[:, :, sl], state, scale)
        outs.append(out)
    return torch.cat(outs, dim=2)
