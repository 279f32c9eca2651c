"""Causal ABC over a whole sequence: chunked, blocked, with a recomputing backward.

The sequence is cut into blocks of rows (a multiple of ``chunk_size``; by default as long as a tile
of ``tile_rows`` rows allows, so a sequence that fits is one block). Inside a block all chunks are
processed at once with batched matmuls (see ``chunk_math``); between blocks
only the bounded memory is carried: [B, H, n, d + dv] plus the normaliser [B, H, n]. The forward
saves its inputs, that memory at each block boundary and the memory entering each chunk
([B, H, N / C, n, d + dv]: N (d + dv) n / C floats, as much as k and v for n = C); the backward
walks the blocks in reverse, recomputes the rest of each block's forward (the intra-chunk C x C
products, scores and probabilities) and hands the reverse memory to the block before. Peak memory
is O(B H (N (d + n + n (d + dv) / C) + block_size (n + C + n d / C))), never O(B H N n d).
"""

from typing import List, Optional, Tuple, Union

import torch

from ._checks import check_backend, check_qkv_phi, default_scale
from .chunk_math import ReverseCarry, block_backward, block_forward
from .dropout import dropout_keep_mask
from .recurrent import compute_dtype
from .state import ABCState
from .triton.dispatch import kernel_chunk, run_kernels, use_triton
from .workspace import default_workspace

DEFAULT_CHUNK_SIZE = 64
# Rows (over batch x heads x positions) processed at once: bounds the scratch memory to about
# 20 x tile_rows x max(n, C) floats, whatever the batch and the length. On CPU a tile that stays
# near the caches is fastest; on a GPU every tile costs a fixed train of kernel launches, so tiles
# are as large as a few hundred MiB of scratch allows (8x fewer launches at 32k tokens x 8 heads).
DEFAULT_TILE_ROWS = 16384
DEFAULT_TILE_ROWS_ACCELERATOR = 131072


def default_tile_rows(device: torch.device) -> int:
    """``tile_rows`` used when the caller gives none: DEFAULT_TILE_ROWS on CPU, more elsewhere."""
    return DEFAULT_TILE_ROWS if device.type == "cpu" else DEFAULT_TILE_ROWS_ACCELERATOR


def _block_rows(N: int, chunk: int, block_size: Optional[int], tile_rows: int) -> int:
    """Rows of one block: ``block_size`` (default: ``tile_rows``) capped at N, in whole chunks.

    A block spanning the whole sequence makes every tile a contiguous slice of whole sequences,
    which the kernels read in place; a shorter block needs a copy of its rows (and of its
    gradients) per tile, about a tenth of the op's time at N = 4096.
    """
    rows = tile_rows if block_size is None else block_size
    return max(chunk, (min(rows, N) // chunk) * chunk)


def _tiles(Z: int, N: int, block: int, tile_rows: int) -> List[Tuple[slice, List[slice]]]:
    """Cut [Z, N] into groups of sequences, each cut into blocks of rows, so that one tile of
    (group x block) rows bounds the temporaries."""
    per_group = max(1, tile_rows // block)
    blocks = [slice(s, min(s + block, N)) for s in range(0, N, block)]
    return [(slice(z, min(z + per_group, Z)), blocks) for z in range(0, Z, per_group)]


def _rows(x: torch.Tensor, group: slice, rows: slice, name: str, ws) -> torch.Tensor:
    """x[group, rows] as a contiguous tensor: a view when possible, else a workspace copy."""
    part = x[group, rows]
    if part.is_contiguous():
        return part
    return ws(name, part.shape, part).copy_(part)


class _CausalABC(torch.autograd.Function):
    """q, k: [Z, N, d]; v: [Z, N, dv]; logits: [Z, N, n], contiguous, N a multiple of ``chunk``;
    carry_k [Z, n, d], carry_v [Z, n, dv], g_before [Z, n]: the memory before row 0 (a constant);
    keep_mask: bool [Z, N, n], the attention-dropout keep mask (None: no dropout), keep_scale:
    1 / (1 - p)."""

    @staticmethod
    def forward(ctx, q, k, v, logits, carry_k, carry_v, g_before, scale, chunk, block, tile_rows,
                keep_mask=None, keep_scale=1.0):
        ws = default_workspace()
        Z, N, _ = q.shape
        dv = v.shape[-1]
        out = q.new_empty(Z, N, dv)
        keep = any(ctx.needs_input_grad[:4])
        # Per (group, block): the memory entering it, then (if kept) the memories entering each of
        # its chunks, which spares the backward two of the forward's products and its scan.
        boundaries = []
        final = []  # memory after the last block, per group
        for group, blocks in _tiles(Z, N, block, tile_rows):
            ck, cv, g = carry_k[group], carry_v[group], g_before[group]
            for rows in blocks:
                boundaries.extend([ck, cv, g])
                inputs = [_rows(x, group, rows, f"in{i}", ws) for i, x in enumerate((q, k, v, logits))]
                target = out[group, rows]
                direct = target.is_contiguous()
                if not direct:
                    target = ws("block_out", target.shape, q)
                mask = None if keep_mask is None else _rows(keep_mask, group, rows, "mask", ws)
                fw = block_forward(*inputs, ck, cv, g, scale, chunk, ws, target, keep_states=keep,
                                   keep_mask=mask, keep_scale=keep_scale)
                if keep:
                    boundaries.extend([fw.key_states, fw.value_states])
                if not direct:
                    out[group, rows] = target
                (ck, cv), g = fw.carry, fw.g_last
                del fw
            final.append((ck, cv, g))
        carry_k, carry_v, g_before = (torch.cat(parts) for parts in zip(*final))
        masks = [] if keep_mask is None else [keep_mask]
        ctx.save_for_backward(q, k, v, logits, *masks, *boundaries)
        ctx.scale, ctx.chunk, ctx.block, ctx.tile_rows = scale, chunk, block, tile_rows
        ctx.has_mask, ctx.keep_scale = keep_mask is not None, keep_scale
        ctx.per_block = 5 if keep else 3
        ctx.mark_non_differentiable(carry_k, carry_v, g_before)
        return out, carry_k, carry_v, g_before

    @staticmethod
    def backward(ctx, grad_out, _grad_ck, _grad_cv, _grad_g):
        ws = default_workspace()
        q, k, v, logits, *boundaries = ctx.saved_tensors
        keep_mask = boundaries.pop(0) if ctx.has_mask else None
        Z, N, _ = q.shape
        grad_out = grad_out.contiguous()
        grads = [torch.empty_like(x) for x in (q, k, v, logits)]
        index = len(boundaries)
        for group, blocks in reversed(_tiles(Z, N, ctx.block, ctx.tile_rows)):
            reverse: Optional[ReverseCarry] = None
            for rows in reversed(blocks):
                index -= ctx.per_block
                ck, cv, g, *states = boundaries[index:index + ctx.per_block]
                inputs = [_rows(x, group, rows, f"in{i}", ws)
                          for i, x in enumerate((q, k, v, logits, grad_out))]
                targets = [grad[group, rows] for grad in grads]
                direct = all(t.is_contiguous() for t in targets)
                if not direct:
                    targets = [ws(f"grad{i}", t.shape, t) for i, t in enumerate(targets)]
                mask = None if keep_mask is None else _rows(keep_mask, group, rows, "mask", ws)
                reverse = block_backward(*inputs[:4], ck, cv, g, inputs[4], reverse, ctx.scale,
                                         ctx.chunk, ws, *targets, states=tuple(states) or None,
                                         keep_mask=mask, keep_scale=ctx.keep_scale)
                if not direct:
                    for grad, t in zip(grads, targets):
                        grad[group, rows] = t
        return (*grads, None, None, None, None, None, None, None, None, None)


def _check_state(state: ABCState, B: int, H: int, n: int, d: int, dv: int) -> None:
    expected = ((B, H, n, d), (B, H, n, dv), (B, H, n))
    if tuple(tuple(t.shape) for t in state) != expected:
        raise ValueError(
            "initial_state does not match the inputs: got shapes "
            f"{[tuple(t.shape) for t in state]}, expected {list(expected)}")


def _empty_result(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, logits: torch.Tensor,
                  initial_state: Optional[ABCState], return_state: bool):
    """No rows (N = 0) or no sequences (B or H = 0): an empty output, and the state unchanged."""
    # [B, H, N, dv] with no element, on the autograd graph of every input like a real output
    # (their gradients are zeros, not None).
    out = v.clone()
    for other in (q, k, logits):
        out = out + other.sum().to(out.dtype)
    if not return_state:
        return out
    B, H, _, d = q.shape
    n, work = logits.shape[-1], compute_dtype(q.dtype)
    if initial_state is None:
        return out, ABCState.empty(B, H, n, d, v.shape[-1], device=q.device, dtype=work)
    return out, ABCState(*(t.detach().to(work) for t in initial_state))


def causal_abc(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    scale: Optional[float] = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    block_size: Optional[int] = None,
    tile_rows: Optional[int] = None,
    initial_state: Optional[ABCState] = None,
    return_state: bool = False,
    dropout_p: float = 0.0,
    dropout_mask: Optional[torch.Tensor] = None,
    backend: str = "auto",
) -> Union[torch.Tensor, Tuple[torch.Tensor, ABCState]]:
    """Causal ABC_MLP (Peng et al., Eq. 4 and 12 with the prefix normaliser of Appendix B.1).

    Row t writes k_t and v_t into n slots with weights exp(l_t) and reads its own prefix memory:
        K~_t = sum_{i<=t} exp(l_i) k_i / sum_{i<=t} exp(l_i)   (per slot; likewise V~_t)
        out_t = V~_t^T softmax(scale * K~_t q_t)

    Args:
        q, k: [B, H, N, d]; v: [B, H, N, dv]; phi_logits: [B, H, N, n], the logits W_phi x before
            exp (finite, of any magnitude).
        scale: multiplies K~_t q_t; defaults to d ** -0.5.
        chunk_size: rows per chunk C; intra-chunk work is O(C (d + n)) per row.
        block_size: rows of one sequence processed at once (rounded down to a multiple of C);
            default: the whole sequence, or ``tile_rows`` rows of it if it is longer.
        tile_rows: rows over the whole batch (sequences x block_size) processed at once; with
            block_size it bounds the scratch memory, whatever the batch size and length.
            Default: ``default_tile_rows(q.device)``.
        initial_state: memory of an earlier prefix to continue from, e.g. a prompt processed
            before. It is a constant: no gradient flows into it. Default: an empty memory.
        return_state: also return the ABCState after the last row, to continue decoding with
            ``causal_abc_step`` or another ``causal_abc`` call.
        dropout_p: attention dropout on the probabilities over the slots, in [0, 1): the output
            reads V~_t^T (P_t * M_t / (1 - p)) (see ``ops.dropout``). Pass 0 in evaluation.
        dropout_mask: bool [B, H, N, n], True = keep: the mask M (only with dropout_p > 0);
            drawn from torch's RNG when dropout_p > 0 and none is given.
        backend: "auto" (the Triton kernels for CUDA tensors when Triton imports, else PyTorch),
            "torch", or "triton" (CPU tensors only under TRITON_INTERPRET=1). The kernels ignore
            block_size and tile_rows; shapes they cannot take fall back to PyTorch (logged once).

    Returns:
        out [B, H, N, dv] in q's dtype (and the final ABCState if ``return_state``). Normalisers,
        memories and products are computed in fp32 (fp64 for fp64 inputs) whatever q's dtype.
    """
    check_qkv_phi(q, k, v, phi_logits, same_length=True)
    check_backend(backend)
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    if block_size is not None and block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    if tile_rows is None:
        tile_rows = default_tile_rows(q.device)
    if tile_rows < 1:
        raise ValueError(f"tile_rows must be >= 1, got {tile_rows}")
    B, H, N, d = q.shape
    n, dv = phi_logits.shape[-1], v.shape[-1]
    Z = B * H
    work = compute_dtype(q.dtype)
    scale = default_scale(scale, d)

    if initial_state is not None:
        _check_state(initial_state, B, H, n, d, dv)
    keep_mask = dropout_keep_mask(dropout_p, dropout_mask, (B, H, N, n), q.device)
    if N == 0 or Z == 0:
        return _empty_result(q, k, v, phi_logits, initial_state, return_state)
    if use_triton(backend, q, v, phi_logits, chunk_size):
        from .triton.causal_function import triton_causal_abc
        return run_kernels(
            "causal_abc", backend,
            lambda: triton_causal_abc(q, k, v, phi_logits, scale, kernel_chunk(chunk_size, N), initial_state,
                                      return_state, keep_mask, 1.0 / (1.0 - dropout_p), backend),
            lambda: causal_abc(q, k, v, phi_logits, scale, chunk_size, block_size, tile_rows, initial_state,
                               return_state, dropout_p, keep_mask, backend="torch"))

    chunk = min(chunk_size, N)
    pad = (-N) % chunk
    block = _block_rows(N + pad, chunk, block_size, tile_rows)
    # Padded rows come after every real row and write nothing (logit -inf).
    pad_rows = lambda x, value: torch.nn.functional.pad(x, (0, 0, 0, pad), value=value) if pad else x  # noqa: E731
    q_flat = pad_rows(q.to(work).reshape(Z, N, d), 0.0)
    k_flat = pad_rows(k.to(work).reshape(Z, N, d), 0.0)
    v_flat = pad_rows(v.to(work).reshape(Z, N, dv), 0.0)
    logits = pad_rows(phi_logits.to(work).reshape(Z, N, n), float("-inf"))
    if keep_mask is not None:
        keep_mask = pad_rows(keep_mask.reshape(Z, N, n), True).contiguous()

    if initial_state is None:
        carry_k = q_flat.new_zeros(Z, n, d)
        carry_v = q_flat.new_zeros(Z, n, dv)
        g_before = q_flat.new_full((Z, n), float("-inf"))
    else:
        carry_k, carry_v, g_before = (
            t.detach().to(work).reshape(Z, *t.shape[2:]) for t in initial_state)

    out, carry_k, carry_v, g_last = _CausalABC.apply(
        q_flat.contiguous(), k_flat.contiguous(), v_flat.contiguous(), logits.contiguous(),
        carry_k, carry_v, g_before, scale, chunk, block, tile_rows,
        keep_mask, 1.0 / (1.0 - dropout_p))
    out = out[:, :N].reshape(B, H, N, dv).to(q.dtype)
    if not return_state:
        return out
    return out, ABCState(carry_k.reshape(B, H, n, d), carry_v.reshape(B, H, n, dv),
                         g_last.reshape(B, H, n))
