"""Which backend runs an op (``causal_abc``, ``causal_abc_step``, ``abc_memory``, ``abc_read``):
the Triton kernels or the PyTorch path.

``"auto"`` takes the kernels for CUDA tensors when Triton imports and the shapes fit, the PyTorch
path otherwise; ``"triton"`` insists (CPU tensors only under ``TRITON_INTERPRET=1``, Triton's
interpreter, which is how CI tests the kernels); ``"torch"`` never imports Triton. A shape or
dtype the kernels cannot take falls back to the PyTorch path, logged once per distinct reason.
"""

import logging
import os
from typing import Optional

import torch

MAX_WIDTH = 128  # head dims and memory sizes up to this (padded to powers of two >= 16)
CHUNK_RANGE = (16, 128)
MAX_CHUNKS = 65535  # one program per chunk along CUDA's second grid axis
KERNEL_DTYPES = (torch.float16, torch.bfloat16, torch.float32)

logger = logging.getLogger(__name__)
_reported = set()


def interpreting() -> bool:
    """Whether Triton's interpreter is on (kernels then run on CPU tensors)."""
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


def triton_importable() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def unsupported_sizes(dtype: torch.dtype, **widths: int) -> Optional[str]:
    """Why the kernels cannot take this dtype or these widths (head dims, memory size), or None."""
    if dtype not in KERNEL_DTYPES:
        return f"dtype {dtype} (the kernels take float16, bfloat16 and float32)"
    for name, width in widths.items():
        if width > MAX_WIDTH:
            return f"{name.replace('_', ' ')} {width} > {MAX_WIDTH}"
    return None


def unsupported(q: torch.Tensor, v: torch.Tensor, phi_logits: torch.Tensor,
                chunk_size: int) -> Optional[str]:
    """Why the causal kernels cannot take these inputs, or None when they can."""
    reason = unsupported_sizes(q.dtype, head_dim=q.shape[-1], value_dim=v.shape[-1],
                               memory_size=phi_logits.shape[-1])
    if reason is not None:
        return reason
    low, high = CHUNK_RANGE
    if not (low <= chunk_size <= high and chunk_size & (chunk_size - 1) == 0):
        return f"chunk_size {chunk_size} (the kernels take powers of two from {low} to {high})"
    if -(-q.shape[2] // chunk_size) > MAX_CHUNKS:
        return f"more than {MAX_CHUNKS} chunks of {chunk_size} rows (a grid axis holds {MAX_CHUNKS})"
    return None


def kernel_chunk(chunk_size: int, N: int) -> int:
    """The kernels' chunk: ``chunk_size``, shrunk (to a power of two >= 16) for short sequences."""
    shrunk = 1 << max(N - 1, 1).bit_length()
    return max(CHUNK_RANGE[0], min(chunk_size, shrunk))


def kernels_apply(backend: str, device: torch.device, reason: Optional[str], op: str) -> bool:
    """True when ``op`` should run on the kernels (``backend`` already validated). ``reason``:
    why the kernels cannot take the inputs (None when they can): "auto" and "triton" then fall
    back to the PyTorch path, logged once per distinct reason."""
    if backend == "torch":
        return False
    on_cpu = device.type == "cpu"
    if backend == "auto" and device.type != "cuda":
        return False
    if not triton_importable():
        if backend == "triton":
            raise RuntimeError("backend='triton' needs the triton package (pip install triton)")
        return False
    if on_cpu and not interpreting():
        raise RuntimeError("backend='triton' on CPU tensors runs only under Triton's interpreter "
                           "(set TRITON_INTERPRET=1 before importing the kernels); use a CUDA "
                           "device or backend='torch'")
    if reason is None:
        return True
    if (op, reason) not in _reported:
        _reported.add((op, reason))
        logger.warning("%s: the Triton kernels do not take %s; using the PyTorch path", op, reason)
    return False


def use_triton(backend: str, q: torch.Tensor, v: torch.Tensor, phi_logits: torch.Tensor,
               chunk_size: int) -> bool:
    """True when ``causal_abc`` should run on the kernels (``backend`` already validated)."""
    return kernels_apply(backend, q.device, unsupported(q, v, phi_logits, chunk_size), "causal_abc")
