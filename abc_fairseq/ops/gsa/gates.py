"""GSA's gates in causal ABC's chunked form: the block geometry and the gates' gradient.

Per slot, with log gates g_m = log a_m <= 0, write weights s_i = 1 - a_i = -expm1(g_i) and
G_t = sum_{m<=t} g_m, row t reads what row i <= t wrote with the weight
    W_ti = s_i prod_{i<m<=t} a_m = exp(l_i - g~_t),   l_i = log s_i - G_i,  g~_t = -G_t,
ABC's form (``causal.chunk_geometry``): g~ is non-decreasing and l_i <= g~_i. Only differences of
G within a chunk or between neighbouring anchors are ever needed, and each is taken as a sum of
the gates it spans (a cumulative sum restarted at every chunk, never a difference of two long
cumulative sums), so no precision is lost however long the sequence.

The chunked op differentiates W through l and g~ apart (``chunk_math.block_backward`` without the
prefix chain); ``gate_grads`` chains them to the log gates:
    d g_m = dl_m d(log s_m)/d g_m - sum_{i>=m} (dl_i + dg~_i),   d(log s)/d g = -a / (1 - a).
"""

import math

import torch

from ..causal.chunk_geometry import SAFE_EXPONENT, BlockGeometry, steep_sequences, upper_triangle
from ..utils import Workspace, zero_safe_matmul


def _between(C: int, device, dtype) -> torch.Tensor:
    """[C * C, C]: row (t, i) selects the rows m with i < m <= t (a 0/1 matrix)."""
    t, i, m = torch.arange(C, device=device), torch.arange(C, device=device)[:, None], torch.arange(C, device=device)
    selected = (i[None] < m[None, None]) & (m[None, None] <= t[:, None, None])  # [t, i, m]
    return selected.reshape(C * C, C).to(dtype)


def segment_sums(g: torch.Tensor, finite: bool) -> torch.Tensor:
    """g [..., C, n] -> S [..., C, C, n] with S[t, i] = sum_{i < m <= t} g_m (0 for t <= i).

    A sum over the gates between the two rows (never a difference of two long cumulative sums,
    which loses the short segment to rounding), as one product with a 0/1 matrix; with
    ``finite`` False the rows after t are kept out by selection (``zero_safe_matmul``), so a
    non-finite later gate never reaches row t."""
    C = g.shape[-2]
    between = _between(C, g.device, g.dtype)
    if finite:
        sums = torch.matmul(between, g)
    else:
        sums = zero_safe_matmul(between.expand(*g.shape[:-2], C * C, C), g, between.bool())
    return sums.unflatten(-2, (C, C))


def gated_geometry(log_gates: torch.Tensor, g_before: torch.Tensor, chunk: int, ws: Workspace) -> BlockGeometry:
    """GSA's ``BlockGeometry``. log_gates: [Z, T, n], T a multiple of ``chunk``. ``g_before`` is
    not used: the memory entering a block is GSA's own (normaliser 0), and so is the one leaving
    it (``g_last`` is 0)."""
    Z, T, n = log_gates.shape
    nc = T // chunk
    shape = (Z, nc, chunk, n)
    g = log_gates.view(shape)
    # L_t = sum_{first < m <= t} g_m: the decay from the chunk's first row (its anchor) to row t.
    L = ws("gate_sums", shape, g)
    inner = ws("inner_gates", shape, g).copy_(g)
    inner[:, :, 0] = 0
    torch.cumsum(inner, dim=2, out=L)
    F = torch.exp(L, out=ws("row_decay", shape, g))
    # E_i = s_i / F_i = exp(l_i - a_c), with s = -expm1(g) exact near a = 1.
    E = torch.expm1(g, out=ws("col_growth", shape, g)).div_(F).neg_()
    # Steep (chunk, sequence) pairs: E above exp(SAFE_EXPONENT) (or NaN), or F below the dtype's
    # normal range (a weight would be the product of a huge and a subnormal factor). Their
    # intra-chunk terms are rebuilt from W itself.
    steep = ~(E.amax(dim=2) <= math.exp(SAFE_EXPONENT)) | (L[:, :, -1] < math.log(torch.finfo(g.dtype).tiny))
    flagged = steep_sequences(steep.any(dim=2))
    if flagged:
        E.clamp_(max=math.exp(SAFE_EXPONENT))

    # a_c - a_{c+1}: the chunk's gates after its first row, then the next chunk's first gate.
    after = torch.zeros_like(L[:, :, 0])
    after[:, :-1] = g[:, 1:, 0]
    chunk_decay = torch.exp(L[:, :, -1] + after)
    # H_i = exp(l_i - a_{c+1}) = E_i exp(a_c - a_{c+1}); exactly s_i exp(sum_{i < m <= last} g_m
    # + the next chunk's first gate) where E was clamped.
    H = torch.mul(E, chunk_decay.unsqueeze(2), out=ws("leave", shape, g))
    for c, z in flagged:
        H[z, c] = _exact_leave(g[z, c], after[z, c])

    above = upper_triangle(chunk, g.device)

    def exact_weights(c: int, z: torch.Tensor) -> torch.Tensor:
        gates = g[z, c]
        exponent = segment_sums(gates, bool(torch.isfinite(gates).all())).add_(_log_write(gates)[:, None, :, :])
        return exponent.masked_fill_(above[None, :, :, None], float("-inf")).exp_()

    return BlockGeometry(F, E, H, chunk_decay, torch.exp(g[:, 0, 0]), torch.zeros_like(g[:, 0, 0]),
                         flagged, exact_weights)


def _exact_leave(gates: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
    """gates [Zc, C, n], after [Zc, n] -> H [Zc, C, n]: s_i exp(sum_{i < m < C} g_m + after), each
    suffix summed over the rows it spans."""
    suffix = torch.zeros_like(gates)
    suffix[:, :-1] = gates[:, 1:].flip(1).cumsum(1).flip(1)
    return suffix.add_(after.unsqueeze(1)).add_(_log_write(gates)).exp_()


def _log_write(gates: torch.Tensor) -> torch.Tensor:
    """log s = log(1 - a) = log(-expm1(g)), exact near a = 1 (-inf where g = 0)."""
    return torch.expm1(gates).neg_().log_()


def gate_grads(log_gates: torch.Tensor, dl: torch.Tensor, dg: torch.Tensor) -> torch.Tensor:
    """The log gates' gradient [Z, N, n] from those of l and g~ (module docstring); every input
    [Z, N, n], dl and dg overwritten. The sum over later rows runs in two levels: within
    segments of up to 64 rows, and over the segments' totals in float64, whose terms cancel (only
    the pairs i < m <= t survive), so a long float32 running sum would lose their difference.
    dl carries the factor s = 1 - a, so a gate of exactly 1 (g = 0, which the strategy's fp32 log
    gates reach only at padding, which takes no gradient) gets none through its write weight."""
    Z, N, n = dl.shape
    R = next(r for r in (64, 32, 16, 8, 4, 2, 1) if N % r == 0)
    rows = dg.add_(dl).view(Z, N // R, R, n)  # dl_i + dg_i
    prefix = rows.cumsum(2)
    totals = prefix[:, :, -1].clone()
    beyond = totals.double().flip(1).cumsum(1).flip(1).sub_(totals.double()).to(dl.dtype)  # later segments
    later = prefix.neg_().add_(rows).add_(totals.unsqueeze(2)).add_(beyond.unsqueeze(2)).view(Z, N, n)
    # d log s / d g = -a / (1 - a) = -1 / expm1(-g); where g = 0, s = 0 and dl = 0.
    divisor = torch.expm1(log_gates.to(dl.dtype).neg())
    divisor.masked_fill_(divisor == 0, 1.0)
    return dl.div_(divisor).add_(later).neg_()
