"""The factors one block of chunked causal attention is computed with (``chunk_math``), and
causal ABC's: its prefix normaliser.

A family's write weight of row i read at row t (i <= t) has the form W_ti = exp(l_i - g_t) per
slot, g non-decreasing and l_i <= g_i: ABC's l are the phi logits and g their prefix
logsumexp; GSA's (``gsa.gates``) come from its log gates. Chunk c is anchored at a_c = g at its
first row, and
    F_t = exp(a_c - g_t) <= 1            row factor, t in chunk c
    E_i = exp(l_i - a_c)                 column factor, i in chunk c
    H_i = exp(l_i - a_{c+1}) <= 1        what row i leaves in the memory handed to chunk c + 1
so W_ti = E_i F_t inside a chunk and intra-chunk sums are matmuls under a causal C x C mask.
E_i overflows only where logits rise by more than ``SAFE_EXPONENT`` above the normaliser inside
one chunk; such (chunk, sequence) pairs are flagged, and their intra-chunk terms are rebuilt from
W itself (C x C x n, ``BlockGeometry.exact_weights``), so the op is exact for logits of any
magnitude.
Memories carried across chunks are stored divided by exp(anchor).
"""

from typing import Callable, List, NamedTuple, Tuple

import torch

from ..utils import Workspace

# Largest exponent the fast (matmul) path takes: exp(60) * C * |q.k| stays far below fp32's max.
SAFE_EXPONENT = 60.0


class BlockGeometry(NamedTuple):
    """Factors of one block of nc chunks of C rows (rows-shaped [Z, nc, C, n] unless stated)."""

    row_decay: torch.Tensor  # F_t
    col_growth: torch.Tensor  # E_i (clamped in flagged chunks, whose intra terms are rebuilt)
    leave: torch.Tensor  # H_i
    chunk_decay: torch.Tensor  # [Z, nc, n]: exp(a_c - a_{c+1}), a_nc = g at the block's last row
    entering: torch.Tensor  # [Z, n]: exp(g_before - a_0), what the memory before the block keeps
    g_last: torch.Tensor  # [Z, n]: the normaliser the memory leaving the block is divided by
    flagged: List[Tuple[int, torch.Tensor]]  # (chunk c, the sequences [Zc] whose E would overflow in it)
    exact_weights: Callable[[int, torch.Tensor], torch.Tensor]  # (c, sequences) -> their W of chunk c,
    #                                                             [Zc, C, C, n] indexed [t, i, j]


def upper_triangle(chunk: int, device: torch.device) -> torch.Tensor:
    """[t, i] True where i > t: the pairs a causal chunk never sums."""
    return torch.ones(chunk, chunk, dtype=torch.bool, device=device).triu(1)


def steep_sequences(steep: torch.Tensor) -> List[Tuple[int, torch.Tensor]]:
    """bool [Z, nc] -> [(c, the indices z where steep[z, c])] for every chunk c with one."""
    chunks = torch.nonzero(steep.any(dim=0)).flatten().tolist()
    return [(c, torch.nonzero(steep[:, c]).flatten()) for c in chunks]


def prefix_geometry(logits: torch.Tensor, g_before: torch.Tensor, chunk: int, ws: Workspace) -> BlockGeometry:
    """Causal ABC's geometry: g_t = log sum_{i<=t} exp(l_i).

    logits: [Z, T, n], T a multiple of ``chunk``; g_before: [Z, n], the normaliser of all rows
    before the block (-inf at the start of a sequence)."""
    Z, T, n = logits.shape
    nc = T // chunk
    l = logits.view(Z, nc, chunk, n)
    E = ws("col_growth", l.shape, l)

    # Normaliser at chunk boundaries: per-chunk totals, then a scan over nc totals, not T rows.
    chunk_max = l.amax(dim=2)
    totals = chunk_max + torch.sub(l, chunk_max.unsqueeze(2), out=E).exp_().sum(2).log_()
    ends = torch.logcumsumexp(torch.cat([g_before.unsqueeze(1), totals], dim=1), dim=1)
    before = ends[:, :-1]
    first = torch.logaddexp(before, l[:, :, 0])  # a_c
    anchors = torch.cat([first, ends[:, -1:]], dim=1)

    # A NaN logit makes its chunk's max NaN: that chunk takes the exact path too, whose sums
    # never mix a later row into an earlier one. NaN counts as an infinite rise, so that it can
    # neither escape the flag nor hide another sequence's real rise from the max.
    rise = torch.sub(chunk_max, first).nan_to_num_(nan=float("inf"))
    flagged = steep_sequences(rise.amax(dim=2) > SAFE_EXPONENT)
    torch.sub(l, first.unsqueeze(2), out=E)
    if flagged:
        E.clamp_(max=SAFE_EXPONENT)
    E.exp_()
    # exp(g_t - a_c) = exp(g_before_chunk - a_c) + sum_{i in chunk, i <= t} E_i.
    F = torch.cumsum(E, dim=2, out=ws("row_decay", l.shape, l))
    F.add_(torch.exp(before - first).unsqueeze(2)).reciprocal_()
    H = torch.mul(E, torch.exp(first - anchors[:, 1:]).unsqueeze(2), out=ws("leave", l.shape, l))

    exact_g = {}
    for c, z in flagged:
        g = torch.logaddexp(before[z, c, None], torch.logcumsumexp(l[z, c], dim=1))
        exact_g[c] = g
        F[z, c] = torch.exp(first[z, c, None] - g)
        H[z, c] = torch.exp(l[z, c] - anchors[z, c + 1, None])
    above = upper_triangle(chunk, l.device)

    def exact_weights(c: int, z: torch.Tensor) -> torch.Tensor:
        exponent = l[z, c, None, :, :] - exact_g[c][:, :, None, :]
        return exponent.masked_fill_(above[None, :, :, None], float("-inf")).exp_()

    return BlockGeometry(F, E, H, torch.exp(anchors[:, :-1] - anchors[:, 1:]),
                         torch.exp(g_before - anchors[:, 0]), anchors[:, -1], flagged, exact_weights)
