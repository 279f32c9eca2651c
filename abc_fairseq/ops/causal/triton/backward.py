"""Backward kernels of causal ABC and GSA, one program per (sequence, chunk), around a reverse scan.

With W_ti = exp(l_i - g_t), S_t = sum_{i<=t} W_ti A_ti (A_ti = scale q_t . k_i), P = softmax(S),
P' = P * keep / (1 - p) the read weights (P' = P without dropout), out_t = sum_{i<=t} (P'_t W_ti) v_i:
    dP'_t = sum_{i<=t} W_ti (dO_t . v_i),  dP = keep dP' / (1 - p),  dS = P (dP - <P, dP>)
    dg_t = -(dS_t S_t + P'_t dP'_t)            (g_t enters every W_ti as exp(-g_t))
    dq_t = scale sum_{i<=t} (dS_t W_ti) k_i
    dk_i = scale sum_{t>=i} (dS_t W_ti) q_t,   dv_i = sum_{t>=i} (P'_t W_ti) dO_t
    dl_i = sum_{t>=i} W_ti (dS_t A_ti + P'_t (dO_t . v_i) + dg_t)
Both kernels rebuild their rows' g from the logits and e_prev (``common.chunk_prefix``) or, with
``GATED``, the log gates (``common.chunk_gates``).
1. ``rows_kernel`` recomputes S and P of its chunk from the saved entering memory, and writes dq,
   the row terms dS, P', dg (fp32) and the chunk's reverse sums sum_t R_t (x) [dS_t q_t, P'_t dO_t,
   dg_t] (stored at e_{c-1}, the normaliser before the chunk).
2. ``scan.chunk_scan_kernel`` (REVERSE) turns them into what the rows after chunk c send back.
3. ``columns_kernel``: dk, dv, dl from the intra-chunk pairs plus that reverse memory, which
   reaches row i of chunk c as H_i = exp(l_i - e_c). ABC (g is the logits' prefix
   logcumsumexp) adds dl's dg term; with ``GATED`` (GSA: g is the gates' sum) dl stops at
   W = exp(l - g), and each side also writes its chunk's total of dl (plus dg on the key side)
   for ``gsa.triton.gates``, which chains both to the log gates.
   Two programs per chunk (grid axis 2): the key side (dk, dl's score and dg terms) and the value
   side (dv, dl's read term), each writing its part of dl over the row term only it reads (dS,
   P'), so that dl takes no memory of its own; one program never holds both sides' tiles, which
   halves its registers (ptxas spilled the fused kernel at every chunk).
Both kernels take the [n, d] memories and products of tiles wider than 64 in column blocks
(``common.MEMORY_BLOCK``), each loaded where it is used: 128-wide tiles held whole spilled.
"""

import triton
import triton.language as tl

from .common import (
    MEMORY_BLOCK,
    causal,
    chunk_factors,
    chunk_program,
    memory_tile,
    mm,
    mm_cols_scaled,
    mm_in,
    mm_rows_scaled,
    mm_scaled,
    normalisers,
    read_memory,
    row_tile,
    slot_softmax,
    slot_vector,
    store_memory_tile,
    store_row_tile,
    to_operand,
)
from .exact import exact_columns, exact_mix, exact_read
from .forward import chunk_scores


@triton.jit
def rows_kernel(q_ptr, k_ptr, v_ptr, l_ptr, eprev_ptr, mem_ptr, keep_ptr, do_ptr,
                dq_ptr, ds_ptr, pr_ptr, dg_ptr, rev_ptr, scale, keep_scale, N, n, K, V, nc,
                C: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
                PREC: tl.constexpr, SAFE: tl.constexpr, DROPOUT: tl.constexpr,
                GATED: tl.constexpr):
    z, c, rows, slots, cols_k, cols_v = chunk_program(C, BS, BK, BV)
    IN = q_ptr.dtype.element_ty
    l, g, a, e_prev = normalisers(l_ptr, eprev_ptr, z, c, nc, N, n, rows, slots, C, SAFE, GATED)
    F, E, R, first_steep = chunk_factors(l, g, a, e_prev, rows, SAFE)
    steep = first_steep < N
    mask = causal(rows, C)
    # every tile is loaded where it is first used, the memories in column blocks (``read_memory``,
    # dq's below), so that no [BS, BK] tile is alive while the reverse sums' products are
    carried = read_memory(q_ptr, z, N, rows, mem_ptr, c, nc, n, K + V, 0, K, slots, C, BS, BK, IN, PREC)
    q = row_tile(q_ptr, z, N, rows, K, cols_k, 0.0)
    k = row_tile(k_ptr, z, N, rows, K, cols_k, 0.0)
    S = chunk_scores(q, k, l_ptr, k_ptr, F, E, R, carried, first_steep, scale, K, cols_k, z, N, n,
                     rows, slots, g, C, IN, PREC, GATED)
    P = slot_softmax(S, slots, n)
    d_read = R * read_memory(do_ptr, z, N, rows, mem_ptr, c, nc, n, K + V, K, V, slots, C, BS, BV, IN, PREC)  # dP'
    do = row_tile(do_ptr, z, N, rows, V, cols_v, 0.0)
    if steep:
        d_read += exact_read(do, v_ptr, V, cols_v, l_ptr, z, N, n, rows, slots, g, C, GATED)
    else:
        dov = tl.where(mask, mm_in(do, tl.trans(row_tile(v_ptr, z, N, rows, V, cols_v, 0.0)), IN, PREC), 0.0)
        d_read += F * mm(dov, E, PREC)  # fp32: E up to exp(SAFE)
    if DROPOUT:
        keep = row_tile(keep_ptr, z, N, rows, n, slots, 0.0) * keep_scale
        P_read = P * keep
        d_probs = d_read * keep
    else:
        P_read = P
        d_probs = d_read
    d_scores = P * (d_probs - tl.sum(P * d_probs, axis=1)[:, None])
    d_norm = -(d_scores * S + P_read * d_read)

    store_row_tile(ds_ptr, z, N, rows, n, slots, d_scores)
    store_row_tile(pr_ptr, z, N, rows, n, slots, P_read)
    store_row_tile(dg_ptr, z, N, rows, n, slots, d_norm)
    # what this chunk sends back to earlier ones, then dq: each [C, BS] term dies at its last use
    # (d_norm, then F and E, then P' and R), and the [BS, BK] products go in column blocks, one
    # [BS, RK] fp32 product alive at a time (128 wide spilled whole)
    width = K + V + 1
    tl.store(rev_ptr + ((z * nc + c) * n + slots) * width + K + V, tl.sum(R * d_norm, axis=0),
             mask=slots < n)
    mix = tl.zeros((C, C), dtype=tl.float32)
    if not steep:  # the inner product in fp32: E up to exp(SAFE)
        mix = tl.where(mask, mm(d_scores * F, tl.trans(E), PREC), 0.0)
    RK: tl.constexpr = BK if BK <= 64 else MEMORY_BLOCK
    RV: tl.constexpr = BV if BV <= 64 else MEMORY_BLOCK
    for h in tl.static_range(0, BV, RV):
        cols = h + tl.arange(0, RV)
        store_memory_tile(rev_ptr, z, c, nc, n, width, K, V, slots, cols,  # P' R <= 1 / (1 - p)
                          mm_in(tl.trans(P_read * R), row_tile(do_ptr, z, N, rows, V, cols, 0.0), IN, PREC))
    ds_carried = d_scores * R
    for h in tl.static_range(0, BK, RK):
        cols = h + tl.arange(0, RK)
        store_memory_tile(rev_ptr, z, c, nc, n, width, 0, K, slots, cols,
                          mm_rows_scaled(tl.trans(ds_carried), row_tile(q_ptr, z, N, rows, K, cols, 0.0), IN, PREC))
    for h in tl.static_range(0, BK, RK):
        cols = h + tl.arange(0, RK)
        Mk = to_operand(memory_tile(mem_ptr, z, c, nc, n, K + V, 0, K, slots, cols), IN)
        dq = mm_rows_scaled(ds_carried, Mk, IN, PREC)
        if steep:
            dq += exact_mix(d_scores, k_ptr, K, cols, l_ptr, z, N, n, rows, slots, g, C, RK, GATED)
        else:
            dq += mm_rows_scaled(mix, row_tile(k_ptr, z, N, rows, K, cols, 0.0), IN, PREC)
        store_row_tile(dq_ptr, z, N, rows, K, cols, dq * scale)


@triton.jit
def _column_side(x, y, weights, extra, rev_ptr, rev_stride, rev_offset, rev_extra, factor, leave, F, E, y_ptr,
                 width, cols, l_ptr, z, c, nc, N, n, rows, slots, g, steep, IN: tl.constexpr, C: tl.constexpr,
                 BX: tl.constexpr, PREC: tl.constexpr, EXTRA: tl.constexpr, GATED: tl.constexpr):
    """(dx [C, BX], dl [C, BS]) of one side: the pairs inside the chunk (``causal_exact.exact_columns``
    has the terms) plus what the later chunks send back (columns [rev_offset, rev_offset + width)
    of rev [Z, nc, n, rev_stride] and rev_extra, at H = ``leave``); without ``EXTRA`` the extra terms are zero and
    skipped. The later chunks' part is loaded last: no [BS, BX] tile is alive during the pairs."""
    if steep:
        dx, dl = exact_columns(x, weights, extra, factor, y_ptr, width, cols, l_ptr, z, N, n,
                               rows, slots, g, C, BX, GATED)
    else:
        mask = causal(rows, C)
        mix = tl.where(mask, mm(weights * F, tl.trans(E), PREC), 0.0)  # fp32: E up to exp(SAFE)
        pairs = tl.where(mask, mm_in(x, tl.trans(y), IN, PREC) * factor, 0.0)
        dx = mm_rows_scaled(tl.trans(mix), x, IN, PREC)
        # fp32: F spans exp(-SAFE - log C)..1 down a column, made up for by E after the product
        dl = E * mm(tl.trans(pairs), weights * F, PREC)
        if EXTRA:
            dl += E * mm(tl.trans(tl.where(mask, 1.0, 0.0)), extra * F, PREC)
    # rev is loaded once per product, dl's in column blocks wider than 64 (``MEMORY_BLOCK``), so that
    # no fp32 [BS, BX] tile is alive beside a scaled copy; y is an input, exact in IN as it is
    dx += mm_scaled(leave, memory_tile(rev_ptr, z, c, nc, n, rev_stride, rev_offset, width, slots, cols),
                    IN, PREC)
    RB: tl.constexpr = BX if BX <= 64 else MEMORY_BLOCK
    back = tl.zeros_like(leave)
    for h in tl.static_range(0, BX, RB):
        cols_h = h + tl.arange(0, RB)
        rev_h = memory_tile(rev_ptr, z, c, nc, n, rev_stride, rev_offset, width, slots, cols_h)
        back += mm_cols_scaled(row_tile(y_ptr, z, N, rows, width, cols_h, 0.0), tl.trans(rev_h), IN, PREC)
    dl += leave * (factor * back + rev_extra[None, :])
    return dx, dl


@triton.jit
def columns_kernel(q_ptr, k_ptr, v_ptr, l_ptr, eprev_ptr, eend_ptr, do_ptr, ds_ptr, pr_ptr,
                   dg_ptr, rev_ptr, dk_ptr, dv_ptr, dl_ptr, total_ptr, scale, N, n, K, V, nc,
                   C: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
                   PREC: tl.constexpr, SAFE: tl.constexpr, GATED: tl.constexpr):
    """Program (z, c, side): side 0 writes dk and dl's key part to dl [0], side 1 dv and dl's value
    part to dl [1] (dl: fp32 [2, Z, N, n], the caller adds the parts). dl [0] may be ds and dl [1]
    pr: each side reads only its own (dS, or P') and overwrites it after its last read. With
    ``GATED`` each side also writes its chunk's total over the rows to total [2, Z, nc, n] fp32:
    side 0 of dl + dg, side 1 of dl (total_ptr unused without it)."""
    z, c, rows, slots, cols_k, cols_v = chunk_program(C, BS, BK, BV)
    IN = q_ptr.dtype.element_ty
    l, g, a, e_prev = normalisers(l_ptr, eprev_ptr, z, c, nc, N, n, rows, slots, C, SAFE, GATED)
    F, E, R, first_steep = chunk_factors(l, g, a, e_prev, rows, SAFE)
    steep = first_steep < N
    leave = tl.exp(l - slot_vector(eend_ptr, z, c, nc, n, slots, 0.0)[None, :])  # H, <= 1
    width = K + V + 1
    part = tl.num_programs(0).to(tl.int64) * N * n  # dl's parts: [2, Z, N, n]
    side = tl.program_id(2)
    if side == 0:
        q = row_tile(q_ptr, z, N, rows, K, cols_k, 0.0)
        k = row_tile(k_ptr, z, N, rows, K, cols_k, 0.0)
        d_scores = row_tile(ds_ptr, z, N, rows, n, slots, 0.0)
        d_norm = row_tile(dg_ptr, z, N, rows, n, slots, 0.0)
        if GATED:  # g given (the gates' sum): dl is W's own gradient, gsa.triton.gates chains dg
            extra = tl.zeros_like(l)
            rev_g = tl.zeros_like(a)
        else:  # g = logcumsumexp(l): dg flows on into dl
            extra = d_norm
            rev_g = tl.load(rev_ptr + ((z * nc + c) * n + slots) * width + K + V, mask=slots < n,
                            other=0.0)
        dk, dl = _column_side(q, k, d_scores, extra, rev_ptr, width, 0, rev_g, scale, leave, F, E, k_ptr, K,
                              cols_k, l_ptr, z, c, nc, N, n, rows, slots, g, steep, IN, C, BK, PREC, not GATED,
                              GATED)
        store_row_tile(dk_ptr, z, N, rows, K, cols_k, dk * scale)
        total = dl + d_norm
    else:
        v = row_tile(v_ptr, z, N, rows, V, cols_v, 0.0)
        do = row_tile(do_ptr, z, N, rows, V, cols_v, 0.0)
        P_read = row_tile(pr_ptr, z, N, rows, n, slots, 0.0)
        dv, dl = _column_side(do, v, P_read, tl.zeros_like(l), rev_ptr, width, K, tl.zeros_like(a), 1.0, leave,
                              F, E, v_ptr, V, cols_v, l_ptr, z, c, nc, N, n, rows, slots, g, steep, IN, C, BV,
                              PREC, False, GATED)
        store_row_tile(dv_ptr, z, N, rows, V, cols_v, dv)
        total = dl
    # dl [side] is the row term this program alone read (dS or P'): every thread's loads of it
    # complete before any thread's store
    tl.debug_barrier()
    store_row_tile(dl_ptr + side * part, z, N, rows, n, slots, dl)
    if GATED:
        total = tl.sum(tl.where((rows < N)[:, None], total, 0.0), axis=0)
        tl.store(total_ptr + ((side * tl.num_programs(0) + z) * nc + c) * n + slots, total, mask=slots < n)
