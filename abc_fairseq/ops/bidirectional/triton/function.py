"""Bidirectional ABC on Triton: the memory write and read as autograd Functions.

``memory_write(k, v, phi_logits, padding)`` -> (K~, V~) and ``memory_read(q, K~, V~, ...)`` match
``abc_memory`` / ``abc_read`` (same shapes, fp32 memories, output in q's dtype),
with attention dropout on the slot probabilities. Inputs are read in place through their strides
(fairseq's [T, B, C] projections viewed as [B, H, T, d] need no copy) as long as the last dimension
is contiguous.
"""

from typing import Optional, Tuple

import torch

from ...triton.sizes import cdiv, launch_rows, pad, precision
from ...utils import differentiable, unit_last_stride
from .memory import memory_write_bwd, memory_write_fwd
from .read import memory_read_bwd, memory_read_fwd

# Rows per program, largest first: a device whose blocks lack the shared memory gets the next.
ROWS = (64, 32, 16)
BACKWARD_ROWS = (32, 16)

class MemoryWrite(torch.autograd.Function):
    """(k [B, H, N, d], v [B, H, N, dv], logits [B, H, N, n], padding [B, N] uint8 or None)
    -> (K~ [B, H, n, d], V~ [B, H, n, dv]) in fp32."""

    @staticmethod
    def forward(ctx, k, v, logits, padding, guard):
        k, v, logits = (unit_last_stride(x) for x in (k, v, logits))
        B, H, N, K = k.shape
        n, V = logits.shape[-1], v.shape[-1]
        key_memory = k.new_empty(B, H, n, K, dtype=torch.float32)
        value_memory = k.new_empty(B, H, n, V, dtype=torch.float32)
        lse = k.new_empty(B, H, n, dtype=torch.float32)
        block_s = pad(n, 64)
        launch_rows(memory_write_fwd, lambda bt: (B * H, cdiv(n, block_s)),
                    (k, v, logits, padding if padding is not None else k, key_memory, value_memory, lse,
                     H, N, n, *k.stride()[:3], *v.stride()[:3], *logits.stride()[:3],
                     padding.stride(0) if padding is not None else 0), ROWS, k.device,
                    K=K, V=V, BK=pad(K, 256), BV=pad(V, 256), BS=block_s, HAS_PAD=padding is not None,
                    PREC=precision(k.dtype))
        ctx.save_for_backward(k, v, logits, padding, key_memory, value_memory, lse)
        ctx.guard = guard
        return key_memory, value_memory

    @staticmethod
    def backward(ctx, grad_km, grad_vm):
        k, v, logits, padding, key_memory, value_memory, lse = ctx.saved_tensors

        def kernels():
            return _memory_write_backward(k, v, logits, padding, key_memory, value_memory, lse, grad_km, grad_vm)

        if ctx.guard is None:
            return (*kernels(), None, None)

        def torch_forward(k, v, logits):  # ``parallel_abc_memory``
            return ctx.guard.torch_op(k, v, logits, None if padding is None else padding.bool(), False)

        grads = ctx.guard.backward(kernels, torch_forward, (k, v, logits), tuple(ctx.needs_input_grad[:3]),
                                   (grad_km, grad_vm))
        return (*grads, None, None)


def _memory_write_backward(k, v, logits, padding, key_memory, value_memory, lse, grad_km, grad_vm):
    """(dk, dv, dlogits) of ``MemoryWrite`` on the kernels."""
    B, H, N, K = k.shape
    n, V = logits.shape[-1], v.shape[-1]
    grad_km = torch.zeros_like(key_memory) if grad_km is None else grad_km.float().contiguous()
    grad_vm = torch.zeros_like(value_memory) if grad_vm is None else grad_vm.float().contiguous()
    c = (grad_km * key_memory).sum(-1) + (grad_vm * value_memory).sum(-1)
    grad_k = torch.empty(B, H, N, K, dtype=k.dtype, device=k.device)
    grad_v = torch.empty(B, H, N, V, dtype=v.dtype, device=v.device)
    grad_l = torch.empty(B, H, N, n, dtype=logits.dtype, device=logits.device)
    launch_rows(memory_write_bwd, lambda bt: (B * H, cdiv(N, bt)),
                (k, v, logits, padding if padding is not None else k, lse, grad_km, grad_vm, c,
                 grad_k, grad_v, grad_l, H, N, n, *k.stride()[:3], *v.stride()[:3], *logits.stride()[:3],
                 padding.stride(0) if padding is not None else 0), BACKWARD_ROWS, k.device,
                K=K, V=V, BK=pad(K, 256), BV=pad(V, 256), BS=pad(n, 256), HAS_PAD=padding is not None,
                PREC=precision(k.dtype))
    return grad_k, grad_v, grad_l


def _memory_read_forward(q, key_memory, value_memory, scale, keep, keep_scale):
    """The read's launch: (out, lse [B, H, M] fp32, and q and the fp32 memories as launched)."""
    q = unit_last_stride(q)
    key_memory = key_memory.float().contiguous()
    value_memory = value_memory.float().contiguous()
    B, H, M, K = q.shape
    n, V = key_memory.shape[2], value_memory.shape[-1]
    out = q.new_empty(B, H, M, V)
    lse = q.new_empty(B, H, M, dtype=torch.float32)
    launch_rows(memory_read_fwd, lambda bt: (B * H, cdiv(M, bt)),
                (q, key_memory, value_memory, keep if keep is not None else q, out, lse, H, M, n, scale,
                 keep_scale, *q.stride()[:3], *(keep.stride()[:3] if keep is not None else (0, 0, 0))),
                ROWS, q.device, K=K, V=V, BK=pad(K, 256), BV=pad(V, 256), BS=pad(n, 256),
                HAS_DROPOUT=keep is not None, PREC=precision(q.dtype))
    return out, lse, q, key_memory, value_memory


class MemoryRead(torch.autograd.Function):
    """(q [B, H, M, d], K~ [B, H, n, d], V~ [B, H, n, dv] fp32, scale, keep [B, H, M, n] uint8 or
    None, keep_scale = 1 / (1 - p)) -> [B, H, M, dv] in q's dtype."""

    @staticmethod
    def forward(ctx, q, key_memory, value_memory, scale, keep, keep_scale, guard):
        out, lse, q, key_memory, value_memory = _memory_read_forward(q, key_memory, value_memory, scale, keep,
                                                                     keep_scale)
        ctx.save_for_backward(q, key_memory, value_memory, keep, lse)
        ctx.scale, ctx.keep_scale, ctx.guard = scale, keep_scale, guard
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, key_memory, value_memory, keep, lse = ctx.saved_tensors
        grad_out = grad_out.contiguous()

        def kernels():
            return _memory_read_backward(q, key_memory, value_memory, keep, lse, grad_out, ctx.scale,
                                         ctx.keep_scale)

        if ctx.guard is None:
            return (*kernels(), None, None, None, None)

        def torch_forward(q, key_memory, value_memory):  # ``parallel_abc_read``
            dropout_p = 0.0 if keep is None else 1.0 - 1.0 / ctx.keep_scale
            return ctx.guard.torch_op(q, key_memory, value_memory, ctx.scale, dropout_p,
                                      None if keep is None else keep.bool())

        grads = ctx.guard.backward(kernels, torch_forward, (q, key_memory, value_memory),
                                   tuple(ctx.needs_input_grad[:3]), (grad_out,))
        return (*grads, None, None, None, None)


def _memory_read_backward(q, key_memory, value_memory, keep, lse, grad_out, scale, keep_scale):
    """(dq, dK~, dV~) of ``MemoryRead`` on the kernels."""
    B, H, M, K = q.shape
    n, V = key_memory.shape[2], value_memory.shape[-1]
    grad_q = torch.empty(B, H, M, K, dtype=q.dtype, device=q.device)
    grad_km = torch.empty_like(key_memory)
    grad_vm = torch.empty_like(value_memory)
    widths = (pad(K, 256), pad(V, 256), pad(n, 256))
    # The n x d gradient accumulators stay on chip: wide ones leave room for 16 rows only
    # (128-wide tiles at 32 rows need more shared memory than an H100 block has; with Triton 3.6,
    # 16 rows fit there only at a pipelining depth of 2, which launch_rows finds).
    rows = BACKWARD_ROWS if max(widths) <= 64 else BACKWARD_ROWS[1:]
    launch_rows(memory_read_bwd, lambda bt: (B * H,),
                (q, key_memory, value_memory, keep if keep is not None else q, lse, grad_out, grad_q,
                 grad_km, grad_vm, H, M, n, scale, keep_scale, *q.stride()[:3],
                 *(keep.stride()[:3] if keep is not None else (0, 0, 0))), rows, q.device,
                K=K, V=V, BK=widths[0], BV=widths[1], BS=widths[2], HAS_DROPOUT=keep is not None,
                PREC=precision(q.dtype))
    return grad_q, grad_km, grad_vm


def memory_write(k: torch.Tensor, v: torch.Tensor, phi_logits: torch.Tensor,
                 key_padding_mask: Optional[torch.Tensor] = None, guard=None) -> Tuple[torch.Tensor, torch.Tensor]:
    """Triton ``abc_memory``: k, v [B, H, N, d]; phi_logits [B, H, N, n]; key_padding_mask [B, N]
    bool, True at padding; guard: the ``ops.backend.KernelGuard`` of the backward (None: failures
    raise). Returns (K~, V~) [B, H, n, d] in fp32."""
    padding = None
    if key_padding_mask is not None:
        padding = unit_last_stride(key_padding_mask).view(torch.uint8)
    return MemoryWrite.apply(k, v, phi_logits, padding, guard)


def memory_read(q: torch.Tensor, key_memory: torch.Tensor, value_memory: torch.Tensor, scale: float,
                dropout_p: float = 0.0, dropout_mask: Optional[torch.Tensor] = None, guard=None) -> torch.Tensor:
    """Triton ``abc_read``: q [B, H, M, d]; memories [B, H, n, d]; dropout_mask [B, H, M, n] bool
    (True = keep) or None for no dropout; guard: as in ``memory_write``. Returns [B, H, M, dv] in
    q's dtype."""
    keep = None
    if dropout_mask is not None:
        keep = unit_last_stride(dropout_mask).view(torch.uint8)
    keep_scale = 1.0 / (1.0 - dropout_p)
    if not differentiable(q, key_memory, value_memory):  # decoding's cross attention: no Function
        return _memory_read_forward(q, key_memory, value_memory, float(scale), keep, keep_scale)[0]
    return MemoryRead.apply(q, key_memory, value_memory, float(scale), keep, keep_scale, guard)
