"""One fused decoding step of causal ABC (or GSA): update the bounded memory with one token and read it.

Per sequence z and slot j (the state is stored normalised, see ``ops.state.ABCState``):
    g'_j  = logaddexp(g_j, l_j)
    K~'_j = exp(g_j - g'_j) K~_j + exp(l_j - g'_j) k,    V~'_j likewise with v
    out   = V~'^T softmax(scale K~' q)
GSA (``gsa_step_kernel``) has no normaliser: with the log gate g_j, K~'_j = exp(g_j) K~_j - expm1(g_j) k.
One program per sequence holds its n x d memories in registers: a step is one launch whatever the
batch, instead of a dozen small PyTorch kernels per layer.
"""

import torch
import triton
import triton.language as tl

from ...triton.layout import head_columns, sequence_program
from ...triton.sizes import step_tiles
from ...utils import unit_last_stride
from ..state import ABCState
from .common import expm1


@triton.jit
def _write_and_read(
    keep, write, q_ptr, k_ptr, v_ptr, km_ptr, vm_ptr, out_ptr, km_out_ptr, vm_out_ptr,
    z, b, h, n, scale, sq_b, sq_h, sk_b, sk_h, sv_b, sv_h,
    K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr, BS: tl.constexpr,
):
    """What both step kernels share once their factors are known: memory_j' = keep_j memory_j +
    write_j token for keys and values (keep, write [BS] fp32), the read of the new memories by the
    query, and the stores of the output and the new memories."""
    slots = tl.arange(0, BS)
    cols_k, cols_v = head_columns(BK, BV)
    slot_ok = slots < n
    key_tile = slot_ok[:, None] & (cols_k[None, :] < K)
    value_tile = slot_ok[:, None] & (cols_v[None, :] < V)
    key = tl.load(k_ptr + b * sk_b + h * sk_h + cols_k, mask=cols_k < K, other=0.0).to(tl.float32)
    value = tl.load(v_ptr + b * sv_b + h * sv_h + cols_v, mask=cols_v < V, other=0.0).to(tl.float32)
    key_memory = tl.load(km_ptr + z * n * K + slots[:, None] * K + cols_k[None, :], mask=key_tile, other=0.0)
    value_memory = tl.load(vm_ptr + z * n * V + slots[:, None] * V + cols_v[None, :], mask=value_tile,
                           other=0.0)
    key_memory = keep[:, None] * key_memory + write[:, None] * key[None, :]
    value_memory = keep[:, None] * value_memory + write[:, None] * value[None, :]

    query = tl.load(q_ptr + b * sq_b + h * sq_h + cols_k, mask=cols_k < K, other=0.0).to(tl.float32)
    scores = tl.sum(key_memory * query[None, :], 1) * scale
    scores = tl.where(slot_ok, scores, float("-inf"))
    probs = tl.exp(scores - tl.max(scores, 0))
    probs = probs / tl.sum(probs, 0)
    out = tl.sum(probs[:, None] * value_memory, 0)

    tl.store(out_ptr + z * V + cols_v, out.to(out_ptr.dtype.element_ty), mask=cols_v < V)
    tl.store(km_out_ptr + z * n * K + slots[:, None] * K + cols_k[None, :], key_memory, mask=key_tile)
    tl.store(vm_out_ptr + z * n * V + slots[:, None] * V + cols_v[None, :], value_memory, mask=value_tile)


@triton.jit
def causal_step_kernel(
    q_ptr, k_ptr, v_ptr, l_ptr, km_ptr, vm_ptr, g_ptr, out_ptr, km_out_ptr, vm_out_ptr, g_out_ptr,
    H, n, scale,
    sq_b, sq_h, sk_b, sk_h, sv_b, sv_h, sl_b, sl_h,
    K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    BS: tl.constexpr,
):
    """Grid (B * H,). q, k, v, logits: one token per sequence, unit last stride; the state
    (km [Z, n, K], vm [Z, n, V], g [Z, n]) and its successor are contiguous fp32; out [Z, V]."""
    z, b, h = sequence_program(H)
    slots = tl.arange(0, BS)
    slot_ok = slots < n

    logits = tl.load(l_ptr + b * sl_b + h * sl_h + slots, mask=slot_ok, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + z * n + slots, mask=slot_ok, other=0.0)
    g_new = tl.maximum(g, logits) + tl.log(1.0 + tl.exp(-tl.abs(g - logits)))
    g_new = tl.where(g == float("-inf"), logits, g_new)  # first token: nothing to keep
    keep = tl.exp(g - g_new)
    write = tl.exp(logits - g_new)

    _write_and_read(keep, write, q_ptr, k_ptr, v_ptr, km_ptr, vm_ptr, out_ptr, km_out_ptr, vm_out_ptr,
                    z, b, h, n, scale, sq_b, sq_h, sk_b, sk_h, sv_b, sv_h, K, V, BK, BV, BS)
    tl.store(g_out_ptr + z * n + slots, g_new, mask=slot_ok)


@triton.jit
def gsa_step_kernel(
    q_ptr, k_ptr, v_ptr, a_ptr, km_ptr, vm_ptr, out_ptr, km_out_ptr, vm_out_ptr,
    H, n, scale,
    sq_b, sq_h, sk_b, sk_h, sv_b, sv_h, sa_b, sa_h,
    K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    BS: tl.constexpr,
):
    """GSA's step, ``causal_step_kernel`` with the log gates g in place of the logits and no
    normaliser: keep = exp(g), write = -expm1(g). Grid (B * H,); the memories as there (the
    successor may be the same tensors: a program reads its own rows before it writes them)."""
    z, b, h = sequence_program(H)
    slots = tl.arange(0, BS)
    slot_ok = slots < n

    gates = tl.load(a_ptr + b * sa_b + h * sa_h + slots, mask=slot_ok, other=0.0).to(tl.float32)
    keep = tl.exp(gates)
    write = -expm1(gates)  # 1 - exp(g) would lose every digit near g = 0 (gates near 1)

    _write_and_read(keep, write, q_ptr, k_ptr, v_ptr, km_ptr, vm_ptr, out_ptr, km_out_ptr, vm_out_ptr,
                    z, b, h, n, scale, sq_b, sq_h, sk_b, sk_h, sv_b, sv_h, K, V, BK, BV, BS)


def _fp32_contiguous(field: torch.Tensor) -> torch.Tensor:
    return field.float().contiguous()


def _step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, control: torch.Tensor, state, scale: float,
          in_place: bool, gated: bool):
    """The launch shared by ABC (state: key, value memories and the log normaliser) and GSA
    (``gated``: the two memories). Returns (out, the next state, of the state's own type)."""
    B, H, _, K = q.shape
    n, V = control.shape[-1], v.shape[-1]
    fields = tuple(map(_fp32_contiguous, state))
    q, k, v, control = unit_last_stride(q), unit_last_stride(k), unit_last_stride(v), unit_last_stride(control)
    out = q.new_empty(B, H, 1, V)
    following = fields if in_place else tuple(map(torch.empty_like, fields))
    kernel = gsa_step_kernel if gated else causal_step_kernel
    kernel[(B * H,)](
        q, k, v, control, *fields[:2], *fields[2:], out, *following,
        H, n, float(scale), *q.stride()[:2], *k.stride()[:2], *v.stride()[:2], *control.stride()[:2],
        **step_tiles(K, V, n))
    if not in_place:
        return out, type(state)(*following)
    for field, advanced in zip(state, following):
        if field.data_ptr() != advanced.data_ptr():  # a copy was advanced: write it back
            field.copy_(advanced)
    return out, state


def causal_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, phi_logits: torch.Tensor,
                state: ABCState, scale: float, in_place: bool = False):
    """q, k: [B, H, 1, d]; v: [B, H, 1, dv]; phi_logits: [B, H, 1, n]; state in fp32.
    Returns (out [B, H, 1, dv] in q's dtype, the next ABCState). ``in_place``: the kernel writes
    the next state over ``state`` (each program reads its own sequence's rows before it writes
    them, so nothing races) and returns it; a state that is not contiguous fp32 is advanced in a
    contiguous copy that is then copied back, so the returned tensors are ``state``'s either way."""
    return _step(q, k, v, phi_logits, state, scale, in_place, gated=False)


def gsa_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_gates: torch.Tensor, state, scale: float,
             in_place: bool = False):
    """GSA's step on the same kernel: log_gates [B, H, 1, n] (<= 0); state a GSAState (key and value
    memories) in fp32. Returns (out [B, H, 1, dv] in q's dtype, the next GSAState); ``in_place`` as
    in ``causal_step``."""
    return _step(q, k, v, log_gates, state, scale, in_place, gated=True)
