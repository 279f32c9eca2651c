"""Causal ABC over a whole sequence: chunked, blocked, with a recomputing backward.

The sequence is cut into blocks of rows (a multiple of ``chunk_size``; by default as long as a tile
of ``tile_rows`` rows allows, so a sequence that fits is one block). Inside a block all chunks are
processed at once with batched matmuls (see ``chunk_math``); between blocks
only the bounded memory is carried: [B, H, n, d + dv] plus the normaliser [B, H, n]. The forward
saves its inputs and that memory at each block boundary (and, with ``KEEP_CHUNK_STATES``, the
memory entering each chunk: N (d + dv) n / C floats, as much as k and v for n = C); the backward
walks the blocks in reverse, recomputes the rest of each block's forward (the chunk memories, the
intra-chunk C x C products, scores and probabilities) and hands the reverse memory to the block
before. Peak memory is O(B H N (d + n) + tile_rows (n + C + n d / C)), never O(B H N n d): below
fused softmax attention's at 32k tokens x 8 heads (docs/benchmarks.md).
"""

from typing import List, Optional, Tuple, Union

import torch

from ..utils import compute_dtype, default_workspace
from .chunk_math import ReverseCarry, block_backward, block_forward
from .state import ABCState

DEFAULT_CHUNK_SIZE = 64
# Rows (over batch x heads x positions) processed at once: bounds the scratch memory to about
# 20 x tile_rows x max(n, C) floats, whatever the batch and the length. On CPU a tile that stays
# near the caches is fastest (4,096 rows take the same time as 16,384 at 512-8,192 tokens, with a
# quarter of the scratch); on a GPU every tile costs a fixed train of kernel launches, so tiles are
# as large as a few hundred MiB of scratch allows (8x fewer launches at 32k tokens x 8 heads).
DEFAULT_TILE_ROWS = 4096
DEFAULT_TILE_ROWS_ACCELERATOR = 131072
# Whether the forward keeps the memory entering each chunk for the backward ([Z, N / C, n, d + dv]
# fp32: as much as q and k together at n = C). Kept, it spares the backward two products and a scan
# per block; recomputed, the op's peak memory stays below fused softmax attention's (the paper's
# Table 4 claim), which is what the PyTorch path is held to.
KEEP_CHUNK_STATES = False


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
        keep = KEEP_CHUNK_STATES and any(ctx.needs_input_grad[:4])
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


def chunk_causal_abc(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, phi_logits: torch.Tensor,
                     scale: float, chunk_size: int, block_size: Optional[int], tile_rows: Optional[int],
                     initial_state: Optional[ABCState], return_state: bool,
                     keep_mask: Optional[torch.Tensor], keep_scale: float
                     ) -> Union[torch.Tensor, Tuple[torch.Tensor, ABCState]]:
    """``causal_abc`` on the PyTorch path, its arguments checked (``causal.op``) and N, B, H > 0.

    q, k: [B, H, N, d]; v: [B, H, N, dv]; phi_logits: [B, H, N, n]; keep_mask: bool [B, H, N, n]
    (True = kept) or None; keep_scale = 1 / (1 - p); tile_rows None: ``default_tile_rows``.
    Returns out [B, H, N, dv] in q's dtype (and the ABCState after the last row).
    """
    tile_rows = default_tile_rows(q.device) if tile_rows is None else tile_rows
    B, H, N, d = q.shape
    n, dv = phi_logits.shape[-1], v.shape[-1]
    Z = B * H
    work = compute_dtype(q.dtype)

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
        carry_k, carry_v, g_before, scale, chunk, block, tile_rows, keep_mask, keep_scale)
    out = out[:, :N].reshape(B, H, N, dv).to(q.dtype)
    if not return_state:
        return out
    return out, ABCState(carry_k.reshape(B, H, n, d), carry_v.reshape(B, H, n, dv),
                         g_last.reshape(B, H, n))
