"""Counted traffic and work of one forward + backward on the Triton kernels, under Triton's
interpreter (TRITON_INTERPRET=1, CPU): per kernel the launches and programs, the bytes loaded and
stored, the ``tl.dot`` products by operand type and tile shape, and every PyTorch op between the
launches, with those that scan the sequence (N dependent steps on a GPU) flagged.

    python -m tools.kernel_counts --out-dir docs/gpu_counts --replace
    python -m tools.kernel_counts -N 256 --batch 2 --heads 2 -d 64 -n 64 --dtype fp32 --ops abc --out-dir DIR

The ops: causal ABC (``ops.causal.causal_abc``) and causal GSA (``ops.gsa.causal_gsa``) with
backend="triton", and flash-linear-attention's ``chunk_abc`` / ``chunk_gsa`` (fla-core) on the same
problem in fla's layout [B, T, H, *]. Bytes count only the active lanes of each load and store
(the mask's True lanes), two ways: requested (every lane of every load, reloads included) and
distinct (each address once per launch: the traffic of a perfect cache, which is what
``tools.causal_cost`` models; its per-launch bytes are set beside both). A PyTorch op's bytes are
its tensor operands read once and its results written once (views and allocations move nothing,
fills and new tensors only write, index_select reads the rows it selects).
fla's autotuned kernels run their first configuration (the interpreter cannot time the others).
Writes counts.json and counts.md (commit, command, sizes) to --out-dir.
"""

import argparse
import contextlib
import json
import math
import os
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional

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
KERNEL_VARIABLES = ("ABC_TRITON_NORMALISER", "ABC_TRITON_CHUNK")  # what chooses the kernels' path, when set


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


# Compiled Triton makes the variable of a kernel's `for i in range(...)` a tensor (i.to(...) is
# valid); the interpreter runs Python's range, whose ints have no .to(). fla's kernels call it:
# their rewritten copies see a range yielding int32 scalars instead (a copy of their module's
# globals; the module itself is untouched).
TENSOR_LOOP_MODULES = ("fla.",)


def _tensor_range(*args):
    import numpy as np
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    bounds = [int(a.handle.data.item()) if isinstance(a, tl.tensor) else int(getattr(a, "value", a)) for a in args]
    for i in range(*bounds):
        yield tl.tensor(TensorHandle(np.array([i], dtype=np.int32), tl.int32), tl.int32)


def _tensor_loop_variables(original):
    def compile_and_exec(rewriter, tree):
        if not rewriter.fn.__module__.startswith(TENSOR_LOOP_MODULES):
            return original(rewriter, tree)
        import triton.runtime.interpreter as interpreter

        fn_globals = dict(rewriter.fn.__globals__, range=_tensor_range)
        for key, value in vars(interpreter).items():
            fn_globals.setdefault(key, value)
        namespace = dict(rewriter.kwargs)
        exec(compile(tree, filename=rewriter.filename, mode="exec"), fn_globals, namespace)
        return namespace[rewriter.fn.__name__]
    return compile_and_exec


def _forget_rewritten(interpreter) -> None:
    """Drop the interpreter's rewritten copies of the kernels that get tensor loop variables."""
    cache = interpreter.InterpretedFunction.rewritten_fn
    for fn in [fn for fn in cache if fn.__module__.startswith(TENSOR_LOOP_MODULES)]:
        del cache[fn]


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


# The problems, and the ops run on them.
@dataclass
class Sizes:
    N: int
    batch: int
    heads: int
    d: int
    n: int
    chunk: int
    dtype: str  # "fp32" or "fp16"


def _inputs(sizes: Sizes, widths, time_first: bool, seed: int):
    """Leaf tensors [B, H, N, w] (or [B, N, H, w] with ``time_first``, fla's layout), N(0, 1)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, DTYPES[sizes.dtype])
    shape = (sizes.batch, sizes.N, sizes.heads) if time_first else (sizes.batch, sizes.heads, sizes.N)
    return [torch.randn(*shape, w, generator=gen).to(dtype) for w in widths]


def _problem(op: str, sizes: Sizes):
    """(call, leaves): ``call()`` runs the op's forward on the leaves (which need gradients)."""
    import torch

    fla = op.startswith("fla-")
    q, k, v, x = _inputs(sizes, (sizes.d, sizes.d, sizes.d, sizes.n), time_first=fla, seed=0)
    if op.endswith("gsa"):  # the gsa strategy's gates: g = logsigmoid(x) / 8, write weights 1 - exp(g)
        g = (torch.nn.functional.logsigmoid(x.float()) / 8.0).to(x.dtype)
        x = g if op == "gsa" else torch.stack([(-torch.expm1(g.float())).to(g.dtype), g])
    leaves = [t.requires_grad_() for t in (q, k, v, x)]
    if op == "abc":
        from abc_fairseq.ops.causal.op import causal_abc

        return (lambda: causal_abc(*leaves, chunk_size=sizes.chunk, backend="triton")), leaves
    if op == "gsa":
        from abc_fairseq.ops.gsa.op import causal_gsa

        return (lambda: causal_gsa(*leaves, chunk_size=sizes.chunk, backend="triton")), leaves
    if op == "fla-abc":
        from fla.ops.abc import chunk_abc

        return (lambda: chunk_abc(*leaves)[0]), leaves
    from fla.ops.gsa import chunk_gsa

    return (lambda: chunk_gsa(q, k, v, x[0], x[1])[0]), leaves


def count(op: str, sizes: Sizes):
    """One forward + backward of ``op`` on ``sizes``, counted: (counter, output, leaves); the
    output's gradient is N(0, 1)."""
    import torch

    call, leaves = _problem(op, sizes)
    weight = torch.randn(leaves[0].shape, generator=torch.Generator().manual_seed(1)).to(leaves[0].dtype)
    counter = InterpreterCounter()
    with counter:
        with counter.during("forward"):
            out = call()
        with counter.during("backward"):
            torch.autograd.grad(out, leaves, weight)
    return counter, out.detach(), [t.detach() for t in leaves]


def reference_error(op: str, out, leaves) -> float:
    """max |out - ours on the PyTorch path| / max |ours|, in fp32: that the counted run computed the
    op (fla's outputs set against ours on the same problem)."""
    from abc_fairseq.ops.causal.op import causal_abc
    from abc_fairseq.ops.gsa.op import causal_gsa

    q, k, v, x = (t.float() for t in leaves)
    if op.startswith("fla-"):
        q, k, v, x = (t.transpose(-3, -2) for t in (q, k, v, x))
        out = out.transpose(1, 2)
    if op.endswith("gsa"):
        ref = causal_gsa(q, k, v, x if op == "gsa" else x[1], backend="torch")
    else:
        ref = causal_abc(q, k, v, x, backend="torch")
    return float((out.float() - ref).abs().max() / ref.abs().max())


# The report.
def _flags(meta: Dict) -> str:
    return ", ".join(k for k, v in meta.items() if v is True)


def model_name(launch: Launch) -> str:
    """The name ``tools.causal_cost`` gives this launch."""
    if launch.kernel == "chunk_scan_kernel":
        return f"chunk_scan_kernel ({'reverse' if launch.meta.get('REVERSE') else 'forward'})"
    return launch.kernel


def model_rows(counter: InterpreterCounter, sizes: Sizes) -> List[dict]:
    """Per launch of ``tools.causal_cost.causal_launches`` at ``sizes`` (and the normaliser the op
    ran, where the model takes one): its bytes, multiply-adds and programs beside the counted ones.
    Its PyTorch rows before the first kernel are set against the forward's counted PyTorch ops,
    those after the last against the backward's."""
    import inspect

    from . import causal_cost

    args = dict(Z=sizes.batch * sizes.heads, N=sizes.N, d=sizes.d, dv=sizes.d, n=sizes.n, C=sizes.chunk,
                P=4 if sizes.dtype == "fp32" else 2)
    if "normaliser" in inspect.signature(causal_cost.causal_launches).parameters:
        # the path the op ran: the normalisers found in the kernels, or by a PyTorch logcumsumexp
        scanned = any(op.name in SCANS for op in counter.torch_ops)
        args["normaliser"] = "logcumsumexp" if scanned else "chunked"
    model = causal_cost.causal_launches(**args)
    kernels = [i for i, row in enumerate(model) if not row.name.startswith("PyTorch")]
    by_name = defaultdict(list)
    for launch in counter.launches:
        by_name[model_name(launch)].append(launch)
    glue = {phase: sum(op.bytes for op in counter.torch_ops if op.phase == phase) for phase in ("forward", "backward")}
    rows, glue_model = [], {"forward": [], "backward": []}
    for i, row in enumerate(model):
        if row.name.startswith("PyTorch"):
            glue_model["forward" if i < kernels[0] else "backward"].append(row)
            continue
        launches = by_name.pop(row.name, [])
        counted = dict(distinct=sum(sum(x.distinct.values()) for x in launches),
                       requested=sum(sum(x.requested.values()) for x in launches),
                       macs=sum(x.macs for x in launches), programs=sum(x.programs for x in launches))
        rows.append(dict(name=row.name, model_bytes=row.bytes, model_macs=row.macs, model_programs=row.programs,
                         **(counted if launches else {})))
    for name, launches in by_name.items():  # counted, not in the model
        rows.append(dict(name=name, model_bytes=None, distinct=sum(sum(x.distinct.values()) for x in launches)))
    for phase, listed in glue_model.items():
        names = ", ".join(r.name.split(": ", 1)[-1] for r in listed) or "none in the model"
        rows.append(dict(name=f"PyTorch ({phase}): {names}",
                         model_bytes=sum(r.bytes for r in listed) if listed else None, distinct=glue[phase]))
    rows.append(dict(name="model call", call="causal_launches(" + ", ".join(f"{k}={v}" for k, v in args.items()) + ")"))
    for row in rows:
        if row.get("model_bytes") and row.get("distinct") is not None:
            row["ratio"] = row["distinct"] / row["model_bytes"]
            row["flag"] = abs(row["ratio"] - 1) > FLAG_RATIO
    return rows


def _n(x) -> str:
    return "-" if x is None else f"{x:,.0f}" if isinstance(x, (int, float)) else str(x)


def op_markdown(op: str, result: dict, N: int) -> str:
    """One op's section: launches, products, PyTorch ops, the model beside the counts."""
    lines = [f"## {op}\n", f"Output against ours on the PyTorch path (max abs difference / max abs): "
             f"{result['reference_error']:.1e}.\n",
             "| # | phase | kernel | flags | grid | programs | loads / program | loaded B (lanes) "
             "| loaded B (distinct) | stored B (lanes) | stored B (distinct) | dot MACs |", "|" + "---|" * 12]
    for i, x in enumerate(result["launches"]):
        lines.append(f"| {i + 1} | {x['phase']} | {x['kernel']} | {x['flags']} | {'x'.join(map(str, x['grid']))} | "
                     f"{x['programs']:,} | {x['calls'].get('load', 0) / x['programs']:.0f} | "
                     f"{_n(x['requested'].get('load', 0))} | {_n(x['distinct'].get('load', 0))} | "
                     f"{_n(x['requested'].get('store', 0))} | {_n(x['distinct'].get('store', 0))} | {_n(x['macs'])} |")
    total = lambda key, kind: sum(x[key].get(kind, 0) for x in result["launches"])  # noqa: E731
    lines.append(f"| | | total | | | {sum(x['programs'] for x in result['launches']):,} | | "
                 f"{_n(total('requested', 'load'))} | {_n(total('distinct', 'load'))} | "
                 f"{_n(total('requested', 'store'))} | "
                 f"{_n(total('distinct', 'store'))} | {_n(sum(x['macs'] for x in result['launches']))} |")
    lines += ["", "Products (`tl.dot`), by launch: operand types, input precision, tile M x N x K, calls (all "
              "programs), multiply-adds.\n", "| # | kernel | operands | precision | M x N x K | calls | MACs |",
              "|" + "---|" * 7]
    for i, x in enumerate(result["launches"]):
        for dot in x["dots"]:
            lines.append(f"| {i + 1} | {x['kernel']} | {dot['a']} x {dot['b']} | {dot['precision']} | "
                         f"{dot['M']} x {dot['N']} x {dot['K']} | {dot['calls']:,} | {dot['macs']:,} |")
    lines += ["", "PyTorch ops outside the launches, in order (after launch #: how many launches ran before; "
              "bytes: operands read once, results written once; fills and new tensors only written, "
              "index_select reads what it selects).\n",
              "| after launch # | phase | op | operands | bytes | scan length | sequential over N |", "|" + "---|" * 7]
    for t in result["torch_ops"]:
        steps = f"**yes: {N} dependent steps**" if t["sequential"] else ""
        lines.append(f"| {t['after_launch']} | {t['phase']} | {t['name']} | {'; '.join(t['shapes'])} | "
                     f"{_n(t['bytes'])} | {_n(t['scan_length'])} | {steps} |")
    if result.get("model"):
        lines += ["", "Against `tools.causal_cost` (bytes: the model counts every tensor once, so the distinct "
                  "count is its counterpart; flagged when more than 10% apart).\n",
                  "| launch | programs (model) | programs | bytes (model) | bytes (distinct) | ratio | bytes (lanes) "
                  "| MACs (model) | dot MACs | flag |", "|" + "---|" * 10]
        for r in result["model"]:
            if "call" in r:
                lines.append(f"| model: `tools.causal_cost.{r['call']}` |" + " |" * 9)
                continue
            ratio = f"{r['ratio']:.3f}" if "ratio" in r else "-"
            lines.append(f"| {r['name']} | {_n(r.get('model_programs'))} | {_n(r.get('programs'))} | "
                         f"{_n(r.get('model_bytes'))} | {_n(r.get('distinct'))} | {ratio} | {_n(r.get('requested'))} | "
                         f"{_n(r.get('model_macs'))} | {_n(r.get('macs'))} | {'**> 10%**' if r.get('flag') else ''} |")
    return "\n".join(lines) + "\n"


def summary_markdown(ops: Dict[str, dict]) -> str:
    """One line per op: the totals of its launches and of the PyTorch ops between them."""
    lines = ["| op | launches | programs | loaded B (distinct) | stored B (distinct) | dot MACs | PyTorch ops moving "
             "data | their bytes | scans over N |", "|" + "---|" * 9]
    for op, result in ops.items():
        launches, moving = result["launches"], [t for t in result["torch_ops"] if t["bytes"]]
        total = lambda kind: sum(x["distinct"].get(kind, 0) for x in launches)  # noqa: E731
        lines.append(f"| {op} | {len(launches)} | {sum(x['programs'] for x in launches):,} | {total('load'):,} | "
                     f"{total('store'):,} | {sum(x['macs'] for x in launches):,} | {len(moving)} | "
                     f"{sum(t['bytes'] for t in moving):,} | {', '.join(result['sequential']) or '-'} |")
    return "\n".join(lines)


def op_record(op: str, sizes: Sizes) -> dict:
    """The counts of one op as plain data (the JSON's and the markdown's)."""
    counter, out, leaves = count(op, sizes)
    launches = [dict(kernel=x.kernel, phase=x.phase, meta=x.meta, flags=_flags(x.meta), grid=list(x.grid),
                     programs=x.programs, calls=dict(x.calls), requested=dict(x.requested),
                     distinct=dict(x.distinct), macs=x.macs,
                     dots=[dict(a=a, b=b, precision=p, M=M, N=N, K=K, calls=c, macs=c * M * N * K)
                           for (a, b, p, M, N, K), c in sorted(x.dots.items())])
                for x in counter.launches]
    torch_ops = [dict(vars(t), sequential=t.sequential(sizes.N)) for t in counter.torch_ops]
    return dict(launches=launches, torch_ops=torch_ops, reference_error=reference_error(op, out, leaves),
                sequential=[t["name"] for t in torch_ops if t["sequential"]],
                model=model_rows(counter, sizes) if op == "abc" else None)


# The command line.
HEADER = "# Counted traffic and work of the Triton kernels under Triton's interpreter"
H100_SHARED = 232448  # bytes of shared memory one block may opt into on an H100 (sm_90)


def launcher_chunk(N: int, d: int, n: int, dtype: str) -> int:
    """The chunk the causal launcher takes on an H100 without measuring (``sizes.device_chunk``:
    the compile table's largest chunk without spills, else the one spilling least)."""
    import torch

    from abc_fairseq.ops.backend import kernel_chunk
    from abc_fairseq.ops.triton.sizes import pick_chunk

    return pick_chunk(kernel_chunk(64, N), 90, H100_SHARED, n, d, d, getattr(torch, DTYPES[dtype]))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.kernel_counts", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-N", "--length", type=int, default=512, help="sequence length N (default: %(default)s)")
    parser.add_argument("--batch", type=int, default=1, help="batch B (default: %(default)s)")
    parser.add_argument("--heads", type=int, default=2, help="heads H (default: %(default)s)")
    parser.add_argument("-d", "--head-dim", type=int, default=64, help="key and value width d (default: %(default)s)")
    parser.add_argument("-n", "--memory", type=int, default=64, help="memory slots n (default: %(default)s)")
    parser.add_argument("--chunk", type=int, default=None,
                        help="our kernels' chunk C (default: what the launcher takes on an H100 from "
                             "compile_table.json without measuring; fla picks its own)")
    parser.add_argument("--dtype", choices=tuple(DTYPES), default="fp16", help="input dtype (default: %(default)s)")
    parser.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS), help="ops to count (default: all)")
    parser.add_argument("--out-dir", default="docs/gpu_counts",
                        help="folder for counts.{json,md} (default: %(default)s)")
    parser.add_argument("--replace", action="store_true",
                        help="replace counts.{json,md} in --out-dir when this tool wrote them (never other files)")
    return parser


def _check(args, parser) -> None:
    for flag in ("length", "batch", "heads", "head_dim", "memory"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.chunk is not None and args.chunk not in (16, 32, 64, 128):
        parser.error(f"--chunk must be 16, 32, 64 or 128, got {args.chunk}")
    if any(op.startswith("fla-") for op in args.ops) and args.memory & (args.memory - 1):
        parser.error(f"--memory {args.memory}: fla's chunk_abc / chunk_gsa take a power of two (drop the fla ops)")
    for name in ("counts.json", "counts.md"):
        path = os.path.join(args.out_dir, name)
        if os.path.exists(path) and not (args.replace and _ours(path)):
            parser.error(f"--out-dir {args.out_dir} already holds {name}"
                         + (" (not written by this tool: nothing is overwritten)" if args.replace
                            else ": pass --replace to replace what this tool wrote, or name a new folder"))


def _ours(path: str) -> bool:
    """Whether ``path`` is a counts file this tool wrote."""
    with open(path) as f:
        text = f.read()
    if path.endswith(".json"):
        try:
            return json.loads(text).get("tool") == "tools.kernel_counts"
        except ValueError:
            return False
    return text.startswith(HEADER)


def _dirty_paths() -> List[str]:
    """Uncommitted changes to the code counted (the kernels, the ops, the model), as git lists them."""
    import subprocess

    try:
        return subprocess.run(["git", "status", "--porcelain", "--", "abc_fairseq/ops", "tools/causal_cost.py"],
                              capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return []


def _interpreted() -> bool:
    """Switch Triton's interpreter on before Triton is imported; False if it was imported compiled."""
    if "triton" not in sys.modules:
        os.environ["TRITON_INTERPRET"] = "1"
        return True
    from triton import knobs

    return bool(knobs.runtime.interpret)


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _check(args, parser)
    if not _interpreted():
        parser.error("Triton was imported without its interpreter: run this tool in its own process")
    chunk = args.chunk or launcher_chunk(args.length, args.head_dim, args.memory, args.dtype)
    sizes = Sizes(args.length, args.batch, args.heads, args.head_dim, args.memory, chunk, args.dtype)
    from benchmarks.environment import environment_info

    record = dict(tool="tools.kernel_counts", environment=environment_info(
        "python -m tools.kernel_counts", sys.argv[1:] if argv is None else list(map(str, argv))),
        uncommitted=_dirty_paths(), sizes=vars(sizes), ops={}, unavailable={},
        variables={name: os.environ[name] for name in KERNEL_VARIABLES if name in os.environ})
    for op in args.ops:
        print(f"counting {op} ...", flush=True)
        try:
            record["ops"][op] = op_record(op, sizes)
        except ImportError as error:  # fla-core absent
            record["unavailable"][op] = f"{type(error).__name__}: {error}"
    text = markdown(record)
    os.makedirs(args.out_dir, exist_ok=True)
    mode = "w" if args.replace else "x"
    with open(os.path.join(args.out_dir, "counts.json"), mode) as f:
        json.dump(record, f, indent=1)
    with open(os.path.join(args.out_dir, "counts.md"), mode) as f:
        f.write(text)
    print(text)
    print(f"wrote {os.path.join(args.out_dir, 'counts.json')} and counts.md")
    return 0


def markdown(record: dict) -> str:
    env, sizes = record["environment"], record["sizes"]
    lines = [HEADER, "", f"Command: `{env['command']}` at commit {env['commit']} ({env['date']}, {env['cpu_model']}, "
             f"torch {env['torch']}).", "",
             f"Sizes: N = {sizes['N']}, batch {sizes['batch']}, heads {sizes['heads']}, d = dv = {sizes['d']}, "
             f"n = {sizes['n']}, chunk C = {sizes['chunk']} (ours; fla picks its own), {sizes['dtype']} inputs.", "",
             "Bytes count the active lanes only (a masked-off lane moves nothing): `lanes` is every active lane of "
             "every tl.load / tl.store (reloads included), `distinct` each address once per launch (a perfect "
             "cache). fla's autotuned kernels run their first configuration; its kernels' loop variables are made "
             "tensors as compiled Triton makes them (the interpreter gives Python ints, on which fla's `.to()` fails), "
             "and a scalar mask splat over a block is passed as bool (the interpreter keeps its operands' integer "
             "type and refuses it).",
             ""]
    if record.get("variables"):
        lines += ["Set for the run: " + ", ".join(f"`{k}={v}`" for k, v in record["variables"].items()) + ".", ""]
    if record["uncommitted"]:
        lines += ["**Uncommitted changes in the counted code:** " + "; ".join(record["uncommitted"]), ""]
    for op, reason in record["unavailable"].items():
        lines += [f"{op}: not counted ({reason}).", ""]
    if record["ops"]:
        lines += [summary_markdown(record["ops"]), ""]
    for op, result in record["ops"].items():
        lines.append(op_markdown(op, result, sizes["N"]))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
