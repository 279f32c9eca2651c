"""The chunk-boundary normalisers the causal kernels hand from the forward to the backward.

ABC: g_t = log(exp(g_before) + sum_{i<=t} exp(l_i)) per slot; a chunk's memory is stored at
e_c = g at its last row, and the memory entering it at e_{c-1} (g_before for the first chunk).
The kernels compute g chunk by chunk (each chunk's total in ``chunk_sums_kernel``, the e_c by one
logaddexp per chunk in the scan, each row's g inside the kernels that read it, from its chunk's
logits and e_{c-1}); g [Z, N, n] is never stored, and no PyTorch op scans the rows.

GSA: each chunk in its own frame (``common.chunk_gates``): e_prev = 0, e_c = minus the chunk's
summed log gates, decay_c = exp(-e_c), all written by ``chunk_sums_kernel``.

Every exponent the kernels take is l_i - g_t or g_s - g_t with s <= t: a normaliser of the past,
never of a later row.
"""

from typing import NamedTuple, Optional

import torch


class ChunkNormalisers(NamedTuple):
    e_prev: Optional[torch.Tensor]  # [Z, nc, n] fp32: the normaliser before each chunk (None: 0, GSA)
    e_end: torch.Tensor  # [Z, nc, n] fp32: the normaliser at each chunk's last row
    decay: torch.Tensor  # [Z, nc, n] fp32: exp(e_prev - e_end) <= 1
