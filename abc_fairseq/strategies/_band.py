"""Banded attention in blocks: each query block reads its own key block and a few neighbours, so
a band of width w costs O(N w) time and memory instead of O(N^2) (sliding windows, pooled blocks)."""

import torch
import torch.nn.functional as F


def pad_rows(x: torch.Tensor, multiple: int, dim: int = 2) -> torch.Tensor:
    """Zero-pad ``dim`` of x up to a multiple of ``multiple``."""
    extra = (-x.shape[dim]) % multiple
    if not extra:
        return x
    pads = [0, 0] * (x.dim() - dim - 1) + [0, extra]
    return F.pad(x, pads)


def with_neighbours(x: torch.Tensor, block: int, before: int, after: int) -> torch.Tensor:
    """x [B, H, N, e] (N a multiple of ``block``) -> [B, H, N / block, (before + 1 + after) * block, e]:
    every block preceded by its ``before`` and followed by its ``after`` neighbours (zeros past the ends)."""
    B, H, N, e = x.shape
    count = N // block
    blocks = F.pad(x.reshape(B, H, count, block, e), (0, 0, 0, 0, before, after))
    return torch.cat([blocks[:, :, i:i + count] for i in range(before + 1 + after)], dim=3)


def band_offsets(block: int, before: int, after: int, device) -> torch.Tensor:
    """[block, (before + 1 + after) * block] long: query position minus key position for query row i
    of a block against key column j of ``with_neighbours`` (the same for every block)."""
    rows = torch.arange(block, device=device)[:, None]
    cols = torch.arange((before + 1 + after) * block, device=device)[None, :]
    return before * block + rows - cols
