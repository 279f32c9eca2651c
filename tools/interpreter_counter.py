"""The counting context manager of ``tools.kernel_counts``: while it is entered, every Triton launch
run under the interpreter (TRITON_INTERPRET=1) is recorded with its programs, the bytes of its
active load / store lanes (requested and distinct), its ``tl.dot`` products, and every PyTorch op
run between launches (those that scan a dimension flagged)."""

import contextlib
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .fla_interpreter_shims import _forget_rewritten, _tensor_loop_variables

OPS = ("abc", "gsa", "fla-abc", "fla-gsa")
DTYPES = {"fp32": "float32", "fp16": "float16"}
# PyTorch scans: each element depends on the one before it along ``dim`` (on a GPU, one thread per
# column walks the dimension: as many dependent steps as its length).
SCANS = ("cumsum", "cumsum_", "cumprod", "cumprod_", "logcumsumexp", "_logcumsumexp", "cummax", "cummin",
         "_cummax_helper", "_cummin_helper")
ALLOCATIONS = ("empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided")
FILLS = ("zeros", "ones", "full", "arange", "scalar_tensor", "rand", "randn", "randint")
GATHERS = ("index_select", "gather")
FLAG_RATIO = 0.10  # counted bytes further than this from the model's are flagged
KERNEL_VARIABLES = ("ABC_TRITON_CHUNK",)  # what chooses the kernels' path, when set


@dataclass
class Launch:
    """One kernel launch: its grid, constexpr settings and what its programs did. ``calls``,
    ``requested`` and ``distinct`` hold "load" and "store": tl.load / tl.store calls of all programs,
    bytes of their active lanes, and bytes at distinct addresses (each address once per launch)."""
    kernel: str
    meta: Dict
    phase: str
    grid: tuple = (1, 1, 1)
    calls: Counter = field(default_factory=Counter)
    requested: Counter = field(default_factory=Counter)
    distinct: Counter = field(default_factory=Counter)
    dots: Counter = field(default_factory=Counter)  # (a dtype, b dtype, precision, M, N, K) -> calls
    _addresses: Dict = field(default_factory=lambda: defaultdict(list))  # (kind, element bytes) -> arrays

    @property
    def programs(self) -> int:
        return math.prod(self.grid)

    @property
    def macs(self) -> int:
        return sum(calls * M * N * K for (*_, M, N, K), calls in self.dots.items())

    def record(self, kind: str, addresses, size: int) -> None:
        self.calls[kind] += 1
        self.requested[kind] += size * addresses.size
        self._addresses[kind, size].append(addresses.ravel().copy())

    def close(self) -> None:
        """Count the distinct addresses once the launch is over."""
        import numpy as np

        for (kind, size), parts in self._addresses.items():
            self.distinct[kind] += size * len(np.unique(np.concatenate(parts)))
        self._addresses = {}


@dataclass
class TorchOp:
    """One PyTorch (aten) op run between the launches."""
    name: str
    phase: str
    after_launch: int  # launches before it
    shapes: List[str]
    bytes: int
    scan_length: Optional[int] = None  # the length of the dimension a scan walks

    def sequential(self, N: int) -> bool:
        return self.scan_length is not None and self.scan_length == N > 1


def _dtype_name(dtype) -> str:
    """torch.float32 -> fp32, torch.bfloat16 -> bf16, torch.int8 -> int8."""
    return str(dtype).replace("torch.", "").replace("bfloat", "bf").replace("float", "fp")


class InterpreterCounter(contextlib.AbstractContextManager):
    """While entered: every kernel launch of Triton's interpreter, its loads, stores and dots, and
    every PyTorch op outside the launches is recorded; leaving puts every patched function back.
    Needs Triton imported under TRITON_INTERPRET=1 (the kernels are then interpreted)."""

    def __init__(self):
        self.launches: List[Launch] = []
        self.torch_ops: List[TorchOp] = []
        self.phase = "forward"
        self._current: Optional[Launch] = None
        self._restore: List[tuple] = []
        self._mode = None

    def _patch(self, owner, name, make):
        original = getattr(owner, name)
        self._restore.append((owner, name, original))
        setattr(owner, name, make(original))

    def __enter__(self):
        import triton.runtime.autotuner as autotuner
        import triton.runtime.interpreter as interpreter

        builder = interpreter.InterpreterBuilder
        self._patch(builder, "create_masked_load", lambda f: self._counted(f, "load", value_arg=False))
        self._patch(builder, "create_masked_store", lambda f: self._counted(f, "store", value_arg=True))
        self._patch(builder, "create_dot", self._dot)
        self._patch(builder, "set_grid_dim", self._grid)
        self._patch(interpreter.GridExecutor, "__call__", self._launch)
        self._patch(interpreter.FunctionRewriter, "_compile_and_exec", _tensor_loop_variables)
        _forget_rewritten(interpreter)
        # The interpreter has no timer: an autotuned kernel runs its first configuration.
        self._patch(autotuner.Autotuner, "prune_configs", lambda f: lambda tuner, kwargs: f(tuner, kwargs)[:1])
        self._mode = _TorchOps(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        for owner, name, original in reversed(self._restore):
            setattr(owner, name, original)
        self._restore.clear()
        import triton.runtime.interpreter as interpreter

        _forget_rewritten(interpreter)
        return False

    @contextlib.contextmanager
    def during(self, phase: str):
        """Record what runs inside as ``phase`` ("forward", "backward")."""
        before, self.phase = self.phase, phase
        try:
            yield
        finally:
            self.phase = before

    # Triton's interpreter, patched.
    def _launch(self, original):
        counter = self

        def launch(executor, *args, **kwargs):
            meta = {k: v for k, v in kwargs.items() if k in executor.constexprs and isinstance(v, (bool, int, str))}
            counter._current = Launch(executor.fn.__name__, meta, counter.phase)
            try:
                return original(executor, *args, **kwargs)
            finally:
                counter._current.close()
                counter.launches.append(counter._current)
                counter._current = None
        return launch

    def _grid(self, original):
        counter = self

        def set_grid_dim(builder, nx, ny, nz):
            if counter._current is not None:
                counter._current.grid = (nx, ny, nz)
            return original(builder, nx, ny, nz)
        return set_grid_dim

    def _counted(self, original, kind: str, value_arg: bool):
        counter = self

        import numpy as np
        from triton.language import int1
        from triton.runtime.interpreter import TensorHandle

        def memory_op(builder, ptrs, *args):
            args = list(args)
            at = 1 if value_arg else 0
            mask = args[at].data
            if mask.dtype != np.bool_:  # a splat scalar comparison (the interpreter gives it its operands' type)
                args[at] = TensorHandle(mask.astype(np.bool_), int1)
            launch = counter._current
            if launch is not None:
                size = max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
                launch.record(kind, ptrs.data[np.broadcast_to(args[at].data, ptrs.data.shape)], size)
            return original(builder, ptrs, *args)
        return memory_op

    def _dot(self, original):
        counter = self

        def dot(builder, a, b, d, input_precision, max_num_imprecise_acc):
            if counter._current is not None:
                *batch, M, K = a.data.shape
                precision = str(input_precision).rsplit(".", 1)[-1].lower()
                key = (str(a.dtype), str(b.dtype), precision, M, b.data.shape[-1], K)
                counter._current.dots[key] += math.prod(batch)
            return original(builder, a, b, d, input_precision, max_num_imprecise_acc)
        return dot


def _torch_ops_mode():
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode


class _TorchOps(_torch_ops_mode()):
    """Records the aten ops that run outside a launch (the interpreter's own copies are inside)."""

    def __init__(self, counter: InterpreterCounter):
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.counter._current is None:
            self.counter.torch_ops.append(_torch_op(func, args, kwargs or {}, out, self.counter))
        return out


def _torch_op(func, args, kwargs, out, counter: InterpreterCounter) -> TorchOp:
    import torch
    from torch.utils._pytree import tree_flatten

    name = func.overloadpacket.__name__
    read = {k: v for k, v in kwargs.items() if k != "out"}  # out= is written (it is among the results)
    inputs = [x for x in tree_flatten((args, read))[0] if isinstance(x, torch.Tensor)]
    outputs = [x for x in tree_flatten(out)[0] if isinstance(x, torch.Tensor)]
    nbytes = lambda xs: sum(x.numel() * x.element_size() for x in xs)  # noqa: E731
    if func.is_view or name in ALLOCATIONS or name.startswith("_has_") or name in ("detach", "alias"):
        moved = 0
    elif name in FILLS or name.startswith("new_") or name.endswith("_like"):  # written, nothing read
        moved = nbytes(outputs)
    elif name in ("copy_", "fill_", "zero_"):  # the destination is written, not read
        moved = nbytes(inputs[1:]) + nbytes(outputs)
    elif name in GATHERS:  # reads the rows it selects (as many as it writes) and the index
        moved = 2 * nbytes(outputs) + nbytes(inputs[1:])
    else:
        moved = nbytes(inputs) + nbytes(outputs)
    scan_length = None
    if name in SCANS:
        dim = kwargs.get("dim", args[1] if len(args) > 1 else 0)
        scan_length = args[0].shape[dim]
    shapes = ["x".join(map(str, x.shape)) + " " + _dtype_name(x.dtype) for x in inputs]
    return TorchOp(name, counter.phase, len(counter.launches), shapes, moved, scan_length)


