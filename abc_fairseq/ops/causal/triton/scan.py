"""The light inter-chunk pass: a sequential loop over chunks per (sequence, tile of slots x width).

Forward: M_0 = the carried memory, M_{c+1} = decay_c M_c + sums_c; backward (REVERSE): the
memory of everything after chunk c, R_{nc-1} = 0, R_{c-1} = decay_c R_c + sums_c. decay_c =
exp(e_{c-1} - e_c) <= 1 rescales a memory stored at one chunk's normaliser to the next one's.
``mem`` [Z, nc, n, W] holds the per-chunk sums on entry and, in place, the memories on exit (each
element is read, then overwritten, by the same program), in the chunk state's dtype; the running
memory is kept in fp32.

With ``NORMALISE`` (forward only) the normalisers are found here too, from the chunk totals
T_c = log sum_{i in c} exp(l_i) [Z, nc, n] (``forward.chunk_sums_kernel``, whose sums are then
stored at T_c): e_c = logaddexp(e_{c-1}, T_c) from e_{-1} = g_before [Z, n], and
    M_{c+1} = exp(e_{c-1} - e_c) M_c + exp(T_c - e_c) sums_c,
so ABC's prefix normaliser costs one logaddexp per chunk on the chain: N / C dependent steps
instead of N. e_prev_c = e_{c-1}, e_end_c = e_c and decay_c are written [Z, nc, n] for the
output and backward kernels, by the lane holding column 0 of each slot.

Each step's loads (the chunk's sums and its total or decay) are issued one step ahead, before
the step that waits on the previous one: only the arithmetic is on the dependent chain.
"""

import triton
import triton.language as tl

from .common import logaddexp


@triton.jit
def chunk_scan_kernel(mem_ptr, decay_ptr, carry_ptr, final_ptr, total_ptr, gbefore_ptr, eprev_ptr,
                      eend_ptr, nc, n, W, BLOCK: tl.constexpr, REVERSE: tl.constexpr,
                      HAS_CARRY: tl.constexpr, HAS_FINAL: tl.constexpr, NORMALISE: tl.constexpr):
    """decay [Z, nc, n] is read, or with ``NORMALISE`` written (with e_prev, e_end, from total and
    g_before); total_ptr, gbefore_ptr, eprev_ptr and eend_ptr are unused without it. Without
    ``HAS_CARRY`` the memory before the first step is zero and g_before -inf (nothing read)."""
    z = tl.program_id(0).to(tl.int64)
    idx = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = idx < n * W
    slot = idx // W
    owner = ok & (idx % W == 0)  # one lane per slot writes the normalisers
    if HAS_CARRY:
        acc = tl.load(carry_ptr + z * n * W + idx, mask=ok, other=0.0)
        e = tl.load(gbefore_ptr + z * n + slot, mask=ok, other=0.0)  # unused without NORMALISE
    else:
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        e = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    if NORMALISE:  # what each step reads beside the sums
        side_ptr = total_ptr
    else:
        side_ptr = decay_ptr
    if REVERSE:
        c_next = nc - 1
    else:
        c_next = 0
    part_next = tl.load(mem_ptr + (z * nc + c_next) * n * W + idx, mask=ok, other=0.0).to(tl.float32)
    side_next = tl.load(side_ptr + (z * nc + c_next) * n + slot, mask=ok, other=0.0)
    for step in range(0, nc):
        c = c_next
        part, side = part_next, side_next
        if REVERSE:
            c_next = c - 1
        else:
            c_next = c + 1
        ahead = ok & (tl.zeros((BLOCK,), dtype=tl.int32) + step + 1 < nc)  # the next chunk exists
        part_next = tl.load(mem_ptr + (z * nc + c_next) * n * W + idx, mask=ahead, other=0.0).to(tl.float32)
        side_next = tl.load(side_ptr + (z * nc + c_next) * n + slot, mask=ahead, other=0.0)
        tl.store(mem_ptr + (z * nc + c) * n * W + idx, acc.to(mem_ptr.dtype.element_ty), mask=ok)
        if NORMALISE:
            e_new = logaddexp(e, side)
            # -inf - -inf (nothing written yet, or a chunk writing nothing) is a factor of 0.
            decay = tl.where(e_new == float("-inf"), 0.0, tl.exp(e - e_new))
            written = tl.where(side == float("-inf"), 0.0, tl.exp(side - e_new)) * part
            here = (z * nc + c) * n + slot
            tl.store(eprev_ptr + here, e, mask=owner)
            tl.store(eend_ptr + here, e_new, mask=owner)
            tl.store(decay_ptr + here, decay, mask=owner)
            e = e_new
        else:
            decay = side
            written = part
        acc = decay * acc + written
    if HAS_FINAL:
        tl.store(final_ptr + z * n * W + idx, acc, mask=ok)
