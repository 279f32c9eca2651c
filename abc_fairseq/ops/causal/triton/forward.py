"""Forward kernels of causal ABC and GSA, one program per (sequence, chunk).

1. ``chunk_sums_kernel``: what each chunk writes into the memory, sum_i H_i (x) [k_i, v_i] with
   H_i = exp(l_i - e) <= 1, [Z, nc, n, K + V], stored at the chunk's own normaliser e written to
   [Z, nc, n]: ABC's chunk total T_c = log sum_i exp(l_i) over its rows, which the scan then
   rescales; GSA's (``GATED``) e_end = g at the chunk's last row, with the decay exp(-e_end) =
   prod a over the chunk that carries the memory across it.
2. ``scan.chunk_scan_kernel`` turns those sums into the memory entering each chunk (and, for ABC,
   the chunk totals into the normalisers e_prev, e_end).
3. ``output_kernel``: scores (carried memory + masked intra-chunk q.k weighted by W), the slot
   softmax in fp32, optional attention dropout, and the value read, fused; it rebuilds its rows'
   g from the logits and e_prev (``common.chunk_prefix``) or the log gates (``common.chunk_gates``).
"""

import triton
import triton.language as tl

from .common import (
    causal,
    chunk_factors,
    chunk_gates,
    chunk_program,
    chunk_total,
    memory_tile,
    mm,
    mm_in,
    normalisers,
    read_memory,
    row_tile,
    slot_softmax,
    store_memory_tile,
    store_row_tile,
)
from .exact import exact_mix, exact_read


@triton.jit
def chunk_sums_kernel(k_ptr, v_ptr, l_ptr, anchor_ptr, decay_ptr, mem_ptr, N, n, K, V, nc,
                      C: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
                      PREC: tl.constexpr, GATED: tl.constexpr):
    """Writes the sums to mem and the normaliser they are stored at to anchor [Z, nc, n]: ABC's
    chunk total (l_ptr: the logits; decay_ptr unused), or with ``GATED`` (l_ptr: the log gates)
    e_end and the chunk's decay exp(-e_end) to decay [Z, nc, n]."""
    z, c, rows, slots, cols_k, cols_v = chunk_program(C, BS, BK, BV)
    IN = k_ptr.dtype.element_ty
    here = (z * nc + c) * n + slots
    if GATED:
        l, g, _ = chunk_gates(l_ptr, z, N, n, rows, slots)
        last = tl.minimum(tl.max(rows, axis=0), N - 1)  # g past N is +inf; past N nothing decays
        anchor = tl.sum(tl.where((rows == last)[:, None], g, 0.0), axis=0)
        anchor = tl.where(slots < n, anchor, 0.0)
        tl.store(decay_ptr + here, tl.exp(-anchor), mask=slots < n)
    else:
        l = row_tile(l_ptr, z, N, rows, n, slots, float("-inf"))
        anchor = chunk_total(l)
    tl.store(anchor_ptr + here, anchor, mask=slots < n)
    anchor = tl.where(anchor == float("-inf"), 0.0, anchor)  # ABC: a chunk writing nothing
    leave = tl.trans(tl.exp(l - anchor[None, :]))  # [BS, C], <= 1
    k = row_tile(k_ptr, z, N, rows, K, cols_k, 0.0)
    v = row_tile(v_ptr, z, N, rows, V, cols_v, 0.0)
    store_memory_tile(mem_ptr, z, c, nc, n, K + V, 0, K, slots, cols_k, mm_in(leave, k, IN, PREC))
    store_memory_tile(mem_ptr, z, c, nc, n, K + V, K, V, slots, cols_v, mm_in(leave, v, IN, PREC))


@triton.jit
def chunk_scores(q, k, l_ptr, k_ptr, F, E, R, carried, first_steep, scale, K, cols_k, z, N, n, rows,
                 slots, g, C: tl.constexpr, IN: tl.constexpr, PREC: tl.constexpr, GATED: tl.constexpr):
    """S_t = sum_{i<=t} W_ti (scale q_t . k_i), [C, BS]: the carried memory's part (``carried``,
    q_t . Mk_s from ``read_memory``) plus the intra-chunk pairs, row by row from ``first_steep`` on."""
    S = R * carried * scale
    A = tl.where(causal(rows, C), mm_in(q, tl.trans(k), IN, PREC) * scale, 0.0)
    intra = F * mm(A, E, PREC)  # fp32: E up to exp(SAFE)
    if first_steep < N:
        exact = exact_read(q * scale, k_ptr, K, cols_k, l_ptr, z, N, n, rows, slots, g, C, GATED)
        intra = tl.where((rows >= first_steep)[:, None], exact, intra)
    return S + intra


@triton.jit
def output_kernel(q_ptr, k_ptr, v_ptr, l_ptr, eprev_ptr, mem_ptr, keep_ptr, o_ptr,
                  scale, keep_scale, N, n, K, V, nc,
                  C: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
                  PREC: tl.constexpr, SAFE: tl.constexpr, DROPOUT: tl.constexpr,
                  GATED: tl.constexpr):
    z, c, rows, slots, cols_k, cols_v = chunk_program(C, BS, BK, BV)
    IN = q_ptr.dtype.element_ty
    l, g, a, e_prev = normalisers(l_ptr, eprev_ptr, z, c, nc, N, n, rows, slots, C, SAFE, GATED)
    F, E, R, first_steep = chunk_factors(l, g, a, e_prev, rows, SAFE)
    q = row_tile(q_ptr, z, N, rows, K, cols_k, 0.0)
    k = row_tile(k_ptr, z, N, rows, K, cols_k, 0.0)
    v = row_tile(v_ptr, z, N, rows, V, cols_v, 0.0)
    carried = read_memory(q_ptr, z, N, rows, mem_ptr, c, nc, n, K + V, 0, K, slots, C, BS, BK, IN, PREC)
    S = chunk_scores(q, k, l_ptr, k_ptr, F, E, R, carried, first_steep, scale, K, cols_k, z, N, n,
                     rows, slots, g, C, IN, PREC, GATED)
    P = slot_softmax(S, slots, n)
    if DROPOUT:
        P = P * row_tile(keep_ptr, z, N, rows, n, slots, 0.0) * keep_scale
    out = mm_in(P * R, memory_tile(mem_ptr, z, c, nc, n, K + V, K, V, slots, cols_v), IN, PREC)
    mix = tl.where(causal(rows, C), mm(P * F, tl.trans(E), PREC), 0.0)  # fp32: E up to exp(SAFE)
    intra = mm_in(mix, v, IN, PREC)
    if first_steep < N:
        exact = exact_mix(P, v_ptr, V, cols_v, l_ptr, z, N, n, rows, slots, g, C, BV, GATED)
        intra = tl.where((rows >= first_steep)[:, None], exact, intra)
    store_row_tile(o_ptr, z, N, rows, V, cols_v, out + intra)
