"""Causal ABC (and any family of its form, such as GSA) over a whole sequence: chunked, blocked,
with a recomputing backward.

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

from typing import Callable, List, NamedTuple, Optional, Tuple, Union

import torch

from ..utils import compute_dtype, default_workspace
from .chunk_geometry import prefix_geometry
from .chunk_math import Geometry, ReverseCarry, block_backward, block_forward
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


class Family(NamedTuple):
    """How a family's control input becomes write weights: its block ``geometry``
    (``chunk_math.Geometry``), and ``control_grad(control [Z, N, n], dl, dg) -> d control``,
    which chains dl and dg [Z, N, n] to the control input over whole sequences; None where g is
    the prefix logsumexp of l (ABC), whose chain the blocks' backward runs itself."""

    geometry: Geometry
    control_grad: Optional[Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]] = None


ABC = Family(prefix_geometry)


class _ChunkedCausal(torch.autograd.Function):
    """q, k: [Z, N, d]; v: [Z, N, dv]; control: [Z, N, n], contiguous, N a multiple of ``chunk``;
    carry_k [Z, n, d], carry_v [Z, n, dv], g_before [Z, n]: the memory before row 0 (a constant);
    keep_mask: bool [Z, N, n], the attention-dropout keep mask (None: no dropout), keep_scale:
    1 / (1 - p); family: a ``Family``."""

    @staticmethod
    def forward(ctx, q, k, v, control, carry_k, carry_v, g_before, scale, chunk, block, tile_rows,
                keep_mask, keep_scale, family):
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
                inputs = [_rows(x, group, rows, f"in{i}", ws) for i, x in enumerate((q, k, v, control))]
                target = out[group, rows]
                direct = target.is_contiguous()
                if not direct:
                    target = ws("block_out", target.shape, q)
                mask = None if keep_mask is None else _rows(keep_mask, group, rows, "mask", ws)
                fw = block_forward(*inputs, ck, cv, g, scale, chunk, ws, target, keep_states=keep,
                                   keep_mask=mask, keep_scale=keep_scale, geometry=family.geometry)
                if keep:
                    boundaries.extend([fw.key_states, fw.value_states])
                if not direct:
                    out[group, rows] = target
                (ck, cv), g = fw.carry, fw.g_last
                del fw
            final.append((ck, cv, g))
        carry_k, carry_v, g_before = (torch.cat(parts) for parts in zip(*final))
        masks = [] if keep_mask is None else [keep_mask]
        ctx.save_for_backward(q, k, v, control, *masks, *boundaries)
        ctx.scale, ctx.chunk, ctx.block, ctx.tile_rows = scale, chunk, block, tile_rows
        ctx.has_mask, ctx.keep_scale, ctx.family = keep_mask is not None, keep_scale, family
        ctx.per_block = 5 if keep else 3
        ctx.mark_non_differentiable(carry_k, carry_v, g_before)
        return out, carry_k, carry_v, g_before

    @staticmethod
    def backward(ctx, grad_out, _grad_ck, _grad_cv, _grad_g):
        ws = default_workspace()
        q, k, v, control, *boundaries = ctx.saved_tensors
        keep_mask = boundaries.pop(0) if ctx.has_mask else None
        family = ctx.family
        Z, N, _ = q.shape
        grad_out = grad_out.contiguous()
        grads = [torch.empty_like(x) for x in (q, k, v, control)]
        index = len(boundaries)
        for group, blocks in reversed(_tiles(Z, N, ctx.block, ctx.tile_rows)):
            reverse: Optional[ReverseCarry] = None
            # dg of the group's rows where the family chains it to the control itself (below,
            # once the group's whole sequences are done): scratch of one tile.
            dg = None if family.control_grad is None else \
                ws("dg", (group.stop - group.start, *control.shape[1:]), control)
            for rows in reversed(blocks):
                index -= ctx.per_block
                ck, cv, g, *states = boundaries[index:index + ctx.per_block]
                inputs = [_rows(x, group, rows, f"in{i}", ws)
                          for i, x in enumerate((q, k, v, control, grad_out))]
                parts = [grad[group, rows] for grad in grads] + ([] if dg is None else [dg[:, rows]])
                targets = parts if all(t.is_contiguous() for t in parts) else \
                    [ws(f"grad{i}", t.shape, t) for i, t in enumerate(parts)]
                mask = None if keep_mask is None else _rows(keep_mask, group, rows, "mask", ws)
                reverse = block_backward(*inputs[:4], ck, cv, g, inputs[4], reverse, ctx.scale,
                                         ctx.chunk, ws, *targets, states=tuple(states) or None,
                                         keep_mask=mask, keep_scale=ctx.keep_scale, geometry=family.geometry)
                if targets is not parts:
                    for part, target in zip(parts, targets):
                        part.copy_(target)
            if dg is not None:
                grads[3][group] = family.control_grad(control[group], grads[3][group], dg)
        return (*grads, None, None, None, None, None, None, None, None, None, None)


def chunked_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, control: torch.Tensor, pad_value: float,
                   carry: Tuple[torch.Tensor, torch.Tensor, torch.Tensor], scale: float, chunk_size: int,
                   block_size: Optional[int], tile_rows: Optional[int], keep_mask: Optional[torch.Tensor],
                   keep_scale: float, family: Family) -> Tuple[torch.Tensor, Tuple[torch.Tensor, ...]]:
    """A family's causal attention on the PyTorch path, its arguments checked and N, B, H > 0.

    q, k: [B, H, N, d]; v: [B, H, N, dv]; control: [B, H, N, n], padded at the end with
    ``pad_value`` (a row that writes nothing); carry: (key memory [B, H, n, d], value memory
    [B, H, n, dv], normaliser [B, H, n]), the memory before row 0 in the compute dtype;
    keep_mask: bool [B, H, N, n] (True = kept) or None; keep_scale = 1 / (1 - p); tile_rows None:
    ``default_tile_rows``. Returns out [B, H, N, dv] in q's dtype and the memory after the last
    row, shaped as ``carry``.
    """
    tile_rows = default_tile_rows(q.device) if tile_rows is None else tile_rows
    B, H, N, d = q.shape
    n, dv = control.shape[-1], v.shape[-1]
    Z = B * H
    work = compute_dtype(q.dtype)

    chunk = min(chunk_size, N)
    pad = (-N) % chunk
    block = _block_rows(N + pad, chunk, block_size, tile_rows)
    # Padded rows come after every real row and write nothing.
    pad_rows = lambda x, value: torch.nn.functional.pad(x, (0, 0, 0, pad), value=value) if pad else x  # noqa: E731
    flat = [pad_rows(x.to(work).reshape(Z, N, x.shape[-1]), value).contiguous()
            for x, value in ((q, 0.0), (k, 0.0), (v, 0.0), (control, pad_value))]
    if keep_mask is not None:
        keep_mask = pad_rows(keep_mask.reshape(Z, N, n), True).contiguous()
    carry = [t.detach().to(work).reshape(Z, *t.shape[2:]) for t in carry]
    out, *after = _ChunkedCausal.apply(*flat, *carry, scale, chunk, block, tile_rows, keep_mask, keep_scale, family)
    return out[:, :N].reshape(B, H, N, dv).to(q.dtype), tuple(t.reshape(B, H, *t.shape[1:]) for t in after)


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
    B, H, _, d = q.shape
    n, dv = phi_logits.shape[-1], v.shape[-1]
    if initial_state is None:
        initial_state = ABCState.empty(B, H, n, d, dv, device=q.device, dtype=compute_dtype(q.dtype))
    out, after = chunked_causal(q, k, v, phi_logits, float("-inf"), tuple(initial_state), scale, chunk_size,
                                block_size, tile_rows, keep_mask, keep_scale, ABC)
    return (out, ABCState(*after)) if return_state else out
