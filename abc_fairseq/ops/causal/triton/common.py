"""``triton.jit`` helpers shared by the causal ABC kernels.

Layout: every per-row tensor is contiguous [Z, N, width] (Z = batch x heads), so row ``t`` of
sequence ``z`` starts at ``(z * N + t) * width``. Tiles are padded to powers of two (at least 16,
``tl.dot``'s minimum) and masked: padded slots carry logit -inf and normaliser +inf, rows past N
carry normaliser +inf, so every factor exp(.) there is exactly 0 and no inf - inf arises.

Factors of chunk c (see ``causal/chunk_geometry.py``), per slot, with a = g at the chunk's first row and
e_prev = g just before the chunk (the normaliser the carried memory is stored at):
    F_t = exp(a - g_t) <= 1,  E_i = exp(l_i - a) (capped at exp(SAFE)),  R_t = exp(e_prev - g_t) <= 1
so that W_ti = exp(l_i - g_t) = E_i F_t inside the chunk, and R_t rescales the carried memory.
"""

import triton
import triton.language as tl

from ...triton.layout import head_columns


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
    """Columns [offset, offset + width) of memory [Z, nc, n, stride] at chunk c, as [BS, W] fp32."""
    ptrs = base + ((z * nc + c) * n + slots[:, None]) * stride + offset + cols[None, :]
    ok = (slots < n)[:, None] & (cols < width)[None, :]
    return tl.load(ptrs, mask=ok, other=0.0)


@triton.jit
def store_memory_tile(base, z, c, nc, n, stride, offset, width, slots, cols, value):
    ptrs = base + ((z * nc + c) * n + slots[:, None]) * stride + offset + cols[None, :]
    ok = (slots < n)[:, None] & (cols < width)[None, :]
    tl.store(ptrs, value, mask=ok)


@triton.jit
def slot_vector(base, z, c, nc, n, slots, fill):
    """Row c of a [Z, nc, n] fp32 tensor (``fill`` in padded slots)."""
    return tl.load(base + (z * nc + c) * n + slots, mask=slots < n, other=fill)


@triton.jit
def normalisers(g_ptr, l_ptr, eprev_ptr, z, c, nc, N, n, rows, slots):
    """(l, g, a, e_prev) of chunk c: logits and prefix normalisers [C, BS], anchor and the
    normaliser before the chunk [BS]."""
    l = row_tile(l_ptr, z, N, rows, n, slots, float("-inf"))
    g = row_tile(g_ptr, z, N, rows, n, slots, float("inf"))
    first = tl.min(rows, axis=0)
    a = tl.load(g_ptr + (z * N + first) * n + slots, mask=slots < n, other=0.0)
    e_prev = slot_vector(eprev_ptr, z, c, nc, n, slots, 0.0)
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
    """fp32 a @ b. PREC: "ieee" for fp32 inputs (exact), "tf32" for half inputs (fp32's range
    for factors up to exp(SAFE) or gradients of any size, fp16's mantissa)."""
    return tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision=PREC)


@triton.jit
def mm_in(a, b, IN: tl.constexpr, PREC: tl.constexpr):
    """a @ b with both operands in the input dtype IN, fp32 accumulation: for inputs and
    weights bounded by ~1 (tensor cores in half precision)."""
    return tl.dot(a.to(IN), b.to(IN), out_dtype=tl.float32, input_precision=PREC)


@triton.jit
def chunk_program(C: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    """(z, c, rows, slots, cols_k, cols_v) of the program serving chunk c (grid axis 1) of
    sequence z (axis 0, int64: up to 2**31 - 1 sequences x heads)."""
    z = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    cols_k, cols_v = head_columns(BK, BV)
    return z, c, c * C + tl.arange(0, C), tl.arange(0, BS), cols_k, cols_v
