"""Triton kernels of the memory read of ABC: out_t = V~^T softmax(scale K~ q_t), n slots.

With attention dropout the read uses P'_t = P_t * keep_t / (1 - p) and the softmax is unchanged.
The backward, for dO [M, dv]:
    dP'_t = V~ dO_t,  dP_t = dP'_t * keep_t / (1 - p),  dS_t = P_t (dP_t - P_t . dP_t)
    dq_t = scale K~^T dS_t,   dK~ = scale sum_t dS_t (x) q_t,   dV~ = sum_t P'_t (x) dO_t
One program handles one sequence's memory (n <= BLOCK_S slots in registers) and a tile of rows in
the forward; the backward program walks all rows of a sequence, so dK~ and dV~ accumulate in
registers without atomics.
"""

import triton
import triton.language as tl

from .layout import head_columns, sequence_program


@triton.jit
def _slot_scores(q_ptr, km_ptr, z, b, h, rows, row_ok, slots, slot_ok, cols_k, sq_b, sq_h, sq_m, n,
                 scale, D: tl.constexpr, PRECISION: tl.constexpr):
    """(queries [BLOCK_M, BLOCK_D] fp32, key memory [BLOCK_S, BLOCK_D], scores [BLOCK_M, BLOCK_S]
    with -inf at the slots past n)."""
    queries = tl.load(q_ptr + b * sq_b + h * sq_h + rows[:, None] * sq_m + cols_k[None, :],
                      mask=row_ok[:, None] & (cols_k[None, :] < D), other=0.0).to(tl.float32)
    key_memory = tl.load(km_ptr + z * n * D + slots[:, None] * D + cols_k[None, :],
                         mask=slot_ok[:, None] & (cols_k[None, :] < D), other=0.0)
    scores = tl.dot(queries, tl.trans(key_memory), input_precision=PRECISION) * scale
    return queries, key_memory, tl.where(slot_ok[None, :], scores, float("-inf"))


@triton.jit
def memory_read_fwd(
    q_ptr, km_ptr, vm_ptr, keep_ptr, out_ptr, lse_ptr,
    H, M, n, scale, keep_scale,
    sq_b, sq_h, sq_m, skeep_b, skeep_h, skeep_m,
    D: tl.constexpr, DV: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_S: tl.constexpr, HAS_DROPOUT: tl.constexpr, PRECISION: tl.constexpr,
):
    """Grid (B * H, cdiv(M, BLOCK_M)). km [Z, n, D], vm [Z, n, DV] contiguous fp32; out [Z, M, DV]
    contiguous in q's dtype; lse [Z, M] fp32 (log-sum-exp of each row's scores)."""
    z, b, h = sequence_program(H)
    rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    slots = tl.arange(0, BLOCK_S)
    cols_k, cols_v = head_columns(BLOCK_D, BLOCK_DV)
    row_ok = rows < M
    slot_ok = slots < n
    _, _, scores = _slot_scores(q_ptr, km_ptr, z, b, h, rows, row_ok, slots, slot_ok, cols_k,
                                sq_b, sq_h, sq_m, n, scale, D, PRECISION)
    row_max = tl.max(scores, 1)
    probs = tl.exp(scores - row_max[:, None])
    total = tl.sum(probs, 1)
    probs = probs / total[:, None]
    tl.store(lse_ptr + z * M + rows, row_max + tl.log(total), mask=row_ok)
    if HAS_DROPOUT:
        keep = tl.load(keep_ptr + b * skeep_b + h * skeep_h + rows[:, None] * skeep_m + slots[None, :],
                       mask=row_ok[:, None] & slot_ok[None, :], other=0)
        probs = tl.where(keep != 0, probs * keep_scale, 0.0)
    value_memory = tl.load(vm_ptr + z * n * DV + slots[:, None] * DV + cols_v[None, :],
                           mask=slot_ok[:, None] & (cols_v[None, :] < DV), other=0.0)
    out = tl.dot(probs, value_memory, input_precision=PRECISION)
    tl.store(out_ptr + z * M * DV + rows[:, None] * DV + cols_v[None, :],
             out.to(out_ptr.dtype.element_ty), mask=row_ok[:, None] & (cols_v[None, :] < DV))


@triton.jit
def memory_read_bwd(
    q_ptr, km_ptr, vm_ptr, keep_ptr, lse_ptr, do_ptr, dq_ptr, dkm_ptr, dvm_ptr,
    H, M, n, scale, keep_scale,
    sq_b, sq_h, sq_m, skeep_b, skeep_h, skeep_m,
    D: tl.constexpr, DV: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_S: tl.constexpr, HAS_DROPOUT: tl.constexpr, PRECISION: tl.constexpr,
):
    """Grid (B * H,). do [Z, M, DV] contiguous; dq [Z, M, D] contiguous in q's dtype; dkm, dvm
    [Z, n, D|DV] contiguous fp32."""
    z, b, h = sequence_program(H)
    slots = tl.arange(0, BLOCK_S)
    cols_k, cols_v = head_columns(BLOCK_D, BLOCK_DV)
    slot_ok = slots < n
    value_memory = tl.load(vm_ptr + z * n * DV + slots[:, None] * DV + cols_v[None, :],
                           mask=slot_ok[:, None] & (cols_v[None, :] < DV), other=0.0)
    grad_km = tl.zeros([BLOCK_S, BLOCK_D], tl.float32)
    grad_vm = tl.zeros([BLOCK_S, BLOCK_DV], tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        row_ok = rows < M
        queries, key_memory, scores = _slot_scores(q_ptr, km_ptr, z, b, h, rows, row_ok, slots,
                                                   slot_ok, cols_k, sq_b, sq_h, sq_m, n, scale, D,
                                                   PRECISION)
        lse = tl.load(lse_ptr + z * M + rows, mask=row_ok, other=0.0)
        probs = tl.where(row_ok[:, None], tl.exp(scores - lse[:, None]), 0.0)
        grad_out = tl.load(do_ptr + z * M * DV + rows[:, None] * DV + cols_v[None, :],
                           mask=row_ok[:, None] & (cols_v[None, :] < DV), other=0.0).to(tl.float32)
        grad_probs = tl.dot(grad_out, tl.trans(value_memory), input_precision=PRECISION)
        dropped = probs
        if HAS_DROPOUT:
            keep = tl.load(keep_ptr + b * skeep_b + h * skeep_h + rows[:, None] * skeep_m + slots[None, :],
                           mask=row_ok[:, None] & slot_ok[None, :], other=0) != 0
            dropped = tl.where(keep, probs * keep_scale, 0.0)
            grad_probs = tl.where(keep, grad_probs * keep_scale, 0.0)
        grad_scores = probs * (grad_probs - tl.sum(probs * grad_probs, 1)[:, None])
        grad_q = tl.dot(grad_scores, key_memory, input_precision=PRECISION) * scale
        tl.store(dq_ptr + z * M * D + rows[:, None] * D + cols_k[None, :],
                 grad_q.to(dq_ptr.dtype.element_ty), mask=row_ok[:, None] & (cols_k[None, :] < D))
        grad_km += tl.dot(tl.trans(grad_scores), queries, input_precision=PRECISION) * scale
        grad_vm += tl.dot(tl.trans(dropped), grad_out, input_precision=PRECISION)
    tl.store(dkm_ptr + z * n * D + slots[:, None] * D + cols_k[None, :], grad_km,
             mask=slot_ok[:, None] & (cols_k[None, :] < D))
    tl.store(dvm_ptr + z * n * DV + slots[:, None] * DV + cols_v[None, :], grad_vm,
             mask=slot_ok[:, None] & (cols_v[None, :] < DV))
