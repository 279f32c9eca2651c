"""Forward kernels of causal ABC, one program per (sequence, chunk).

1. ``chunk_sums_kernel``: what each chunk writes into the memory, sum_i H_i (x) [k_i, v_i] with
   H_i = exp(l_i - e_c) <= 1 (e_c: g at the chunk's last row), [Z, nc, n, K + V] in fp32. With
   ``CHUNKED`` (the prefix normalisers not given) e_c is the chunk's own total T_c = log sum_i
   exp(l_i) over its rows, written to [Z, nc, n] for the scan, which rescales the sums.
2. ``scan.chunk_scan_kernel`` turns those sums into the memory entering each chunk (and, with
   ``NORMALISE``, the chunk totals into the normalisers e_prev, e_end).
3. ``output_kernel``: scores (carried memory + masked intra-chunk q.k weighted by W), the slot
   softmax in fp32, optional attention dropout, and the value read, fused. With ``CHUNKED`` it
   rebuilds its rows' g from the logits and e_prev (``common.chunk_prefix``).
"""

import triton
import triton.language as tl

from .common import (
    causal,
    chunk_factors,
    chunk_program,
    chunk_total,
    memory_tile,
    mm,
    mm_in,
    normalisers,
    row_tile,
    slot_softmax,
    slot_vector,
    store_memory_tile,
    store_row_tile,
)
from .exact import exact_mix, exact_read


@triton.jit
def chunk_sums_kernel(k_ptr, v_ptr, l_ptr, eend_ptr, total_ptr, mem_ptr, N, n, K, V, nc,
                      C: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
                      PREC: tl.constexpr, CHUNKED: tl.constexpr):
    """The sums at e_end [Z, nc, n] (given), or with ``CHUNKED`` at the chunk's total, written to
    total [Z, nc, n] (eend_ptr unused)."""
    z, c, rows, slots, cols_k, cols_v = chunk_program(C, BS, BK, BV)
    IN = k_ptr.dtype.element_ty
    l = row_tile(l_ptr, z, N, rows, n, slots, float("-inf"))
    if CHUNKED:
        total = chunk_total(l)
        tl.store(total_ptr + (z * nc + c) * n + slots, total, mask=slots < n)
        anchor = tl.where(total == float("-inf"), 0.0, total)
    else:
        anchor = slot_vector(eend_ptr, z, c, nc, n, slots, 0.0)
    leave = tl.trans(tl.exp(l - anchor[None, :]))  # [BS, C], <= 1
    k = row_tile(k_ptr, z, N, rows, K, cols_k, 0.0)
    v = row_tile(v_ptr, z, N, rows, V, cols_v, 0.0)
    store_memory_tile(mem_ptr, z, c, nc, n, K + V, 0, K, slots, cols_k, mm_in(leave, k, IN, PREC))
    store_memory_tile(mem_ptr, z, c, nc, n, K + V, K, V, slots, cols_v, mm_in(leave, v, IN, PREC))


@triton.jit
def chunk_scores(q, k, l_ptr, k_ptr, F, E, R, Mk, first_steep, scale, K, cols_k, z, N, n, rows,
                 slots, g, C: tl.constexpr, IN: tl.constexpr, PREC: tl.constexpr):
    """S_t = sum_{i<=t} W_ti (scale q_t . k_i), [C, BS]: carried memory Mk [BS, BK] plus the
    intra-chunk pairs, row by row from ``first_steep`` on."""
    S = R * mm_in(q, tl.trans(Mk), IN, PREC) * scale
    A = tl.where(causal(rows, C), mm_in(q, tl.trans(k), IN, PREC) * scale, 0.0)
    intra = F * mm(A, E, PREC)  # fp32: E up to exp(SAFE)
    if first_steep < N:
        exact = exact_read(q * scale, k_ptr, K, cols_k, l_ptr, z, N, n, rows, slots, g, C)
        intra = tl.where((rows >= first_steep)[:, None], exact, intra)
    return S + intra


@triton.jit
def output_kernel(q_ptr, k_ptr, v_ptr, l_ptr, g_ptr, eprev_ptr, mem_ptr, keep_ptr, o_ptr,
                  scale, keep_scale, N, n, K, V, nc,
                  C: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
                  PREC: tl.constexpr, SAFE: tl.constexpr, DROPOUT: tl.constexpr,
                  CHUNKED: tl.constexpr):
    z, c, rows, slots, cols_k, cols_v = chunk_program(C, BS, BK, BV)
    IN = q_ptr.dtype.element_ty
    l, g, a, e_prev = normalisers(g_ptr, l_ptr, eprev_ptr, z, c, nc, N, n, rows, slots, C, SAFE,
                                  CHUNKED)
    F, E, R, first_steep = chunk_factors(l, g, a, e_prev, rows, SAFE)
    q = row_tile(q_ptr, z, N, rows, K, cols_k, 0.0)
    k = row_tile(k_ptr, z, N, rows, K, cols_k, 0.0)
    v = row_tile(v_ptr, z, N, rows, V, cols_v, 0.0)
    Mk = memory_tile(mem_ptr, z, c, nc, n, K + V, 0, K, slots, cols_k)
    Mv = memory_tile(mem_ptr, z, c, nc, n, K + V, K, V, slots, cols_v)

    S = chunk_scores(q, k, l_ptr, k_ptr, F, E, R, Mk, first_steep, scale, K, cols_k, z, N, n,
                     rows, slots, g, C, IN, PREC)
    P = slot_softmax(S, slots, n)
    if DROPOUT:
        P = P * row_tile(keep_ptr, z, N, rows, n, slots, 0.0) * keep_scale
    out = mm_in(P * R, Mv, IN, PREC)
    mix = tl.where(causal(rows, C), mm(P * F, tl.trans(E), PREC), 0.0)  # fp32: E up to exp(SAFE)
    intra = mm_in(mix, v, IN, PREC)
    if first_steep < N:
        exact = exact_mix(P, v_ptr, V, cols_v, l_ptr, z, N, n, rows, slots, g, C, BV)
        intra = tl.where((rows >= first_steep)[:, None], exact, intra)
    store_row_tile(o_ptr, z, N, rows, V, cols_v, out + intra)
