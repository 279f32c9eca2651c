"""Which backend runs an op (``causal_abc``, ``causal_abc_step``, ``abc_memory``, ``abc_read``):
the Triton kernels or the PyTorch path.

``"auto"`` takes the kernels for CUDA tensors when Triton imports and the shapes fit, the PyTorch
path otherwise; ``"triton"`` insists (CPU tensors only under ``TRITON_INTERPRET=1``, Triton's
interpreter, which is how CI tests the kernels); ``"torch"`` never imports Triton. A shape or
dtype the kernels cannot take falls back to the PyTorch path, logged once per distinct reason.

When the kernels fail on the device at hand (a Triton compile error, more shared memory than a
block has, an architecture Triton cannot target), ``run_kernels`` makes ``"auto"`` run the
PyTorch path for that op from then on, warning once with the op, the reason and the switch that
turns the kernels off; ``"triton"`` raises. ``backend_unavailable`` is the one test, for the
option readers, of whether a backend can run on this machine at all.
"""

import logging
import os
import warnings
from typing import Callable, Optional, TypeVar

import torch

from .._checks import BACKENDS  # noqa: F401 (the backend names, re-exported for the option readers)

AUTO_DEVICES = ("cuda",)  # where "auto" tries the kernels (tests add "cpu" under the interpreter)
MAX_WIDTH = 128  # head dims and memory sizes up to this (padded to powers of two >= 16)
CHUNK_RANGE = (16, 128)
MAX_CHUNKS = 65535  # one program per chunk along CUDA's second grid axis
KERNEL_DTYPES = (torch.float16, torch.bfloat16, torch.float32)

# What to tell a user whose kernels failed: the model option, its override and the variable.
SWITCH = ("--abc-backend torch (or --model-overrides \"{'abc_backend': 'torch'}\" for a trained "
          "model, or ABC_BACKEND=torch)")

logger = logging.getLogger(__name__)
_reported = set()
_failed = {}  # op -> why its kernels failed on this machine ("auto" then skips them)
T = TypeVar("T")


def interpreting() -> bool:
    """Whether Triton's interpreter is on (kernels then run on CPU tensors)."""
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


def triton_importable() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def backend_unavailable(backend: str) -> Optional[str]:
    """Why ``backend`` cannot run on this machine at all (None when it can): ``"triton"`` needs
    the triton package and a CUDA device, or Triton's interpreter (``TRITON_INTERPRET=1``)."""
    if backend != "triton":
        return None
    if not triton_importable():
        return "the triton package is not installed (pip install triton)"
    if not torch.cuda.is_available() and not interpreting():
        return "there is no CUDA device (on CPU the kernels run only under TRITON_INTERPRET=1)"
    return None


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
    if backend == "auto" and device.type not in AUTO_DEVICES:
        return False
    if not triton_importable():
        if backend == "triton":
            raise RuntimeError("backend='triton' needs the triton package (pip install triton)")
        return False
    if on_cpu and not interpreting():
        raise RuntimeError("backend='triton' on CPU tensors runs only under Triton's interpreter "
                           "(set TRITON_INTERPRET=1 before importing the kernels); use a CUDA "
                           "device or backend='torch'")
    if reason is None and backend == "auto" and op in _failed:
        return False  # failed before on this machine: warned then
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


def kernel_failure(error: BaseException) -> bool:
    """Whether ``error`` says the kernels cannot compile or launch here (as opposed to a bug in
    the caller's inputs): any Triton error (compilation, ptxas, out of resources) or a CUDA
    launch refusal."""
    try:
        import triton
    except ImportError:
        return False
    if isinstance(error, triton.TritonError):
        return True
    text = str(error)
    return isinstance(error, RuntimeError) and any(
        marker in text for marker in ("too many resources requested", "no kernel image", "unsupported arch",
                                      "out of resource", "PTX JIT"))


def run_kernels(op: str, backend: str, kernels: Callable[[], T], torch_path: Callable[[], T]) -> T:
    """``kernels()``, or, when they fail to compile or launch here and ``backend`` is "auto",
    ``torch_path()`` (and every later call of ``op`` skips the kernels). Warns once per op,
    naming the reason and the switch; with "triton" the failure is raised."""
    try:
        return kernels()
    except Exception as error:  # noqa: BLE001 (filtered by kernel_failure, re-raised otherwise)
        if backend != "auto" or not kernel_failure(error):
            raise
        reason = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        if op not in _failed:
            _failed[op] = reason
            message = (f"{op}: the Triton kernels cannot run on this device ({reason}); using the "
                       f"PyTorch path for {op} from now on. {SWITCH} skips the kernels; "
                       f"--abc-backend triton makes this an error.")
            logger.warning(message)
            warnings.warn(message, RuntimeWarning, stacklevel=2)
        return torch_path()


def recompute_grads(op: str, backend: str, kernels: Callable[[], tuple], torch_forward: Callable,
                    inputs: tuple, needs_grad: tuple, grad_outputs: tuple) -> tuple:
    """A backward: ``kernels()``, or (see ``run_kernels``) the gradients of ``torch_forward(*inputs)``
    (the PyTorch path of the same op) with respect to the ``inputs`` flagged in ``needs_grad``,
    given ``grad_outputs`` (None for outputs without one); None for the other inputs."""

    def torch_path():
        with torch.enable_grad():
            leaves = [x.detach().requires_grad_(True) if flag else x for x, flag in zip(inputs, needs_grad)]
            outputs = torch_forward(*leaves)
            outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
            pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if g is not None and o.requires_grad]
            wanted = [x for x, flag in zip(leaves, needs_grad) if flag]
            found = iter(torch.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                                             allow_unused=True))
            return tuple(next(found) if flag else None for flag in needs_grad)

    return run_kernels(op, backend, kernels, torch_path)


def reset_failures() -> None:
    """Forget earlier kernel failures (tests; a process that changed device)."""
    _failed.clear()
