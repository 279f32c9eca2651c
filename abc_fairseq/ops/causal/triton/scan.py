"""The light inter-chunk pass: per (sequence, tile of slots x width), a scan over the chunks that
loads GROUP chunks at a time and combines them in registers while the next GROUP load.

Forward: M_0 = the carried memory, M_{c+1} = decay_c M_c + sums_c; backward (REVERSE): the
memory of everything after chunk c, R_{nc-1} = 0, R_{c-1} = decay_c R_c + sums_c. decay_c =
exp(e_{c-1} - e_c) <= 1 rescales a memory stored at one chunk's normaliser to the next one's.
``mem`` [Z, nc, n, W] holds the per-chunk sums on entry and, in place, the memories on exit, in
the chunk state's dtype; the running memory is kept in fp32.

With ``NORMALISE`` (forward only) the normalisers are found here too, from the chunk totals
T_c = log sum_{i in c} exp(l_i) [Z, nc, n] (``forward.chunk_sums_kernel``, whose sums are then
stored at T_c): e_c = logaddexp(e_{c-1}, T_c) from e_{-1} = g_before [Z, n], and
    M_{c+1} = exp(e_{c-1} - e_c) M_c + exp(T_c - e_c) sums_c.
e_prev_c = e_{c-1}, e_end_c = e_c and decay_c are written [Z, nc, n] for the output and backward
kernels, by the lanes holding column 0 of each slot.

Why groups: each step of the recurrence is one multiply-add, but a loop that loads one chunk per
step waits a memory round trip per chunk (nc of them in a chain). Here a program loads the next
GROUP chunks' sums in one go while it combines the current GROUP, one after the other in
registers (a few multiply-adds each): the chain a memory round trip waits on is N / (C GROUP)
groups long, and each step's arithmetic is the one-chunk-a-step scan's, in the same order.
(``tl.associative_scan`` would combine a group in log2(GROUP) levels, but the interpreter runs a
scan with a custom combine element by element in Python, too slow for CI, and the group's chain
of GROUP multiply-adds is short beside one memory round trip.)
"""

import triton
import triton.language as tl

from .common import logaddexp


@triton.jit
def _group(mem_ptr, side_ptr, z, g0, nc, n, W, idx, ok, slot, GROUP: tl.constexpr, REVERSE: tl.constexpr,
           NORMALISE: tl.constexpr):
    """The group of GROUP chunks starting at scan position g0: (their chunk indices [GROUP], which
    exist, the sums [GROUP, BLOCK] fp32 and what each step reads beside them: the chunk totals
    (-inf past the last chunk) or the decays (1 past it), so that a missing chunk is the identity)."""
    order = g0 + tl.arange(0, GROUP)
    if REVERSE:
        c = nc - 1 - order
    else:
        c = order
    valid = order < nc
    here = valid[:, None] & ok[None, :]
    part = tl.load(mem_ptr + (z * nc + c[:, None]) * n * W + idx[None, :], mask=here, other=0.0).to(tl.float32)
    if NORMALISE:
        side = tl.load(side_ptr + (z * nc + c[:, None]) * n + slot[None, :], mask=here, other=float("-inf"))
    else:
        side = tl.load(side_ptr + (z * nc + c[:, None]) * n + slot[None, :], mask=here, other=1.0)
    return c, valid, part, side


@triton.jit
def _row(x, r, rows):
    """Row r of x [GROUP, BLOCK] as [BLOCK]."""
    return tl.sum(tl.where((rows == r)[:, None], x, 0.0), axis=0)


@triton.jit
def chunk_scan_kernel(mem_ptr, decay_ptr, carry_ptr, final_ptr, total_ptr, gbefore_ptr, eprev_ptr,
                      eend_ptr, nc, n, W, BLOCK: tl.constexpr, GROUP: tl.constexpr, REVERSE: tl.constexpr,
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
        step, first = -1, nc - 1
    else:
        step, first = 1, 0
    c, valid, part, side = _group(mem_ptr, side_ptr, z, 0, nc, n, W, idx, ok, slot, GROUP, REVERSE, NORMALISE)
    # Every store into mem below lands on a chunk whose sums this program has loaded already (the
    # memory entering chunk c + 1 is written once chunk c is combined, and the next group is loaded
    # before this one's results are written); the barriers order one lane's load before another
    # lane's store of the same address.
    tl.debug_barrier()
    tl.store(mem_ptr + (z * nc + first) * n * W + idx, acc.to(mem_ptr.dtype.element_ty), mask=ok)
    for g0 in range(0, nc, GROUP):
        c_next, valid_next, part_next, side_next = _group(mem_ptr, side_ptr, z, g0 + GROUP, nc, n, W, idx, ok, slot,
                                                          GROUP, REVERSE, NORMALISE)
        tl.debug_barrier()
        rows = tl.arange(0, GROUP)
        after = tl.zeros((GROUP, BLOCK), dtype=tl.float32)  # row r: the memory entering the chunk after c_r
        if NORMALISE:
            e_prev = tl.zeros((GROUP, BLOCK), dtype=tl.float32)
            e_end = tl.zeros((GROUP, BLOCK), dtype=tl.float32)
            decays = tl.zeros((GROUP, BLOCK), dtype=tl.float32)
        for r in tl.static_range(GROUP):  # a chunk past the last one is the identity step
            here = (rows == r)[:, None]
            side_r = _row(side, r, rows)
            if NORMALISE:
                e_new = logaddexp(e, side_r)
                # -inf - -inf (nothing written yet, or a chunk writing nothing) is a factor of 0.
                decay = tl.where(e_new == float("-inf"), 0.0, tl.exp(e - e_new))
                written = tl.where(side_r == float("-inf"), 0.0, tl.exp(side_r - e_new)) * _row(part, r, rows)
                e_prev = tl.where(here, e[None, :], e_prev)
                e_end = tl.where(here, e_new[None, :], e_end)
                decays = tl.where(here, decay[None, :], decays)
                e = e_new
            else:
                decay = side_r
                written = _row(part, r, rows)
            acc = decay * acc + written
            after = tl.where(here, acc[None, :], after)
        if NORMALISE:
            at = (z * nc + c[:, None]) * n + slot[None, :]
            mine = valid[:, None] & owner[None, :]
            tl.store(eprev_ptr + at, e_prev, mask=mine)
            tl.store(eend_ptr + at, e_end, mask=mine)
            tl.store(decay_ptr + at, decays, mask=mine)
        into = c + step
        fits = valid & (into >= 0) & (into < nc)
        tl.store(mem_ptr + (z * nc + into[:, None]) * n * W + idx[None, :], after.to(mem_ptr.dtype.element_ty),
                 mask=fits[:, None] & ok[None, :])
        c, valid, part, side = c_next, valid_next, part_next, side_next
    if HAS_FINAL:
        tl.store(final_ptr + z * n * W + idx, acc, mask=ok)
