"""The light inter-chunk pass: a sequential loop over chunks per (sequence, tile of slots x width).

Forward: M_0 = the carried memory, M_{c+1} = decay_c M_c + sums_c; backward (REVERSE): the
memory of everything after chunk c, R_{nc-1} = 0, R_{c-1} = decay_c R_c + sums_c. decay_c =
exp(e_{c-1} - e_c) <= 1 rescales a memory stored at one chunk's normaliser to the next one's.
``mem`` [Z, nc, n, W] holds the per-chunk sums on entry and, in place, the memories on exit (each
element is read, then overwritten, by the same program).
"""

import triton
import triton.language as tl


@triton.jit
def chunk_scan_kernel(mem_ptr, decay_ptr, carry_ptr, final_ptr, nc, n, W,
                      BLOCK: tl.constexpr, REVERSE: tl.constexpr, HAS_CARRY: tl.constexpr,
                      HAS_FINAL: tl.constexpr):
    z = tl.program_id(0).to(tl.int64)
    idx = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = idx < n * W
    slot = idx // W
    if HAS_CARRY:
        acc = tl.load(carry_ptr + z * n * W + idx, mask=ok, other=0.0)
    else:
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for step in range(0, nc):
        if REVERSE:
            c = nc - 1 - step
        else:
            c = step
        here = mem_ptr + (z * nc + c) * n * W + idx
        part = tl.load(here, mask=ok, other=0.0)
        decay = tl.load(decay_ptr + (z * nc + c) * n + slot, mask=ok, other=0.0)
        tl.store(here, acc, mask=ok)
        acc = decay * acc + part
    if HAS_FINAL:
        tl.store(final_ptr + z * n * W + idx, acc, mask=ok)
