"""flash-linear-attention (fla-core, requirements.txt) as the peer of our ops.

- ``causal_abc`` against fla-core's own CPU reference ``fla.ops.abc.naive.naive_recurrent_abc``
  (heads first, [B, H, T, *]; it computes in fp32): outputs and final memories, fp32 and fp64.
- What the self-check and the benchmarks time as fla (``abc_fairseq.selfcheck.fla_peer``: fla's
  layout [B, T, H, *], its arguments built from ours) is our problem: fla's ``chunk_abc`` and
  ``chunk_gsa`` kernels, run under Triton's interpreter, equal ``causal_abc`` and ``causal_gsa``
  in values and gradients, fp32 and fp16; the old call (our [B, H, N, *] handed over unchanged)
  does not.

Triton 3.9's interpreter cannot run fla's chunk kernels as they stand; ``_interpreter_as_compiler``
makes it do what the compiler does, in three places (each named there). Our ops run on their
PyTorch path here: the layout question is fla's call, not our kernels (tests/kernels check those).
"""

import builtins
import sys
import warnings

# fla-core is pinned in requirements.txt: a missing install fails here instead of skipping the peer checks.
import fla.ops.abc.naive as fla_abc_naive
import pytest
import torch
from gsa_helpers import assert_rows_close

import abc_fairseq.ops.bidirectional  # noqa: F401 (interpret_kernels re-imports the kernels of every family)
from abc_fairseq.ops import causal_abc
from abc_fairseq.ops.gsa import causal_gsa
from abc_fairseq.selfcheck import fla_peer


def _abc_problem(B, H, N, d, n, dv, logit_scale, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(B, H, N, d, generator=gen, dtype=torch.float64) for _ in range(2))
    v = torch.randn(B, H, N, dv, generator=gen, dtype=torch.float64)
    logits = logit_scale * torch.randn(B, H, N, n, generator=gen, dtype=torch.float64)
    return tuple(t.to(dtype) for t in (q, k, v, logits))


# ------------------------------------------------------------ fla-core's naive recurrent ABC (CPU)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("logit_scale", [1.0, 30.0])
@pytest.mark.parametrize("B,H,N,d,n,dv", [(1, 1, 1, 4, 3, 5), (2, 3, 17, 8, 5, 6), (1, 2, 40, 16, 16, 16)])
def test_causal_abc_equals_fla_naive_recurrent_abc(B, H, N, d, n, dv, logit_scale, dtype):
    """fla's ``naive_recurrent_abc(q, k, v, s)`` on s = our phi_logits, heads first: the same
    outputs, and final memories hk = K~_N^T, hv = V~_N (fla keeps them prefix-normalised, as ours)."""
    naive = fla_abc_naive
    q, k, v, logits = _abc_problem(B, H, N, d, n, dv, logit_scale, dtype)
    ours, state = causal_abc(q, k, v, logits, backend="torch", return_state=True)
    theirs, (hk, hv) = naive.naive_recurrent_abc(q, k, v, logits, output_final_state=True)
    assert theirs.dtype == dtype and theirs.shape == ours.shape
    tol = 2e-5  # fla's reference computes in fp32 whatever the inputs' dtype
    assert_rows_close(theirs.double(), ours.double(), tol)
    torch.testing.assert_close(hk.double(), state.key_memory.transpose(-1, -2).double(), rtol=tol, atol=tol)
    torch.testing.assert_close(hv.double(), state.value_memory.double(), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------- the helper alone
def test_helper_records_the_installed_fla_and_moves_time_before_heads():
    import fla

    assert fla_peer.fla_version() == fla.__version__
    assert fla_peer.fla_record() == {"fla_version": fla.__version__, "fla_layout": "[B, T, H, *]"}
    x = torch.arange(2 * 3 * 5 * 4.0).view(2, 3, 5, 4)  # [B, H, N, *]
    (moved,) = fla_peer.to_fla_layout(x)
    assert moved.shape == (2, 5, 3, 4) and moved.is_contiguous()
    assert torch.equal(moved[1, 4, 2], x[1, 2, 4])
    assert torch.equal(fla_peer.to_our_layout(moved), x)
    with pytest.raises(ValueError, match="unknown kind"):
        fla_peer.fla_op("rfa")


# ------------------------------------------------------- fla's chunk kernels under the interpreter
def _fla_modules():
    return [name for name in sys.modules if name == "fla" or name.startswith("fla.")]


def _interpreter_as_compiler(patches: pytest.MonkeyPatch) -> None:
    """Three places where Triton 3.9's interpreter differs from the compiler on fla's kernels:

    1. ``triton.autotune`` times its configs through the GPU driver, which does not exist here:
       every config is reported equally fast, so the first is taken (every config computes the
       same result; only its speed differs).
    2. A loop ``for i_t in range(NT)`` in a kernel counts with Python ints, which have no
       ``.to(tl.int64)`` (fla's kernels call it); the compiler counts with Triton scalars. In the
       kernels of fla's modules (only there: host code keeps Python's range) the counter is one.
    3. A comparison of integer scalars keeps the left operand's type (int64) instead of int1, so
       ``tl.load(p, mask=t < T)`` fails with "mask has unsupported dtype"; here it is int1.
    """
    import numpy as np
    import triton.language as tl
    from triton.runtime import autotuner, interpreter

    patches.setattr(autotuner.Autotuner, "do_bench", property(lambda self: lambda call, quantiles: [1.0] * 3))
    patches.setattr(autotuner.Autotuner, "check_disk_cache", lambda self, key, configs, bench: bench() and False)

    def kernel_name(obj):
        interpreted = False
        while hasattr(obj, "fn"):
            interpreted = interpreted or isinstance(obj, interpreter.InterpretedFunction)
            obj = obj.fn
        return getattr(obj, "__name__", None) if interpreted else None

    kernels = set()

    def loop_range(*bounds):
        if sys._getframe(1).f_code.co_name not in kernels:
            return builtins.range(*bounds)
        ints = [int(b.handle.data.item()) if hasattr(b, "handle") else int(b) for b in bounds]
        return (interpreter._implicit_cvt(i) for i in builtins.range(*ints))

    for name in _fla_modules():
        module = sys.modules[name]
        found = {kernel_name(value) for value in vars(module).values()} - {None}
        if found:
            kernels |= found
            patches.setitem(vars(module), "range", loop_range)

    def to_int1(compare):
        return lambda self, lhs, rhs: interpreter.TensorHandle(compare(self, lhs, rhs).data.astype(np.bool_), tl.int1)

    builder = interpreter.InterpreterBuilder
    for name in dir(builder):
        if name.startswith(("create_icmp", "create_fcmp")):
            patches.setattr(builder, name, to_int1(getattr(builder, name)))


@pytest.fixture(scope="module")
def fla_ops():
    """fla's chunk_abc and chunk_gsa imported afresh under TRITON_INTERPRET=1 (with Triton and our
    kernels, tests/triton_helpers), the earlier modules put back afterwards."""
    from triton_helpers import interpret_kernels

    kernels = interpret_kernels()
    next(kernels)
    saved = {name: sys.modules.pop(name) for name in _fla_modules()}
    patches = pytest.MonkeyPatch()
    try:
        patches.setenv("FLA_CACHE_RESULTS", "0")  # no autotuning cache on disk: it asks the GPU driver
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fla warns that it found no GPU
            ops = {kind: fla_peer.fla_op(kind) for kind in fla_peer.KINDS}
        _interpreter_as_compiler(patches)
        yield ops
    finally:
        patches.undo()
        for name in _fla_modules():
            del sys.modules[name]
        sys.modules.update(saved)
        next(kernels, None)


# (values, gradients) row-relative tolerances: fp32 products are exact on both sides; in fp16
# fla rounds its intra-chunk products to fp16, ours to fp16 at the output only.
TOLERANCES = {torch.float32: (1e-5, 1e-5), torch.float16: (4e-3, 1e-2)}


def _our_inputs(kind, dtype):
    """B = 1, H = 2 (distinct from N, so that a swapped layout shows), N = 72 (fla's chunk is 64
    rows: the second chunk reads the first one's memory), d = n = dv = 16."""
    q, k, v, logits = _abc_problem(1, 2, 72, 16, 16, 16, 1.0, torch.float32, seed=3)
    control = logits if kind == "abc" else torch.nn.functional.logsigmoid(logits) / 8  # GSA: log gates <= 0
    return [t.to(dtype).requires_grad_() for t in (q, k, v, control)]


def _max_relative(got, expected):
    return ((got.double() - expected.double()).abs().max() / expected.double().abs().max()).item()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("kind", ["abc", "gsa"])
def test_what_is_timed_as_fla_is_our_problem(fla_ops, kind, dtype):
    """fla_peer.fla_as_ours (fla's kernels on our arguments) = causal_abc / causal_gsa at the
    default scale: values and the gradients of every input, in the dtype's tolerance."""
    inputs = _our_inputs(kind, dtype)
    ours_op = causal_abc if kind == "abc" else causal_gsa
    ours = ours_op(*inputs, backend="torch")
    theirs = fla_peer.fla_as_ours(kind, *inputs, op=fla_ops[kind])
    assert theirs.shape == ours.shape and theirs.dtype == dtype
    values_tol, grads_tol = TOLERANCES[dtype]
    assert_rows_close(theirs.double(), ours.double(), values_tol)
    weight = torch.randn(ours.shape, generator=torch.Generator().manual_seed(5)).to(dtype)
    ours_grads = torch.autograd.grad((ours * weight).sum(), inputs)
    theirs_grads = torch.autograd.grad((theirs * weight).sum(), inputs)
    for name, got, expected in zip(("q", "k", "v", "control"), theirs_grads, ours_grads):
        assert _max_relative(got, expected) <= grads_tol, name


def test_the_old_call_solved_another_problem(fla_ops):
    """Our [B, H, N, *] handed to chunk_abc unchanged (the call timed on the H100 before): fla
    reads H as time (here 5 sequences of 2 rows), so its result is not ours, by far more than any
    rounding."""
    q, k, v, logits = _abc_problem(1, 2, 5, 16, 16, 16, 1.0, torch.float32, seed=3)
    ours = causal_abc(q, k, v, logits, backend="torch")
    old = fla_peer.fla_attention("abc", q, k, v, logits, op=fla_ops["abc"])
    assert _max_relative(old, ours) > 0.1
