"""Prefix normalisers and chunk-boundary normalisers for the kernels (plain PyTorch, fp32).

g_t = log(exp(g_before) + sum_{i<=t} exp(l_i)) per slot is one ``logcumsumexp`` over the rows; a
chunk's memory is stored at e_c = g at its last row, and the memory entering it at e_{c-1}
(g_before for the first chunk). Every exponent the kernels take is l_i - g_t or g_s - g_t with
s <= t: a normaliser of the past, never of a later row.
"""

from typing import NamedTuple

import torch


class ChunkNormalisers(NamedTuple):
    g: torch.Tensor  # [Z, N, n], contiguous fp32
    e_prev: torch.Tensor  # [Z, nc, n]: the normaliser before each chunk
    e_end: torch.Tensor  # [Z, nc, n]: the normaliser at each chunk's last row
    decay: torch.Tensor  # [Z, nc, n]: exp(e_prev - e_end) <= 1


def chunk_normalisers(logits: torch.Tensor, g_before: torch.Tensor, chunk: int) -> ChunkNormalisers:
    """logits: [Z, N, n] (any float dtype); g_before: [Z, n] fp32 (-inf for an empty prefix)."""
    N = logits.shape[1]
    g = torch.logaddexp(g_before.unsqueeze(1), torch.logcumsumexp(logits.float(), dim=1))
    last_rows = torch.arange(chunk - 1, N + chunk - 1, chunk, device=logits.device).clamp_(max=N - 1)
    e_end = g.index_select(1, last_rows)
    e_prev = torch.cat([g_before.unsqueeze(1), e_end[:, :-1]], dim=1)
    return ChunkNormalisers(g.contiguous(), e_prev.contiguous(), e_end.contiguous(),
                            torch.exp(e_prev - e_end).contiguous())
