"""The exact intra-chunk path: sums over pairs i <= t built one column i at a time.

Used for chunks where some logit rises more than SAFE above the chunk's anchor, so that
E_i = exp(l_i - a) would overflow. Each column takes W_ti = exp(l_i - g_t) directly, which is
<= 1 for i <= t whatever the logits; pairs i > t are selected away (never multiplied), so an
overflowing exp there cannot leak. Costs C x C x BS exponentials per chunk instead of matmuls.

Arguments shared by the helpers: ``rows`` [C] absolute row indices of the chunk, ``slots`` [BS],
``g`` [C, BS] the prefix normalisers of the rows, ``l_ptr`` the [Z, N, n] logits (ABC) or, with
``GATED``, log gates (GSA: row i's l is then log(1 - a_i) - G_i, and -G_i is row i of g).
"""

import triton
import triton.language as tl

from .common import log_write


@triton.jit
def _column(l_ptr, z, N, n, i, rows, slots, g, G_run, RUNNING: tl.constexpr, GATED: tl.constexpr):
    """(W[:, i] as [C, BS]: exp(l_i - g_t) for t >= i, else 0; G_run [BS]). With ``GATED``, l_i
    needs G_i, the gates' sum from the chunk's first row to row i: with ``RUNNING`` it is carried
    in G_run, column after column from 0 (i = the chunk's first row first), else taken from row i
    of g = -G (a reduction over the tile, and G_run is returned as given). The sum down the columns
    rounds otherwise than ``chunk_gates``' cumsum, by an ulp of G: W_ii is the write weight to
    that. Carried, the rows kernel took 243 registers at 128 wide in half precision on sm_90
    (255 and 8 bytes spilled with the reduction); ``exact_mix`` keeps the reduction, since carried
    there, once per column block, fp32's rows kernel spilled 3.9 KB."""
    ok = slots < tl.where(i < N, n, 0)
    if GATED:
        gate = tl.load(l_ptr + (z * N + i) * n + slots, mask=ok, other=0.0).to(tl.float32)
        if RUNNING:
            G_run += gate
            G_i = G_run
        else:
            G_i = -tl.sum(tl.where((rows == i)[:, None], g, 0.0), axis=0)
        l_i = tl.where(ok, log_write(gate) - G_i, float("-inf"))
    else:
        l_i = tl.load(l_ptr + (z * N + i) * n + slots, mask=ok, other=float("-inf")).to(tl.float32)
    return tl.where((rows >= i)[:, None], tl.exp(l_i[None, :] - g), 0.0), G_run


@triton.jit
def _row(y_ptr, z, N, i, width, cols):
    """Row i of a [Z, N, width] tensor as fp32 [W] (0 past N)."""
    return tl.load(y_ptr + (z * N + i) * width + cols, mask=cols < tl.where(i < N, width, 0),
                   other=0.0).to(tl.float32)


@triton.jit
def exact_read(x, y_ptr, width, cols, l_ptr, z, N, n, rows, slots, g, C: tl.constexpr, GATED: tl.constexpr):
    """sum_{i<=t} W_ti[j] (x_t . y_i), [C, BS]: the scores (x = scaled q, y = k) or dP (dO, v)."""
    c0 = tl.min(rows, axis=0)
    out = tl.zeros_like(g)
    G_run = tl.zeros_like(tl.sum(g, axis=0))
    for ii in range(0, C):
        i = c0 + ii
        W, G_run = _column(l_ptr, z, N, n, i, rows, slots, g, G_run, True, GATED)
        dots = tl.sum(x * _row(y_ptr, z, N, i, width, cols)[None, :], axis=1)
        out += W * dots[:, None]
    return out


@triton.jit
def exact_mix(weights, y_ptr, width, cols, l_ptr, z, N, n, rows, slots, g, C: tl.constexpr,
              BY: tl.constexpr, GATED: tl.constexpr):
    """sum_{i<=t} (sum_j weights_t[j] W_ti[j]) y_i, [C, BY]: the value read (P, v) or dQ (dS, k)."""
    c0 = tl.min(rows, axis=0)
    out = tl.zeros((C, BY), dtype=tl.float32)
    for ii in range(0, C):
        i = c0 + ii
        W, _ = _column(l_ptr, z, N, n, i, rows, slots, g, 0.0, False, GATED)  # no sum carried
        mix = tl.sum(weights * W, axis=1)
        out += mix[:, None] * _row(y_ptr, z, N, i, width, cols)[None, :]
    return out


@triton.jit
def exact_columns(x, weights, extra, factor, y_ptr, width, cols, l_ptr, z, N, n, rows, slots, g,
                  C: tl.constexpr, BX: tl.constexpr, GATED: tl.constexpr):
    """One side of the intra-chunk gradients of the columns i, as ([C, BX], [C, BS]) tiles:
        dx_i = sum_{t>=i} (sum_j weights_t[j] W_ti[j]) x_t
        dl_i = sum_{t>=i} W_ti (weights_t (factor x_t . y_i) + extra_t)
    the key side with (x, weights, y, extra) = (q, dS, k, dg) and factor = scale (dk unscaled: times
    ``scale`` later), the value side with (dO, P, v, 0) and factor 1.
    """
    c0 = tl.min(rows, axis=0)
    dx = tl.zeros((C, BX), dtype=tl.float32)
    dl = tl.zeros_like(g)
    G_run = tl.zeros_like(tl.sum(g, axis=0))
    for ii in range(0, C):
        i = c0 + ii
        W, G_run = _column(l_ptr, z, N, n, i, rows, slots, g, G_run, True, GATED)
        pair = factor * tl.sum(x * _row(y_ptr, z, N, i, width, cols)[None, :], axis=1)
        dx_i = tl.sum(tl.sum(weights * W, axis=1)[:, None] * x, axis=0)
        dl_i = tl.sum(W * (weights * pair[:, None] + extra), axis=0)
        here = (rows == i)[:, None]
        dx = tl.where(here, dx_i[None, :], dx)
        dl = tl.where(here, dl_i[None, :], dl)
    return dx, dl
