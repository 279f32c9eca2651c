"""``triton.jit`` helpers shared by the causal ABC kernels.

Layout: every per-row tensor is contiguous [Z, N, width] (Z = batch x heads), so row ``t`` of
sequence ``z`` starts at ``(z * N + t) * width``. Tiles are padded to powers of two (at least 16,
``tl.dot``'s minimum) and masked: padded slots carry logit -inf and normaliser +inf, rows past N
carry normaliser +inf, so every factor exp(.) there is exactly 0 and no inf - inf arises.

Factors of chunk c (see ``causal/chunk_geometry.py``), per slot, with a = g at the chunk's first row and
e_prev = g just before the chunk (the normaliser the carried memory is stored at):
    F_t = exp(a - g_t) <= 1,  E_i = exp(l_i - a) (capped at exp(SAFE)),  R_t = exp(e_prev - g_t) <= 1
so that W_ti = exp(l_i - g_t) = E_i F_t inside the chunk, and R_t rescales the carried memory.

Every kernel rebuilds its chunk's normalisers g from what the op was given, a sum down the
chunk's C rows, so that nothing scans the N rows of a sequence outside a kernel: ABC's from the
logits and e_prev (``chunk_prefix``), GSA's (``GATED``) from the log gates alone (``chunk_gates``).
"""

import triton
import triton.language as tl

from ...triton.layout import head_columns

# Column block of the [n, d] products and memory tiles wider than 64 (up to 64 they are taken
# whole): 128-wide tiles taken whole spilled (ptxas, sm_80 and sm_90), and blocks of 32 spill the
# least; at 64 wide blocks cost the columns kernel registers.
MEMORY_BLOCK = tl.constexpr(32)


@triton.jit
def row_tile(base, z, N, rows, width, cols, fill):
    """Load rows ``rows`` x columns ``cols`` of a [Z, N, width] tensor as fp32 (``fill`` outside)."""
    ptrs = base + (z * N + rows[:, None]) * width + cols[None, :]
    ok = (rows < N)[:, None] & (cols < width)[None, :]
    return tl.load(ptrs, mask=ok, other=fill).to(tl.float32)


@triton.jit
def store_row_tile(base, z, N, rows, width, cols, value):
    ptrs = base + (z * N + rows[:, None]) * width + cols[None, :]
    ok = (rows < N)[:, None] & (cols < width)[None, :]
    tl.store(ptrs, value.to(base.dtype.element_ty), mask=ok)


@triton.jit
def memory_tile(base, z, c, nc, n, stride, offset, width, slots, cols):
    """Columns [offset, offset + width) of memory [Z, nc, n, stride] at chunk c (stored in the
    chunk state's dtype), as [BS, W] fp32."""
    ptrs = base + ((z * nc + c) * n + slots[:, None]) * stride + offset + cols[None, :]
    ok = (slots < n)[:, None] & (cols < width)[None, :]
    return tl.load(ptrs, mask=ok, other=0.0).to(tl.float32)


@triton.jit
def store_memory_tile(base, z, c, nc, n, stride, offset, width, slots, cols, value):
    ptrs = base + ((z * nc + c) * n + slots[:, None]) * stride + offset + cols[None, :]
    ok = (slots < n)[:, None] & (cols < width)[None, :]
    tl.store(ptrs, value.to(base.dtype.element_ty), mask=ok)


@triton.jit
def slot_vector(base, z, c, nc, n, slots, fill):
    """Row c of a [Z, nc, n] fp32 tensor (``fill`` in padded slots)."""
    return tl.load(base + (z * nc + c) * n + slots, mask=slots < n, other=fill)


@triton.jit
def logaddexp(a, b):
    """log(exp(a) + exp(b)), elementwise, without overflow; -inf with -inf is -inf and a NaN
    stays NaN (max / min taken NaN-propagating)."""
    hi = tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)
    lo = tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)
    return tl.where(lo == float("-inf"), hi, hi + tl.log(1.0 + tl.exp(lo - hi)))


@triton.jit
def chunk_total(l):
    """log sum_i exp(l_i) down the rows of l [C, BS] ([BS]; -inf where every row is -inf). The
    peak is taken over the whole chunk: only the memories of later chunks depend on it."""
    peak = tl.max(l, axis=0)
    peak = tl.where(peak == float("-inf"), 0.0, peak)
    return peak + tl.log(tl.sum(tl.exp(l - peak[None, :]), axis=0))


@triton.jit
def chunk_prefix(l, e_prev, rows, slots, N, n, C: tl.constexpr, SAFE: tl.constexpr):
    """(g [C, BS], a [BS]): the prefix normalisers g_t = logaddexp(e_prev, log sum_{first<=i<=t}
    exp(l_i)) of the chunk's rows and their anchor a = logaddexp(e_prev, l_first), from the
    logits l [C, BS] and the normaliser before the chunk e_prev [BS] (padded slots and rows past N
    get g = +inf, padded slots a = 0, as every kernel takes them).

    Rows before the chunk's first steep row (``chunk_factors``: some exp(l_i - a) > exp(SAFE))
    take one running sum of exp(l_i - a) (terms <= exp(SAFE), the first one 1): C dependent adds,
    log(C) deep as a scan. From the steep row on, the sum would overflow: those rows take
    logaddexp itself, one row i of the chunk at a time into every row t >= i (C steps on [C, BS]
    tiles, as the steep path of ``exact`` costs), exact for any finite logits. Which form a row
    takes depends on the rows up to it only, and each form's value at row t on rows i <= t only,
    so a later row never changes an earlier one's bits."""
    first = tl.min(rows, axis=0)
    a = logaddexp(e_prev, tl.sum(tl.where((rows == first)[:, None], l, 0.0), axis=0))
    a = tl.where(slots < n, a, 0.0)
    base = tl.where(a == float("-inf"), 0.0, a)  # a = -inf: nothing written yet (g stays -inf)
    rise = l - base[None, :]
    g = base[None, :] + tl.log(tl.exp(e_prev - base)[None, :]
                               + tl.cumsum(tl.exp(tl.minimum(rise, SAFE)), axis=0))
    steep_rows = tl.max(l - a[None, :], axis=1) > SAFE
    first_steep = tl.min(tl.where(steep_rows, rows, 2147483647), axis=0)
    if first_steep < N:
        exact = tl.zeros_like(l) + e_prev[None, :]
        for ii in range(0, C):
            l_i = tl.sum(tl.where((rows == first + ii)[:, None], l, 0.0), axis=0)
            exact = tl.where((rows >= first + ii)[:, None], logaddexp(exact, l_i[None, :]), exact)
        g = tl.where((rows >= first_steep)[:, None], exact, g)
    g = tl.where((rows < N)[:, None] & (slots < n)[None, :], g, float("inf"))
    return g, a


@triton.jit
def expm1(x):
    """exp(x) - 1 elementwise, without 1 - exp(x)'s loss of every digit near 0: a Taylor series
    for |x| < 0.1 (its first left-out term, x^7 / 5040, is 2e-10 of x there)."""
    series = x * (1.0 + x * (0.5 + x * (1.0 / 6 + x * (1.0 / 24 + x * (1.0 / 120 + x * (1.0 / 720))))))
    return tl.where(tl.abs(x) < 0.1, series, tl.exp(x) - 1.0)


@triton.jit
def log_write(gates):
    """GSA's log write weight log(1 - a) = log(-expm1(g)) of log gates g <= 0 (-inf at g = 0: a
    gate of 1 writes nothing). A weight below 2^-60 (a gate within 1e-18 of 1) is scaled by 2^60,
    exactly, before the log, so that a subnormal weight is not taken for 0 by the log."""
    write = -expm1(gates)
    tiny = write < 8.673617379884035e-19  # 2^-60
    return tl.where(tiny, tl.log(write * 1.152921504606847e18) - 41.58883083359672, tl.log(write))


@triton.jit
def chunk_gates(gate_ptr, z, N, n, rows, slots):
    """(l, g, a) of a chunk from GSA's log gates [Z, N, n] (loaded in fp32), each chunk in its own
    frame: with G_t the cumulative log gate from the chunk's first row,
        l_i = log(1 - a_i) - G_i,  g_t = -G_t,  a = g at the first row,
    so that exp(l_i - g_t) is GSA's weight (1 - a_i) prod_{i<m<=t} a_m and the memory entering the
    chunk (stored at e_prev = 0) is read at exp(-g_t) = prod_{m<=t} a_m. Padded slots and rows
    past N load gate 0 (a = 1: they write nothing and decay nothing); there g = +inf and padded
    slots' a = 0, as ``chunk_prefix`` has it. The frames never meet: the kernels take differences
    inside one chunk and the chunk decays exp(-e_end) across chunks (``chunk_sums_kernel``), so no
    long cumulative sum loses a short segment to rounding."""
    gates = row_tile(gate_ptr, z, N, rows, n, slots, 0.0)
    G = tl.cumsum(gates, axis=0)
    l = log_write(gates) - G
    first = tl.min(rows, axis=0)
    a = -tl.sum(tl.where((rows == first)[:, None], gates, 0.0), axis=0)
    g = tl.where((rows < N)[:, None] & (slots < n)[None, :], -G, float("inf"))
    return l, g, a


@triton.jit
def normalisers(l_ptr, eprev_ptr, z, c, nc, N, n, rows, slots, C: tl.constexpr, SAFE: tl.constexpr,
                GATED: tl.constexpr):
    """(l, g, a, e_prev) of chunk c: logits and prefix normalisers [C, BS], anchor and the
    normaliser before the chunk [BS]. ABC: l_ptr holds the logits, e_prev is loaded from
    eprev_ptr [Z, nc, n] and g found by ``chunk_prefix``; ``GATED`` (GSA): l_ptr holds the log
    gates, e_prev is 0 (eprev_ptr unused) and (l, g, a) come from ``chunk_gates``."""
    if GATED:
        l, g, a = chunk_gates(l_ptr, z, N, n, rows, slots)
        e_prev = tl.zeros_like(a)
    else:
        l = row_tile(l_ptr, z, N, rows, n, slots, float("-inf"))
        e_prev = slot_vector(eprev_ptr, z, c, nc, n, slots, 0.0)
        g, a = chunk_prefix(l, e_prev, rows, slots, N, n, C, SAFE)
    return l, g, a, e_prev


@triton.jit
def chunk_factors(l, g, a, e_prev, rows, SAFE: tl.constexpr):
    """(F, E, R, first_steep): first_steep is the first row whose E would exceed exp(SAFE) (a
    value past the chunk when there is none). From that row on, the intra-chunk terms are built
    row by row (``exact``); E is capped here so that the rows before it, which never read a
    later row, stay finite and exactly independent of the rows after them."""
    rise = l - a[None, :]
    steep_rows = tl.max(rise, axis=1) > SAFE
    first_steep = tl.min(tl.where(steep_rows, rows, 2147483647), axis=0)
    F = tl.exp(a[None, :] - g)
    E = tl.exp(tl.minimum(rise, SAFE))
    R = tl.exp(e_prev[None, :] - g)
    return F, E, R, first_steep


@triton.jit
def slot_softmax(S, slots, n):
    """Softmax over the n real slots of each row of S [C, BS] (padded slots get 0)."""
    S = tl.where((slots < n)[None, :], S, float("-inf"))
    p = tl.exp(S - tl.max(S, axis=1)[:, None])
    return p / tl.sum(p, axis=1)[:, None]


@triton.jit
def causal(rows, C: tl.constexpr):
    """[C, C] mask, True where column i <= row t (both indices inside the chunk)."""
    return rows[:, None] >= rows[None, :]


@triton.jit
def mm(a, b, PREC: tl.constexpr):
    """fp32 a @ b, for the products whose operand range fp16 cannot hold: only those with the
    intra-chunk factor E (up to exp(SAFE) = e^60). PREC: "ieee" for fp32 inputs (exact), "tf32"
    for half inputs (fp32's range, fp16's mantissa)."""
    return tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision=PREC)


@triton.jit
def to_operand(x, IN: tl.constexpr):
    """x as a tensor-core operand in the input dtype IN (a no-op for fp32 inputs). Only for
    operands bounded by construction: the inputs, factors <= 1, normalised probabilities, the
    chunk memories (sums of rows weighted by factors summing to <= 1), or a tile rescaled to
    at most 1 by ``_pow2_scale``."""
    return x.to(IN)


@triton.jit
def mm_in(a, b, IN: tl.constexpr, PREC: tl.constexpr):
    """a @ b with both operands in the input dtype IN, fp32 accumulation: for operands bounded
    as ``to_operand`` states (tensor cores in half precision)."""
    return tl.dot(to_operand(a, IN), to_operand(b, IN), out_dtype=tl.float32, input_precision=PREC)


@triton.jit
def _pow2_scale(peak):
    """2^ceil(log2(peak)) elementwise (1 where peak is 0, inf or NaN), built from its exponent bits so
    that dividing by it is exact: a tile divided by its peaks' scales lies in [-1, 1]."""
    e = tl.ceil(tl.log2(tl.maximum(peak, 1e-30)))  # 0 (and NaN) replaced below
    e = tl.minimum(tl.maximum(e, -126.0), 127.0).to(tl.int32)
    scale = ((e + 127) << 23).to(tl.float32, bitcast=True)
    return tl.where((peak > 0) & (peak < float("inf")), scale, 1.0)


@triton.jit
def mm_scaled(a, b, IN: tl.constexpr, PREC: tl.constexpr):
    """a @ b with a's rows and b's columns both scaled as ``mm_rows_scaled`` states: for b of any
    range and a bounded but small, whose rows would lose their low bits (or underflow) in fp16 as
    they are (the factors H = exp(l_i - e_c) of what later chunks send back)."""
    if IN == tl.float32:
        return mm(a, b, PREC)
    else:
        s_a = _pow2_scale(tl.max(tl.abs(a), axis=1))
        s_b = _pow2_scale(tl.max(tl.abs(b), axis=0))
        ab = mm_in(a / s_a[:, None], b / s_b[None, :], IN, PREC)
        return ab * s_a[:, None] * s_b[None, :]


@triton.jit
def mm_rows_scaled(a, b, IN: tl.constexpr, PREC: tl.constexpr):
    """a @ b for a of any range (a gradient: dS, dg) and b bounded as ``to_operand`` states (an
    input, a chunk memory): each row of a is divided by the power of two bringing it to at most 1,
    the product taken in IN (fp32 accumulation) and the scales put back, so that only fp16's
    mantissa is lost, as with TF32; b goes to the tensor cores as it is, with no scaled copy of an
    [n, d] tile alive. fp32 inputs: ``mm`` itself."""
    if IN == tl.float32:
        return mm(a, b, PREC)
    else:
        s_a = _pow2_scale(tl.max(tl.abs(a), axis=1))
        return mm_in(a / s_a[:, None], b, IN, PREC) * s_a[:, None]


@triton.jit
def mm_cols_scaled(a, b, IN: tl.constexpr, PREC: tl.constexpr):
    """a @ b for a given in IN as it is (an input) and b of any range (what later chunks send
    back): ``mm_rows_scaled`` mirrored, b's columns scaled."""
    if IN == tl.float32:
        return mm(a, b, PREC)
    else:
        s_b = _pow2_scale(tl.max(tl.abs(b), axis=0))
        return mm_in(a, b / s_b[None, :], IN, PREC) * s_b[None, :]


@triton.jit
def read_memory(x_ptr, z, N, rows, mem_ptr, c, nc, n, stride, offset, width, slots,
                C: tl.constexpr, BS: tl.constexpr, BX: tl.constexpr, IN: tl.constexpr, PREC: tl.constexpr):
    """x_t . M_s for the chunk's rows x [C, width] of a [Z, N, width] tensor and the slots M [BS, width]
    of columns [offset, offset + width) of memory [Z, nc, n, stride] at chunk c: [C, BS] fp32.
    Tiles wider than 64 are loaded in column blocks (``MEMORY_BLOCK``), so that no [BS, BX] tile is
    alive whole."""
    RB: tl.constexpr = BX if BX <= 64 else MEMORY_BLOCK
    out = tl.zeros((C, BS), dtype=tl.float32)
    for h in tl.static_range(0, BX, RB):
        cols = h + tl.arange(0, RB)
        M = memory_tile(mem_ptr, z, c, nc, n, stride, offset, width, slots, cols)
        out += mm_in(row_tile(x_ptr, z, N, rows, width, cols, 0.0), tl.trans(M), IN, PREC)
    return out


@triton.jit
def chunk_program(C: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    """(z, c, rows, slots, cols_k, cols_v) of the program serving chunk c (grid axis 1) of
    sequence z (axis 0, int64: up to 2**31 - 1 sequences x heads)."""
    z = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    cols_k, cols_v = head_columns(BK, BV)
    return z, c, c * C + tl.arange(0, C), tl.arange(0, BS), cols_k, cols_v
