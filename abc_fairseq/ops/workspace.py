"""Reusable scratch memory for the temporaries of the chunked kernels.

On CPU a freshly allocated large tensor is backed by new pages that the kernel maps and zeroes on
first touch; for these memory-bound kernels that page-fault cost is as large as the arithmetic.
Keeping named buffers alive across blocks, layers and steps removes it, the way a GPU caching
allocator does. Buffers handed out are overwritten by the next use of the same name, so they must
never escape an op (outputs and saved tensors are ordinary allocations).
"""

import math
import threading
from typing import Dict, Sequence, Tuple

import torch


class Workspace:
    """Named, growing scratch buffers: ``ws("scores", shape, like)`` returns a tensor of that shape
    with ``like``'s dtype and device, reusing the memory of the last call with the same name."""

    def __init__(self):
        self._buffers: Dict[Tuple[str, torch.dtype], torch.Tensor] = {}

    def __call__(self, name: str, shape: Sequence[int], like: torch.Tensor) -> torch.Tensor:
        if like.device.type != "cpu":  # accelerators have caching allocators of their own
            return like.new_empty(shape)
        numel = math.prod(shape)
        key = (name, like.dtype)
        buffer = self._buffers.get(key)
        if buffer is None or buffer.numel() < numel:
            buffer = self._buffers[key] = like.new_empty(numel)
        return buffer[:numel].view(shape)

    def nbytes(self) -> int:
        return sum(b.numel() * b.element_size() for b in self._buffers.values())

    def clear(self) -> None:
        self._buffers.clear()


_local = threading.local()


def default_workspace() -> Workspace:
    """The calling thread's workspace."""
    if not hasattr(_local, "workspace"):
        _local.workspace = Workspace()
    return _local.workspace
