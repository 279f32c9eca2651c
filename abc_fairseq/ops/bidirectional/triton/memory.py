"""Triton kernels of bidirectional ABC's memory write (encoder self attention, cross attention).

Per sequence z = (b, h) and slot j, with l [N, n] the phi logits and padding rows at -inf:
    phi_ij = exp(l_ij - lse_j),  lse_j = log sum_i exp(l_ij)      (a softmax over positions)
    K~_j = sum_i phi_ij k_i,     V~_j = sum_i phi_ij v_i
The forward streams the sequence once per tile of slots with an online max (like an online softmax,
but over positions), so every exponent is <= 0 and no logit magnitude overflows. It keeps lse for the
backward, where, for upstream gradients dK~, dV~ [n, d],
    dk_i = sum_j phi_ij dK~_j,   dv_i = sum_j phi_ij dV~_j
    dl_ij = phi_ij (k_i . dK~_j + v_i . dV~_j - c_j),   c_j = dK~_j . K~_j + dV~_j . V~_j
(the softmax backward over positions; c_j = sum_i phi_ij (k_i . dK~_j + v_i . dV~_j)).
Memories, normalisers and every product accumulate in fp32.
"""

import triton
import triton.language as tl

from ...triton.layout import head_columns, sequence_program


@triton.jit
def memory_write_fwd(
    k_ptr, v_ptr, l_ptr, pad_ptr, km_ptr, vm_ptr, lse_ptr,
    H, N, n,
    sk_b, sk_h, sk_n, sv_b, sv_h, sv_n, sl_b, sl_h, sl_n, sp_b,
    K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    BT: tl.constexpr, BS: tl.constexpr, HAS_PAD: tl.constexpr, PREC: tl.constexpr,
):
    """Grid (B * H, cdiv(n, BS)). k, v, logits have a unit last stride; outputs are contiguous
    fp32: km [Z, n, K], vm [Z, n, V], lse [Z, n]."""
    z, b, h = sequence_program(H)
    slots = tl.program_id(1) * BS + tl.arange(0, BS)
    cols_k, cols_v = head_columns(BK, BV)
    slot_ok = slots < n

    run_max = tl.full([BS], float("-inf"), tl.float32)
    total = tl.zeros([BS], tl.float32)
    acc_k = tl.zeros([BS, BK], tl.float32)
    acc_v = tl.zeros([BS, BV], tl.float32)
    for start in range(0, N, BT):
        rows = start + tl.arange(0, BT)
        row_ok = rows < N
        if HAS_PAD:
            is_pad = tl.load(pad_ptr + b * sp_b + rows, mask=row_ok, other=1)
            row_ok = row_ok & (is_pad == 0)
        logits = tl.load(l_ptr + b * sl_b + h * sl_h + rows[:, None] * sl_n + slots[None, :],
                         mask=row_ok[:, None] & slot_ok[None, :], other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(run_max, tl.max(logits, 0))
        # A slot nothing has been written to keeps a max of -inf: anchor it at 0 instead, so that
        # exp(-inf - anchor) is 0 rather than NaN.
        anchor = tl.where(new_max == float("-inf"), 0.0, new_max)
        rescale = tl.exp(run_max - anchor)
        weights = tl.exp(logits - anchor[None, :])  # [BT, BS], each <= 1
        total = total * rescale + tl.sum(weights, 0)
        keys = tl.load(k_ptr + b * sk_b + h * sk_h + rows[:, None] * sk_n + cols_k[None, :],
                       mask=row_ok[:, None] & (cols_k[None, :] < K), other=0.0).to(tl.float32)
        values = tl.load(v_ptr + b * sv_b + h * sv_h + rows[:, None] * sv_n + cols_v[None, :],
                         mask=row_ok[:, None] & (cols_v[None, :] < V), other=0.0).to(tl.float32)
        weights_t = tl.trans(weights)
        acc_k = acc_k * rescale[:, None] + tl.dot(weights_t, keys, input_precision=PREC)
        acc_v = acc_v * rescale[:, None] + tl.dot(weights_t, values, input_precision=PREC)
        run_max = new_max

    written = total > 0  # False for a slot of an all-padding sequence: its memory is 0
    denom = tl.where(written, total, 1.0)
    lse = tl.where(written, run_max + tl.log(denom), float("-inf"))
    tl.store(lse_ptr + z * n + slots, lse, mask=slot_ok)
    tl.store(km_ptr + z * n * K + slots[:, None] * K + cols_k[None, :], acc_k / denom[:, None],
             mask=slot_ok[:, None] & (cols_k[None, :] < K))
    tl.store(vm_ptr + z * n * V + slots[:, None] * V + cols_v[None, :], acc_v / denom[:, None],
             mask=slot_ok[:, None] & (cols_v[None, :] < V))


@triton.jit
def memory_write_bwd(
    k_ptr, v_ptr, l_ptr, pad_ptr, lse_ptr, dkm_ptr, dvm_ptr, c_ptr, dk_ptr, dv_ptr, dl_ptr,
    H, N, n,
    sk_b, sk_h, sk_n, sv_b, sv_h, sv_n, sl_b, sl_h, sl_n, sp_b,
    K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    BT: tl.constexpr, BS: tl.constexpr, HAS_PAD: tl.constexpr, PREC: tl.constexpr,
):
    """Grid (B * H, cdiv(N, BT)); BS covers all n slots. dkm [Z, n, K], dvm [Z, n, V],
    c [Z, n], lse [Z, n] contiguous fp32; dk, dv, dl contiguous [Z, N, *] in the inputs' dtypes."""
    z, b, h = sequence_program(H)
    rows = tl.program_id(1) * BT + tl.arange(0, BT)
    slots = tl.arange(0, BS)
    cols_k, cols_v = head_columns(BK, BV)
    in_range = rows < N
    row_ok = in_range
    if HAS_PAD:
        is_pad = tl.load(pad_ptr + b * sp_b + rows, mask=in_range, other=1)
        row_ok = row_ok & (is_pad == 0)
    slot_ok = slots < n

    lse = tl.load(lse_ptr + z * n + slots, mask=slot_ok, other=float("-inf"))
    lse = tl.where(lse == float("-inf"), 0.0, lse)  # unwritten slots: every phi below is 0
    logits = tl.load(l_ptr + b * sl_b + h * sl_h + rows[:, None] * sl_n + slots[None, :],
                     mask=row_ok[:, None] & slot_ok[None, :], other=float("-inf")).to(tl.float32)
    phi = tl.exp(logits - lse[None, :])  # [BT, BS]
    grad_km = tl.load(dkm_ptr + z * n * K + slots[:, None] * K + cols_k[None, :],
                      mask=slot_ok[:, None] & (cols_k[None, :] < K), other=0.0)
    grad_vm = tl.load(dvm_ptr + z * n * V + slots[:, None] * V + cols_v[None, :],
                      mask=slot_ok[:, None] & (cols_v[None, :] < V), other=0.0)
    keys = tl.load(k_ptr + b * sk_b + h * sk_h + rows[:, None] * sk_n + cols_k[None, :],
                   mask=row_ok[:, None] & (cols_k[None, :] < K), other=0.0).to(tl.float32)
    values = tl.load(v_ptr + b * sv_b + h * sv_h + rows[:, None] * sv_n + cols_v[None, :],
                     mask=row_ok[:, None] & (cols_v[None, :] < V), other=0.0).to(tl.float32)

    grad_k = tl.dot(phi, grad_km, input_precision=PREC)
    grad_v = tl.dot(phi, grad_vm, input_precision=PREC)
    grad_phi = tl.dot(keys, tl.trans(grad_km), input_precision=PREC)
    grad_phi += tl.dot(values, tl.trans(grad_vm), input_precision=PREC)
    c = tl.load(c_ptr + z * n + slots, mask=slot_ok, other=0.0)
    grad_l = phi * (grad_phi - c[None, :])

    tl.store(dk_ptr + z * N * K + rows[:, None] * K + cols_k[None, :],
             grad_k.to(dk_ptr.dtype.element_ty), mask=in_range[:, None] & (cols_k[None, :] < K))
    tl.store(dv_ptr + z * N * V + rows[:, None] * V + cols_v[None, :],
             grad_v.to(dv_ptr.dtype.element_ty), mask=in_range[:, None] & (cols_v[None, :] < V))
    tl.store(dl_ptr + z * N * n + rows[:, None] * n + slots[None, :],
             grad_l.to(dl_ptr.dtype.element_ty), mask=in_range[:, None] & slot_ok[None, :])
