"""Prefix normalisers and chunk-boundary normalisers for the kernels.

g_t = log(exp(g_before) + sum_{i<=t} exp(l_i)) per slot; a chunk's memory is stored at e_c = g at
its last row, and the memory entering it at e_{c-1} (g_before for the first chunk). Every
exponent the kernels take is l_i - g_t or g_s - g_t with s <= t: a normaliser of the past, never
of a later row.

ABC's g (``PrefixInKernels``): the kernels compute it chunk by chunk (each chunk's total in
``chunk_sums_kernel``, the e_c by one logaddexp per chunk in the scan, each row's g inside the
kernels that read it, from its chunk's logits and e_{c-1}); g [Z, N, n] is never stored, and no
PyTorch op scans the rows. ``gated_normalisers`` writes GSA's weights in the same form (g given,
each chunk in its own frame).
"""

from typing import NamedTuple, Optional

import torch


class PrefixInKernels(NamedTuple):
    """ABC's prefix normalisers to be computed by the kernels (``function.forward_kernels``)."""
    g_before: torch.Tensor  # [Z, n] fp32: the normaliser before row 0 (-inf for an empty prefix)


class ChunkNormalisers(NamedTuple):
    g: Optional[torch.Tensor]  # [Z, N, n], contiguous fp32; None: the kernels rebuild it per chunk
    e_prev: torch.Tensor  # [Z, nc, n]: the normaliser before each chunk
    e_end: torch.Tensor  # [Z, nc, n]: the normaliser at each chunk's last row
    decay: torch.Tensor  # [Z, nc, n]: exp(e_prev - e_end) <= 1


def gated_normalisers(log_gates: torch.Tensor, chunk: int):
    """GSA as the same kernels: (logits [Z, N, n], ChunkNormalisers), fp32, from log gates
    [Z, N, n] (g = log a <= 0; 0 writes nothing), so that exp(l_i - g_t) is GSA's weight
    (1 - a_i) prod_{i<m<=t} a_m and the memory entering row 0 is read at exp(e_prev - g_t) =
    prod_{m<=t} a_m:
        l_i = log(1 - a_i) - G_i,  g_t = -G_t,  e_prev = 0,  e_end = -G at the chunk's last row,
    with G the cumulative log gate *from the chunk's first row* (each chunk in its own frame).
    The kernels only take differences inside one chunk, and the decays exp(-G_last) across
    chunks, so the frames never meet: no long cumulative sum loses a short segment to rounding."""
    Z, N, n = log_gates.shape
    nc = -(-N // chunk)
    gates = torch.nn.functional.pad(log_gates.float(), (0, 0, 0, nc * chunk - N))  # padding: a = 1
    G = gates.view(Z, nc, chunk, n).cumsum(2)
    logits = (torch.log(-torch.expm1(gates)).view(Z, nc, chunk, n) - G).view(Z, nc * chunk, n)[:, :N]
    e_end = -G[:, :, -1]
    return logits.contiguous(), ChunkNormalisers(
        (-G).view(Z, nc * chunk, n)[:, :N].contiguous(), torch.zeros_like(e_end), e_end.contiguous(),
        torch.exp(G[:, :, -1]).contiguous())
