"""Causal gated slot attention (GSA) on the causal ABC kernels, switched to GSA by ``GATED``.

GSA's weight of row i's write in the memory row t reads, (1 - a_i) prod_{i<m<=t} a_m, is
exp(l_i - g_t) for l_i = log(1 - a_i) - G_i and g_t = -G_t (G the cumulative log gate): the form
ABC's kernels take, with g the gates' sum instead of ABC's prefix logsumexp. Every kernel builds
l and g from the log gates it loads, chunk by chunk, each chunk in its own frame
(``causal.triton.common.chunk_gates``): nothing of size [N, n] is computed before the kernels or
kept for the backward, and no PyTorch op runs between the launches. The backward runs ABC's
kernels without the prefix chain, then ``gates.gate_grads_kernel`` chains the gradients of l and
g to the log gates. Launches: 3 forward, 4 backward.
"""

from functools import partial
from typing import Optional, Tuple, Union

import torch

from ...causal.triton.function import backward_kernels, flatten_heads, forward_kernels, measured_chunk
from ...causal.triton.geometry import ChunkNormalisers
from ...triton.sizes import causal_warps, cdiv, pad
from ...utils import differentiable
from ..state import GSAState
from .gates import GATE_PROGRAMS, LATER_CHUNKS, gate_grads_kernel


def _gate_grads(log_gates, dl_parts, d_norm, totals, chunk: int):
    """The log gates' gradient [Z, N, n] in their dtype (``gates``), one launch."""
    Z, N, n = log_gates.shape
    d_gates = torch.empty_like(log_gates)
    nc = totals.shape[2]
    span = 1 << (cdiv(nc, GATE_PROGRAMS) - 1).bit_length()  # a power of two: few compiled variants
    gate_grads_kernel[(Z, cdiv(nc, span))](log_gates, dl_parts, d_norm, totals, d_gates, N, n, nc, C=chunk,
                                           BS=pad(n), CB=LATER_CHUNKS, SPAN=span,
                                           num_warps=causal_warps(n))  # 4 warps spill at 64 wide
    return d_gates


def _torch_forward(ctx, carry, keep, q, k, v, log_gates):
    """The Function's forward on the PyTorch path (``ctx.guard.torch_op``, ``chunk_causal_gsa``),
    on the Function's own [Z, N, *] inputs viewed as [Z, 1, N, *]."""
    (Z, _, d), n, dv = q.shape, log_gates.shape[-1], v.shape[-1]
    if carry is None:  # the kernels started from zeros; the PyTorch path takes them as tensors
        state = GSAState.empty(Z, 1, n, d, dv, device=q.device, dtype=torch.float32)
    else:
        state = GSAState(carry[:, None, :, :d], carry[:, None, :, d:])
    mask = None if keep is None else keep.bool()[:, None]
    out = ctx.guard.torch_op(q[:, None], k[:, None], v[:, None], log_gates[:, None], ctx.scale, None, None, None,
                             state, False, mask, ctx.keep_scale)
    return out[:, 0]


class TritonCausalGSA(torch.autograd.Function):
    """q, k: [Z, N, d]; v: [Z, N, dv]; log_gates: [Z, N, n]; keep: int8 [Z, N, n] or None (no
    dropout); carry [Z, n, d + dv]: the fp32 memories before row 0 (a constant; None: zeros); guard: the
    ``ops.backend.KernelGuard`` running the backward (None: failures raise); state_dtype: the
    dtype of the chunk memories kept for the backward. Returns out
    [Z, N, dv] in q's dtype and the memories after the last row [Z, n, d + dv] fp32."""

    @staticmethod
    def forward(ctx, q, k, v, log_gates, keep, carry, scale, keep_scale, chunk, guard, state_dtype):
        out, final, mem, norm = forward_kernels(q, k, v, log_gates, keep, carry, None, scale, keep_scale, chunk,
                                                state_dtype, gated=True)
        ctx.save_for_backward(q, k, v, log_gates, keep, carry, norm.e_end, norm.decay, mem)
        ctx.scale, ctx.keep_scale, ctx.chunk, ctx.guard = scale, keep_scale, chunk, guard
        ctx.mark_non_differentiable(final)
        ctx.set_materialize_grads(False)  # no zeros written for the state outputs' gradients
        return out, final

    @staticmethod
    def backward(ctx, grad_out, _grad_final):
        q, k, v, log_gates, keep, carry, e_end, decay, mem = ctx.saved_tensors
        grad_out = torch.zeros_like(v) if grad_out is None else grad_out.contiguous()

        def kernels():
            dq, dk, dv, dl_parts, d_norm, totals = backward_kernels(
                q, k, v, log_gates, ChunkNormalisers(None, e_end, decay), keep, mem, grad_out, ctx.scale,
                ctx.keep_scale, ctx.chunk, gated=True)
            return dq, dk, dv, _gate_grads(log_gates, dl_parts, d_norm, totals, ctx.chunk)

        if ctx.guard is None:
            grads = kernels()
        else:
            grads = ctx.guard.backward(kernels, partial(_torch_forward, ctx, carry, keep), (q, k, v, log_gates),
                                       tuple(ctx.needs_input_grad[:4]), (grad_out,))
        return (*grads, None, None, None, None, None, None, None)


def triton_causal_gsa(q, k, v, log_gates, scale: float, chunk: int, initial_state: Optional[GSAState],
                      return_state: bool, keep: Optional[torch.Tensor], keep_scale: float,
                      guard=None, *, state_dtype: torch.dtype
                      ) -> Union[torch.Tensor, Tuple[torch.Tensor, GSAState]]:
    """``causal_gsa`` on the kernels. q, k: [B, H, N, d]; v: [B, H, N, dv]; log_gates: [B, H, N, n];
    keep: bool [B, H, N, n] (True = kept) or None; keep_scale = 1 / (1 - p); initial_state: already
    checked against the inputs. ``guard``: the ``ops.backend.KernelGuard`` that lets a backward
    failing to compile or launch recompute on the PyTorch path (None: failures raise).
    ``state_dtype``: the chunk memories kept for the backward (checked by ``gsa.op``)."""
    B, H, N, d = q.shape
    n, dv = log_gates.shape[-1], v.shape[-1]
    flat, keep, carry = flatten_heads(q, k, v, log_gates, keep, initial_state)
    gates = flat[3]
    chunk = measured_chunk(*flat, keep, carry, None, float(scale), float(keep_scale), chunk, state_dtype,
                           gated=True, finish=lambda grads, c: _gate_grads(gates, *grads[3:], c))
    if differentiable(*flat):
        out, final = TritonCausalGSA.apply(*flat, keep, carry, float(scale), float(keep_scale), chunk, guard,
                                           state_dtype)
    else:  # scoring, validation: the forward launches without autograd's Function
        out, final, _, _ = forward_kernels(*flat, keep, carry, None, float(scale), float(keep_scale), chunk,
                                           state_dtype, gated=True)
    out = out.reshape(B, H, N, dv)
    if not return_state:
        return out
    final = final.reshape(B, H, n, d + dv)
    return out, GSAState(final[..., :d].contiguous(), final[..., d:].contiguous())
