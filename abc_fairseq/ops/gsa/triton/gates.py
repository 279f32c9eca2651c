"""The log gates' gradient from the causal kernels' dl and dg: one program per sequence and span of
chunks.

With l_i = log(1 - a_i) - G_i and g_t = -G_t (G the cumulative log gate: ``common.chunk_gates``),
    d log_gate_m = -dl_m a_m / (1 - a_m) - sum_{i>=m} (dl_i + dg_i),
as d log(1 - a) / d log a = -a / (1 - a) = -1 / expm1(-log a). The sum over later rows runs in two
levels: down the chunk's own rows (a reverse cumulative sum in fp32) and over the later chunks'
totals (written by ``causal.triton.backward.columns_kernel``), summed in fp64: its terms cancel
(only the pairs i < m <= t survive), so a long fp32 running sum would lose their difference.
"""

import triton
import triton.language as tl

from ...causal.triton.common import expm1, row_tile, store_row_tile

LATER_CHUNKS = 16  # the later chunks' totals loaded at once
# At most this many programs per sequence-head: each takes a span of consecutive chunks (a power
# of two, at least nc / GATE_PROGRAMS), last first, carrying the sum over the chunks after the one
# at hand. Its first loop sums the chunks after its span: about GATE_PROGRAMS x nc / 2 loads of
# chunk totals per sequence-head, where one program per chunk made nc^2 / 2.
GATE_PROGRAMS = 64


@triton.jit
def gate_grads_kernel(gate_ptr, dl_ptr, dg_ptr, total_ptr, dgate_ptr, N, n, nc,
                      C: tl.constexpr, BS: tl.constexpr, CB: tl.constexpr, SPAN: tl.constexpr):
    """gate [Z, N, n] (the log gates, any float dtype); dl: fp32 [2, Z, N, n], the two parts
    ``columns_kernel`` writes; dg: fp32 [Z, N, n]; total: fp32 [2, Z, nc, n], each chunk's sums of
    (dl [0] + dg) and of dl [1]; writes dgate [Z, N, n] in its own dtype. Grid (Z, cdiv(nc, SPAN)):
    program (z, s) serves chunks [s SPAN, (s + 1) SPAN)."""
    z = tl.program_id(0).to(tl.int64)
    first = tl.program_id(1) * SPAN
    Z = tl.num_programs(0).to(tl.int64)
    slots = tl.arange(0, BS)
    later = tl.zeros((BS,), dtype=tl.float64)  # the chunks after the one at hand
    for start in range(first + SPAN, nc, CB):
        chunks = start + tl.arange(0, CB)
        ptrs = total_ptr + (z * nc + chunks[:, None]) * n + slots[None, :]
        ok = (chunks < nc)[:, None] & (slots < n)[None, :]
        both = (tl.load(ptrs, mask=ok, other=0.0).to(tl.float64)
                + tl.load(ptrs + Z * nc * n, mask=ok, other=0.0).to(tl.float64))
        later += tl.sum(both, axis=0)
    for i in range(SPAN):
        c = first + SPAN - 1 - i  # the span's last chunk first
        if c < nc:
            rows = c * C + tl.arange(0, C)
            dl = (row_tile(dl_ptr, z, N, rows, n, slots, 0.0)
                  + row_tile(dl_ptr + Z * N * n, z, N, rows, n, slots, 0.0))
            own = tl.cumsum(dl + row_tile(dg_ptr, z, N, rows, n, slots, 0.0), axis=0, reverse=True)
            # d log(1 - a) / d log a = -1 / expm1(-log a); where log a = 0 (a gate of 1) dl is 0.
            divisor = expm1(-row_tile(gate_ptr, z, N, rows, n, slots, 0.0))
            divisor = tl.where(divisor == 0.0, 1.0, divisor)
            store_row_tile(dgate_ptr, z, N, rows, n, slots, -(dl / divisor + own + later.to(tl.float32)[None, :]))
            p_total = total_ptr + (z * nc + c) * n + slots
            later += (tl.load(p_total, mask=slots < n, other=0.0).to(tl.float64)
                      + tl.load(p_total + Z * nc * n, mask=slots < n, other=0.0).to(tl.float64))
