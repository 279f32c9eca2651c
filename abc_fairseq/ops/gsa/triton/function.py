"""Causal gated slot attention (GSA) on the causal ABC kernels.

GSA's weight of row i's write in the memory row t reads, (1 - a_i) prod_{i<m<=t} a_m, is
exp(l_i - g_t) for l_i = log(1 - a_i) - G_i and g_t = -G_t (G the cumulative log gate): the form
ABC's kernels take, with g given instead of ABC's prefix logcumsumexp (``gated_normalisers``; g is
non-decreasing and l_i <= g_i, the two facts the kernels' factors and their steep-chunk path rest
on). The backward runs ABC's kernels without the prefix chain (``backward_kernels(prefix=False)``)
and chains the gradients of l and g to the log gates here:
    d log_gate_m = -dl_m a_m / (1 - a_m) - sum_{i>=m} (dl_i + dg_i)
No PyTorch op around the kernels scans the N rows one by one: the gate sums restart at every
chunk (``gated_normalisers``) and the sum over later rows runs in two levels (``_gate_grads``).
"""

from functools import partial
from typing import Optional, Tuple, Union

import torch

from ...causal.triton.function import backward_kernels, flatten_heads, forward_kernels, measured_chunk
from ...causal.triton.geometry import ChunkNormalisers, gated_normalisers
from ..gates import gate_grads
from ..state import GSAState

SEGMENT = 64  # the rows ``gate_grads`` sums within before summing across segments


def _gate_grads(log_gates, dl, dg):
    """``gates.gate_grads`` over rows padded to a multiple of ``SEGMENT``: its sum over later rows
    then runs in segments of SEGMENT rows and across N / SEGMENT segment totals, never over the
    N rows one by one (a length with no power-of-two divisor up to 64 would cut it into single
    rows). Padding rows add nothing: their dl, dg and log gates are 0."""
    N = dl.shape[1]
    extra = -N % SEGMENT
    if extra:
        dl, dg, log_gates = (torch.nn.functional.pad(x, (0, 0, 0, extra)) for x in (dl, dg, log_gates))
    return gate_grads(log_gates, dl, dg)[:, :N]


def _torch_forward(ctx, carry, keep, q, k, v, log_gates):
    """The Function's forward on the PyTorch path (``ctx.guard.torch_op``, ``chunk_causal_gsa``),
    on the Function's own [Z, N, *] inputs viewed as [Z, 1, N, *]."""
    d = q.shape[-1]
    state = None if carry is None else GSAState(carry[:, None, :, :d], carry[:, None, :, d:])
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
        logits, norm = gated_normalisers(log_gates, chunk)
        out, final, mem, norm = forward_kernels(q, k, v, logits, norm, keep, carry, scale, keep_scale, chunk,
                                                state_dtype)
        ctx.save_for_backward(q, k, v, log_gates, logits, keep, carry, *norm, mem)
        ctx.scale, ctx.keep_scale, ctx.chunk, ctx.guard = scale, keep_scale, chunk, guard
        ctx.mark_non_differentiable(final)
        ctx.set_materialize_grads(False)  # no zeros written for the state outputs' gradients
        return out, final

    @staticmethod
    def backward(ctx, grad_out, _grad_final):
        q, k, v, log_gates, logits, keep, carry, *norm, mem = ctx.saved_tensors
        grad_out = torch.zeros_like(v) if grad_out is None else grad_out.contiguous()

        def kernels():
            dq, dk, dv, dl, dg = backward_kernels(q, k, v, logits, ChunkNormalisers(*norm), keep, mem, grad_out,
                                                  ctx.scale, ctx.keep_scale, ctx.chunk, prefix=False)
            return dq, dk, dv, _gate_grads(log_gates, dl.float(), dg.float()).to(log_gates.dtype)

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
    chunk = measured_chunk(*flat[:3], n, keep, carry, lambda c: gated_normalisers(flat[3], c), float(scale),
                           float(keep_scale), chunk, prefix=False, state_dtype=state_dtype)
    out, final = TritonCausalGSA.apply(*flat, keep, carry, float(scale), float(keep_scale), chunk, guard,
                                       state_dtype)
    out = out.reshape(B, H, N, dv)
    if not return_state:
        return out
    final = final.reshape(B, H, n, d + dv)
    return out, GSAState(final[..., :d].contiguous(), final[..., d:].contiguous())
