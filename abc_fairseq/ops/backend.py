"""Which backend runs an op: the Triton kernels or the PyTorch path. The one place that knows both.

Every op takes ``backend``: ``"auto"`` runs the kernels for CUDA tensors when Triton imports and
the kernels take the inputs, the PyTorch path otherwise; ``"triton"`` insists (CPU tensors only
under ``TRITON_INTERPRET=1``, Triton's interpreter, which is how CI tests the kernels);
``"torch"`` never imports Triton. Inputs the kernels cannot take (``unsupported``) fall back to
the PyTorch path, logged once per op and reason.

An op's module checks its arguments once, then hands both paths here (``dispatch``): the PyTorch
path as a thunk, the kernels as a module path (imported here, only when they run) and a thunk
taking that module and a ``KernelGuard``. When the kernels fail to compile or launch on the device at hand
(a Triton error, more shared memory than a block has, an architecture Triton cannot target),
``"auto"`` runs the PyTorch path for that op from then on, with one warning naming the op, the
reason and the switch; ``"triton"`` raises. A failing backward recomputes its gradients on the
PyTorch path through the guard the kernels' autograd Function was given, so the kernel modules
never import the PyTorch path (nor this module).

The messages name the ``backend`` argument only: a caller that exposes it under another name (a
command-line flag) sets ``switch_hint`` so that the warning names its switches (the fairseq
plugin does, ``plugin.install``).
"""

import importlib
import logging
import os
import sys
import warnings
from typing import Callable, Optional, TypeVar

import torch

BACKENDS = ("auto", "torch", "triton")
AUTO_DEVICES = ("cuda",)  # where "auto" tries the kernels (tests add "cpu" under the interpreter)

# What the kernels take: these dtypes, widths (head dims, memory sizes) up to MAX_WIDTH (padded to
# powers of two >= 16), causal chunks in CHUNK_RANGE, and up to MAX_CHUNKS chunks (one program per
# chunk along CUDA's second grid axis).
KERNEL_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
MAX_WIDTH = 128
CHUNK_RANGE = (16, 128)
MAX_CHUNKS = 65535

logger = logging.getLogger(__name__)
_reported = set()
_failed = {}  # op -> why its kernels failed on this machine ("auto" then skips them)
# How the fallback warning names the switches; a caller exposing ``backend`` as a flag sets its own.
switch_hint = "backend='torch' skips the kernels; backend='triton' makes this an error."
T = TypeVar("T")


class KernelFallbackWarning(RuntimeWarning):
    """The Triton kernels of an op failed on this device; the PyTorch path runs it from now on."""


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


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
    check_backend(backend)
    if backend != "triton":
        return None
    if not triton_importable():
        return "the triton package is not installed (pip install triton)"
    if not torch.cuda.is_available() and not interpreting():
        return "there is no CUDA device (on CPU the kernels run only under TRITON_INTERPRET=1)"
    return None


def unsupported(dtype: torch.dtype, chunk: Optional[int] = None, length: int = 0, **widths: int) -> Optional[str]:
    """Why the kernels cannot take this dtype, these widths (head dims, memory size) or, for the
    causal kernels, this ``chunk`` over ``length`` rows; None when they can."""
    if dtype not in KERNEL_DTYPES:
        return f"dtype {dtype} (the kernels take float16, bfloat16 and float32)"
    for name, width in widths.items():
        if width > MAX_WIDTH:
            return f"{name.replace('_', ' ')} {width} > {MAX_WIDTH}"
    if chunk is None:
        return None
    low, high = CHUNK_RANGE
    if not (low <= chunk <= high and chunk & (chunk - 1) == 0):
        return f"chunk_size {chunk} (the kernels take powers of two from {low} to {high})"
    if -(-length // chunk) > MAX_CHUNKS:
        return f"more than {MAX_CHUNKS} chunks of {chunk} rows (a grid axis holds {MAX_CHUNKS})"
    return None


def kernel_chunk(chunk_size: int, N: int) -> int:
    """The causal kernels' chunk: ``chunk_size``, shrunk (to a power of two >= 16) for short sequences."""
    shrunk = 1 << max(N - 1, 1).bit_length()
    return max(CHUNK_RANGE[0], min(chunk_size, shrunk))


def use_kernels(op: str, backend: str, device: torch.device, reason: Optional[str]) -> bool:
    """Whether ``op`` runs on the kernels (``backend`` already checked). ``reason``: why the
    kernels cannot take the inputs (None when they can); "auto" and "triton" then fall back to the
    PyTorch path, logged once per op and reason."""
    if backend == "torch" or (backend == "auto" and device.type not in AUTO_DEVICES):
        return False
    if not triton_importable():
        if backend == "triton":
            raise RuntimeError("backend='triton' needs the triton package (pip install triton)")
        return False
    if device.type == "cpu" and not interpreting():
        raise RuntimeError("backend='triton' on CPU tensors runs only under Triton's interpreter "
                           "(set TRITON_INTERPRET=1 before importing the kernels); use a CUDA "
                           "device or backend='torch'")
    if reason is None:
        return not (backend == "auto" and op in _failed)  # failed before on this machine: warned then
    if (op, reason) not in _reported:
        _reported.add((op, reason))
        logger.warning("%s: the Triton kernels do not take %s; using the PyTorch path", op, reason)
    return False


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


def _give_up_kernels(op: str, error: BaseException) -> None:
    """Remember that ``op``'s kernels failed here and warn once."""
    if op in _failed:
        return
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
    _failed[op] = f"{type(error).__name__}: {first_line}"
    message = (f"{op}: the Triton kernels cannot run on this device ({_failed[op]}); using the "
               f"PyTorch path for {op} from now on. {switch_hint}")
    logger.warning(message)
    warnings.warn(message, KernelFallbackWarning, stacklevel=3)


def _guarded(op: str, backend: str, kernels: Callable[[], T], torch_path: Callable[[], T]) -> T:
    try:
        return kernels()
    except Exception as error:  # noqa: BLE001 (filtered by kernel_failure, re-raised otherwise)
        if backend != "auto" or not kernel_failure(error):
            raise
        _give_up_kernels(op, error)
        return torch_path()


class KernelGuard:
    """Handed to a kernels' autograd Function: runs its backward kernels, or, under "auto" when
    they fail to compile or launch, the gradients of the op's PyTorch path (``torch_op``, the
    function the op module gave ``dispatch``; the Function knows how to call it on its own inputs)."""

    def __init__(self, op: str, backend: str, torch_op: Callable):
        self.op, self.backend, self.torch_op = op, backend, torch_op

    def backward(self, kernels: Callable[[], tuple], torch_forward: Callable, inputs: tuple,
                 needs_grad: tuple, grad_outputs: tuple) -> tuple:
        """``kernels()``, or the gradients of ``torch_forward(*inputs)`` with respect to the
        ``inputs`` flagged in ``needs_grad`` given ``grad_outputs`` (None for outputs without
        one); None for the other inputs."""

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

        return _guarded(self.op, self.backend, kernels, torch_path)


def dispatch(op: str, backend: str, device: torch.device, reason: Optional[str], torch_op: Callable,
             torch_path: Callable[[], T], kernels_module: str, kernels: Callable[[object, KernelGuard], T]) -> T:
    """Run ``op`` (arguments already checked) on the backend that takes it.

    ``torch_path()``: the op on the PyTorch path (a call of ``torch_op``). ``kernels_module``: the
    kernels' module under ``abc_fairseq.ops`` (e.g. ``"causal.triton.function"``), imported only
    when the kernels run; ``kernels(module, guard)`` runs them. ``reason``: why the kernels cannot
    take the inputs, or None.
    """
    if not use_kernels(op, backend, device, reason):
        return torch_path()
    name = f"{__package__}.{kernels_module}"
    # sys.modules first: a decoding step dispatches every layer, every token, and importlib's own
    # lookup of an imported module costs several calls
    module = sys.modules.get(name) or importlib.import_module(name)
    guard = KernelGuard(op, backend, torch_op)
    return _guarded(op, backend, lambda: kernels(module, guard), torch_path)


def reset_failures() -> None:
    """Forget earlier kernel failures (tests; a process that changed device)."""
    _failed.clear()
