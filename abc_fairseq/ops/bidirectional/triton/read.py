"""Triton kernels of the memory read of ABC: out_t = V~^T softmax(scale K~ q_t), n slots.

With attention dropout the read uses P'_t = P_t * keep_t / (1 - p) and the softmax is unchanged.
The backward, for dO [M, dv]:
    dP'_t = V~ dO_t,  dP_t = dP'_t * keep_t / (1 - p),  dS_t = P_t (dP_t - P_t . dP_t)
    dq_t = scale K~^T dS_t,   dK~ = scale sum_t dS_t (x) q_t,   dV~ = sum_t P'_t (x) dO_t
One program handles one sequence's memory (n <= BS slots in registers) and a tile of rows in
the forward; the backward program walks all rows of a sequence, so dK~ and dV~ accumulate in
registers without atomics.
"""

import triton
import triton.language as tl

from ...triton.layout import head_columns, sequence_program


@triton.jit
def _slot_scores(q_ptr, km_ptr, z, b, h, rows, row_ok, slots, slot_ok, cols_k, sq_b, sq_h, sq_m, n,
                 scale, K: tl.constexpr, PREC: tl.constexpr):
    """(queries [BT, BK] fp32, key memory [BS, BK], scores [BT, BS]
    with -inf at the slots past n)."""
    queries = tl.load(q_ptr + b * sq_b + h * sq_h + rows[:, None] * sq_m + cols_k[None, :],
                      mask=row_ok[:, None] & (cols_k[None, :] < K), other=0.0).to(tl.float32)
    key_memory = tl.load(km_ptr + z * n * K + slots[:, None] * K + cols_k[None, :],
                         mask=slot_ok[:, None] & (cols_k[None, :] < K), other=0.0)
    scores = tl.dot(queries, tl.trans(key_memory), input_precision=PREC) * scale
    return queries, key_memory, tl.where(slot_ok[None, :], scores, float("-inf"))


@triton.jit
def memory_read_fwd(
    q_ptr, km_ptr, vm_ptr, keep_ptr, out_ptr, lse_ptr,
    H, M, n, scale, keep_scale,
    sq_b, sq_h, sq_m, skeep_b, skeep_h, skeep_m,
    K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    BT: tl.constexpr, BS: tl.constexpr, HAS_DROPOUT: tl.constexpr, PREC: tl.constexpr,
):
    """Grid (B * H, cdiv(M, BT)). km [Z, n, K], vm [Z, n, V] contiguous fp32; out [Z, M, V]
    contiguous in q's dtype; lse [Z, M] fp32 (log-sum-exp of each row's scores)."""
    z, b, h = sequence_program(H)
    rows = tl.program_id(1) * BT + tl.arange(0, BT)
    slots = tl.arange(0, BS)
    cols_k, cols_v = head_columns(BK, BV)
    row_ok = rows < M
    slot_ok = slots < n
    _, _, scores = _slot_scores(q_ptr, km_ptr, z, b, h, rows, row_ok, slots, slot_ok, cols_k,
                                sq_b, sq_h, sq_m, n, scale, K, PREC)
    row_max = tl.max(scores, 1)
    probs = tl.exp(scores - row_max[:, None])
    total = tl.sum(probs, 1)
    probs = probs / total[:, None]
    tl.store(lse_ptr + z * M + rows, row_max + tl.log(total), mask=row_ok)
    if HAS_DROPOUT:
        keep = tl.load(keep_ptr + b * skeep_b + h * skeep_h + rows[:, None] * skeep_m + slots[None, :],
                       mask=row_ok[:, None] & slot_ok[None, :], other=0)
        probs = tl.where(keep != 0, probs * keep_scale, 0.0)
    value_memory = tl.load(vm_ptr + z * n * V + slots[:, None] * V + cols_v[None, :],
                           mask=slot_ok[:, None] & (cols_v[None, :] < V), other=0.0)
    out = tl.dot(probs, value_memory, input_precision=PREC)
    tl.store(out_ptr + z * M * V + rows[:, None] * V + cols_v[None, :],
             out.to(out_ptr.dtype.element_ty), mask=row_ok[:, None] & (cols_v[None, :] < V))


@triton.jit
def memory_read_bwd(
    q_ptr, km_ptr, vm_ptr, keep_ptr, lse_ptr, do_ptr, dq_ptr, dkm_ptr, dvm_ptr,
    H, M, n, scale, keep_scale,
    sq_b, sq_h, sq_m, skeep_b, skeep_h, skeep_m,
    K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    BT: tl.constexpr, BS: tl.constexpr, HAS_DROPOUT: tl.constexpr, PREC: tl.constexpr,
):
    """Grid (B * H,). do [Z, M, V] contiguous; dq [Z, M, K] contiguous in q's dtype; dkm, dvm
    [Z, n, K|V] contiguous fp32."""
    z, b, h = sequence_program(H)
    slots = tl.arange(0, BS)
    cols_k, cols_v = head_columns(BK, BV)
    slot_ok = slots < n
    value_memory = tl.load(vm_ptr + z * n * V + slots[:, None] * V + cols_v[None, :],
                           mask=slot_ok[:, None] & (cols_v[None, :] < V), other=0.0)
    grad_km = tl.zeros([BS, BK], tl.float32)
    grad_vm = tl.zeros([BS, BV], tl.float32)
    for start in range(0, M, BT):
        rows = start + tl.arange(0, BT)
        row_ok = rows < M
        queries, key_memory, scores = _slot_scores(q_ptr, km_ptr, z, b, h, rows, row_ok, slots,
                                                   slot_ok, cols_k, sq_b, sq_h, sq_m, n, scale, K,
                                                   PREC)
        lse = tl.load(lse_ptr + z * M + rows, mask=row_ok, other=0.0)
        probs = tl.where(row_ok[:, None], tl.exp(scores - lse[:, None]), 0.0)
        grad_out = tl.load(do_ptr + z * M * V + rows[:, None] * V + cols_v[None, :],
                           mask=row_ok[:, None] & (cols_v[None, :] < V), other=0.0).to(tl.float32)
        grad_probs = tl.dot(grad_out, tl.trans(value_memory), input_precision=PREC)
        dropped = probs
        if HAS_DROPOUT:
            keep = tl.load(keep_ptr + b * skeep_b + h * skeep_h + rows[:, None] * skeep_m + slots[None, :],
                           mask=row_ok[:, None] & slot_ok[None, :], other=0) != 0
            dropped = tl.where(keep, probs * keep_scale, 0.0)
            grad_probs = tl.where(keep, grad_probs * keep_scale, 0.0)
        grad_scores = probs * (grad_probs - tl.sum(probs * grad_probs, 1)[:, None])
        grad_q = tl.dot(grad_scores, key_memory, input_precision=PREC) * scale
        tl.store(dq_ptr + z * M * K + rows[:, None] * K + cols_k[None, :],
                 grad_q.to(dq_ptr.dtype.element_ty), mask=row_ok[:, None] & (cols_k[None, :] < K))
        grad_km += tl.dot(tl.trans(grad_scores), queries, input_precision=PREC) * scale
        grad_vm += tl.dot(tl.trans(dropped), grad_out, input_precision=PREC)
    tl.store(dkm_ptr + z * n * K + slots[:, None] * K + cols_k[None, :], grad_km,
             mask=slot_ok[:, None] & (cols_k[None, :] < K))
    tl.store(dvm_ptr + z * n * V + slots[:, None] * V + cols_v[None, :], grad_vm,
             mask=slot_ok[:, None] & (cols_v[None, :] < V))
