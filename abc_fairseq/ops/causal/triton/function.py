"""The autograd Function running the causal ABC kernels, the launches it shares with GSA's, and
the op's entry point for them.

Launches: forward = 3 kernels (chunk sums and totals, scan of the memories and normalisers,
output); backward = 3 kernels (rows, reverse scan, columns) and, for ABC, one PyTorch add of dl's
two parts (GSA's gate kernel reads them apart: ``gsa.triton``). Saved for the backward: the
inputs, the chunk normalisers [Z, N / C, n] and the memory entering each chunk
[Z, N / C, n, d + dv] in the chunk state's dtype (the ops' ``state_dtype`` argument, fp32 by
default): nothing of size [N, n].

The normalisers are found inside the kernels, chunk by chunk (``geometry``): ABC's prefix
logsumexp and GSA's gate sums alike, so no PyTorch op runs over the sequence. (A PyTorch
``torch.logcumsumexp`` before the kernels, the H100 run's way, was removed once the H200 measured
it slower at every size: docs/gpu.md.)
"""

from functools import partial
from typing import Callable, Optional, Tuple, Union

import torch

from ...triton.sizes import (
    SCAN_BLOCK,
    SCAN_WARPS,
    causal_tiles,
    cdiv,
    chunk_candidates,
    forced_chunk,
    scan_group,
    table_width,
)
from ...triton.tuning import size_class, tuned_chunk
from ...utils import differentiable
from ..chunk_geometry import SAFE_EXPONENT
from ..state import ABCState
from .backward import columns_kernel, rows_kernel
from .forward import chunk_sums_kernel, output_kernel
from .geometry import ChunkNormalisers
from .scan import chunk_scan_kernel


def _sizes(q, v, control, chunk):
    Z, N, d = q.shape
    n, dv = control.shape[-1], v.shape[-1]
    return Z, N, n, d, dv, cdiv(N, chunk), causal_tiles(chunk, n, d, dv, q.dtype)


def _scan(mem, decay, carry, final, reverse, totals=None, g_before=None, e_prev=None, e_end=None):
    """The chunk scan over ``mem`` in place, from the memory ``carry`` (None: zeros); with
    ``totals`` (ABC's chunk totals, forward) it also writes the normalisers e_prev, e_end and decay
    from them and ``g_before`` (None with ``carry`` None: an empty prefix)."""
    Z, nc, n, width = mem.shape
    grid = (Z, cdiv(n * width, SCAN_BLOCK))
    normalise = totals is not None
    chunk_scan_kernel[grid](mem, decay, carry if carry is not None else mem,
                            final if final is not None else mem,
                            *((totals, decay if g_before is None else g_before, e_prev, e_end) if normalise
                              else (decay,) * 4),
                            nc, n, width, BLOCK=SCAN_BLOCK, GROUP=scan_group(normalise), REVERSE=reverse,
                            HAS_CARRY=carry is not None, HAS_FINAL=final is not None, NORMALISE=normalise,
                            num_warps=SCAN_WARPS)


def forward_kernels(q, k, v, control, keep, carry, g_before, scale, keep_scale, chunk, state_dtype: torch.dtype,
                    *, gated: bool):
    """The forward launches: (out [Z, N, dv], the memory after the last row [Z, n, d + dv] fp32, the
    memory entering each chunk [Z, nc, n, d + dv] in ``state_dtype``, the ChunkNormalisers).
    ``control``: ABC's logits, or with ``gated`` GSA's log gates [Z, N, n]. ``carry``: the memory
    before row 0 [Z, n, d + dv] fp32, or None for none (zeros); ``g_before`` [Z, n] fp32: ABC's
    normaliser before row 0 (None: an empty prefix; unused by GSA)."""
    Z, N, n, d, dv, nc, tiles = _sizes(q, v, control, chunk)
    mem = q.new_empty((Z, nc, n, d + dv), dtype=state_dtype)
    final = q.new_empty((Z, n, d + dv), dtype=torch.float32)
    e_end, decay = (q.new_empty((Z, nc, n), dtype=torch.float32) for _ in range(2))
    if gated:  # the sums stored at e_end, the decays written beside them
        chunk_sums_kernel[(Z, nc)](k, v, control, e_end, decay, mem, N, n, d, dv, nc, GATED=True, **tiles)
        _scan(mem, decay, carry, final, reverse=False)
        e_prev = None
    else:  # the sums stored at their chunk's total, which the scan turns into e_prev, e_end, decay
        totals, e_prev = (q.new_empty((Z, nc, n), dtype=torch.float32) for _ in range(2))
        chunk_sums_kernel[(Z, nc)](k, v, control, totals, decay, mem, N, n, d, dv, nc, GATED=False, **tiles)
        _scan(mem, decay, carry, final, False, totals, g_before, e_prev, e_end)
    out = torch.empty_like(v)
    dropout = keep is not None
    output_kernel[(Z, nc)](q, k, v, control, e_end if gated else e_prev, mem, keep if dropout else q, out, scale,
                           keep_scale, N, n, d, dv, nc, SAFE=SAFE_EXPONENT, DROPOUT=dropout, GATED=gated, **tiles)
    return out, final, mem, ChunkNormalisers(e_prev, e_end, decay)


def backward_kernels(q, k, v, control, norm: ChunkNormalisers, keep, mem, grad_out, scale, keep_scale, chunk,
                     *, gated: bool):
    """The backward launches: (dq, dk, dv, dl [2, Z, N, n] fp32 (its key and value parts: dl is
    their sum), dg [Z, N, n] fp32, totals). dg is the gradient of the normalisers g_t where the
    reads take them (exp(-g_t)). ABC (g = the prefix logcumsumexp of the logits): dl includes
    what reaches the logits through g, and totals is None. ``gated`` (GSA, g the gates' sum): dl
    is the gradient of W = exp(l - g) alone, and totals [2, Z, nc, n] fp32 holds each chunk's sums
    of (dl [0] + dg) and of dl [1], for the gate kernel that chains them to the log gates."""
    Z, N, n, d, dv, nc, tiles = _sizes(q, v, control, chunk)
    dq, dk, dv_ = (torch.empty_like(x) for x in (q, k, v))
    # the row terms dS, P', dg: each side of the columns kernel reads one of dS and P' alone and
    # writes its part of dl over it, so dl's parts are the first two rows of this one buffer
    row_terms = control.new_empty((3, *control.shape), dtype=torch.float32)
    d_scores, p_read, d_norm = row_terms.unbind(0)
    dl_parts = row_terms[:2]  # [2, Z, N, n]: the key and value sides' parts once the columns ran
    totals = control.new_empty((2, Z, nc, n), dtype=torch.float32) if gated else None
    # fp32 whatever the chunk state's dtype: sums of gradients, of any range
    rev = q.new_empty((Z, nc, n, d + dv + 1), dtype=torch.float32)
    dropout = keep is not None
    e_prev = norm.e_end if gated else norm.e_prev  # GSA's e_prev is 0: the kernels read nothing
    rows_kernel[(Z, nc)](q, k, v, control, e_prev, mem, keep if dropout else q, grad_out,
                         dq, d_scores, p_read, d_norm, rev, scale, keep_scale,
                         N, n, d, dv, nc, SAFE=SAFE_EXPONENT, DROPOUT=dropout, GATED=gated, **tiles)
    _scan(rev, norm.decay, None, None, reverse=True)
    columns_kernel[(Z, nc, 2)](q, k, v, control, e_prev, norm.e_end, grad_out, d_scores, p_read, d_norm, rev,
                               dk, dv_, dl_parts, totals if gated else d_norm, scale, N, n, d, dv, nc,
                               SAFE=SAFE_EXPONENT, GATED=gated, **tiles)
    return dq, dk, dv_, dl_parts, d_norm, totals


def _torch_forward(ctx, carry, g_before, keep, q, k, v, logits):
    """The Function's forward on the PyTorch path (``ctx.guard.torch_op``, ``chunk_causal_abc``),
    on the Function's own [Z, N, *] inputs viewed as [Z, 1, N, *]."""
    d = q.shape[-1]
    state = None if carry is None else ABCState(carry[:, None, :, :d], carry[:, None, :, d:], g_before[:, None])
    mask = None if keep is None else keep.bool()[:, None]
    out = ctx.guard.torch_op(q[:, None], k[:, None], v[:, None], logits[:, None], ctx.scale, ctx.chunk, None, None,
                             state, False, mask, ctx.keep_scale)
    return out[:, 0]


class TritonCausalABC(torch.autograd.Function):
    """q, k: [Z, N, d]; v: [Z, N, dv]; logits: [Z, N, n]; keep: int8 [Z, N, n] or None (no
    dropout); carry [Z, n, d + dv] and g_before [Z, n]: the fp32 memory before row 0 (a constant),
    both None for none; guard: the
    ``ops.backend.KernelGuard`` running the backward (None: failures raise); state_dtype: the
    dtype of the chunk memories kept for the backward.
    Returns out [Z, N, dv] in q's dtype, the memory after the last row and its normaliser (a
    view of the saved e_end: copy it before changing it)."""

    @staticmethod
    def forward(ctx, q, k, v, logits, keep, carry, g_before, scale, keep_scale, chunk, guard, state_dtype):
        out, final, mem, norm = forward_kernels(q, k, v, logits, keep, carry, g_before, scale, keep_scale, chunk,
                                                state_dtype, gated=False)
        ctx.save_for_backward(q, k, v, logits, keep, carry, g_before, *norm, mem)
        ctx.scale, ctx.keep_scale, ctx.chunk, ctx.guard = scale, keep_scale, chunk, guard
        g_last = norm.e_end[:, -1]  # the last chunk's e_end is g at row N - 1 (no copy: no launch)
        ctx.mark_non_differentiable(final, g_last)
        ctx.set_materialize_grads(False)  # no zeros written for the state outputs' gradients
        return out, final, g_last

    @staticmethod
    def backward(ctx, grad_out, _grad_final, _grad_g):
        q, k, v, logits, keep, carry, g_before, *norm, mem = ctx.saved_tensors
        grad_out = torch.zeros_like(v) if grad_out is None else grad_out.contiguous()

        def kernels():
            dq, dk, dv, dl_parts, _, _ = backward_kernels(q, k, v, logits, ChunkNormalisers(*norm), keep, mem,
                                                          grad_out, ctx.scale, ctx.keep_scale, ctx.chunk, gated=False)
            return dq, dk, dv, torch.add(dl_parts[0], dl_parts[1], out=torch.empty_like(logits))  # cast included

        if ctx.guard is None:
            grads = kernels()
        else:
            grads = ctx.guard.backward(kernels, partial(_torch_forward, ctx, carry, g_before, keep), (q, k, v, logits),
                                       tuple(ctx.needs_input_grad[:4]), (grad_out,))
        return (*grads, None, None, None, None, None, None, None, None)


def measured_chunk(q, k, v, control, keep, carry, g_before, scale: float, keep_scale: float, chunk: int,
                   state_dtype: torch.dtype, *, gated: bool,
                   finish: Optional[Callable[[tuple, int], object]] = None) -> int:
    """The chunk the kernels run at (``tuning``): the fastest candidate for this size class, timed
    once as every launch of a forward and backward on these inputs. Arguments as
    ``forward_kernels`` takes them (``gated``: GSA); ``finish(grads, chunk)``: what the op launches
    after ``backward_kernels`` on its outputs (GSA: the gate kernel), timed with them."""
    Z, N, d = q.shape
    n, dv = control.shape[-1], v.shape[-1]
    forced = forced_chunk(table_width(n, d, dv))
    if forced is not None:
        return forced

    def trial(c: int) -> None:
        with torch.no_grad():
            out, _, mem, norm = forward_kernels(q, k, v, control, keep, carry, g_before, scale, keep_scale, c,
                                                state_dtype, gated=gated)
            grads = backward_kernels(q, k, v, control, norm, keep, mem, out, scale, keep_scale, c, gated=gated)
            if finish is not None:
                finish(grads, c)

    widths = causal_tiles(chunk, n, d, dv, q.dtype)
    key = size_class("causal_gsa" if gated else "causal_abc", q.device, (widths["BS"], widths["BK"], widths["BV"]),
                     q.dtype, N)
    return tuned_chunk(chunk_candidates(chunk, n, d, dv, q.dtype, q.device), key, q.device, trial)


def flatten_heads(q, k, v, control, keep: Optional[torch.Tensor], memories: Optional[Tuple[torch.Tensor, ...]]):
    """The kernels' layout: q, k, v, control [B, H, N, *] -> contiguous [B * H, N, *]; keep bool
    [B, H, N, n] -> int8 [B * H, N, n] (or None); memories (key [B, H, n, d], value [B, H, n, dv])
    -> the fp32 carry [B * H, n, d + dv], None when None."""
    B, H, N, d = q.shape
    n, dv, Z = control.shape[-1], v.shape[-1], B * H
    flat = [x.reshape(Z, N, x.shape[-1]).contiguous() for x in (q, k, v, control)]
    if keep is not None:
        keep = keep.reshape(Z, N, n).to(torch.int8).contiguous()
    if memories is None:
        carry = None  # the kernels start from zeros: no launch to write them
    else:
        carry = torch.cat([t.detach().float() for t in memories], dim=-1).reshape(Z, n, d + dv).contiguous()
    return flat, keep, carry


def triton_causal_abc(q, k, v, phi_logits, scale: float, chunk: int,
                      initial_state: Optional[ABCState], return_state: bool,
                      keep: Optional[torch.Tensor], keep_scale: float, guard=None, *, state_dtype: torch.dtype
                      ) -> Union[torch.Tensor, Tuple[torch.Tensor, ABCState]]:
    """``causal_abc`` on the kernels. q, k: [B, H, N, d]; v: [B, H, N, dv]; phi_logits:
    [B, H, N, n]; keep: bool [B, H, N, n] (True = kept) or None; keep_scale = 1 / (1 - p);
    initial_state: already checked against the inputs (``causal.op``). ``guard``: the
    ``ops.backend.KernelGuard`` that lets a backward failing to compile or launch recompute on the
    PyTorch path (None: failures raise). ``state_dtype``: the chunk memories kept for the backward
    (checked by ``causal.op``)."""
    B, H, N, d = q.shape
    n, dv = phi_logits.shape[-1], v.shape[-1]
    Z = B * H
    flat, keep, carry = flatten_heads(q, k, v, phi_logits, keep, None if initial_state is None else initial_state[:2])
    if initial_state is None:
        g_before = None  # an empty prefix: the kernels start from -inf
    else:
        g_before = initial_state.log_normalizer.detach().float().reshape(Z, n).contiguous()
    chunk = measured_chunk(*flat, keep, carry, g_before, float(scale), float(keep_scale), chunk, state_dtype,
                           gated=False)
    if differentiable(*flat):
        out, final, g_last = TritonCausalABC.apply(*flat, keep, carry, g_before, float(scale), float(keep_scale),
                                                   chunk, guard, state_dtype)
    else:  # scoring, validation: the forward launches without autograd's Function
        out, final, _, norm = forward_kernels(*flat, keep, carry, g_before, float(scale), float(keep_scale), chunk,
                                              state_dtype, gated=False)
        g_last = norm.e_end[:, -1]
    out = out.reshape(B, H, N, dv)
    if not return_state:
        return out
    final = final.reshape(B, H, n, d + dv)
    return out, ABCState(final[..., :d].contiguous(), final[..., d:].contiguous(),
                         g_last.reshape(B, H, n).clone())
