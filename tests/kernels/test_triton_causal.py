"""The Triton kernels of causal ABC under Triton's interpreter (CPU tensors), against the float64
reference written from the paper's equations.

The interpreter computes bf16 ``tl.dot`` wrongly (triton-lang/triton#11584), so fp32 and fp16
inputs are checked here and bf16 in ``test_cuda.py``. Shapes are tiny: the interpreter runs every
program in NumPy. Chunks of 16 rows (``tl.dot``'s minimum) make a few dozen rows span several.
"""

import importlib.util
import logging
import os
import subprocess
import sys

import pytest
import torch
from ops_helpers import kernel_problem, random_inputs, weighted_grads
from torch.utils._python_dispatch import TorchDispatchMode

from abc_fairseq.ops import causal_abc, causal_abc_step, reference_causal_abc

if importlib.util.find_spec("triton") is None:  # not imported here: see triton_helpers
    pytest.skip("triton is not installed", allow_module_level=True)


# The interpreter evaluates exp() on lanes that are then selected away (pairs i > t).
pytestmark = [pytest.mark.usefixtures("interpreted_kernels"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]


def _triton(*inputs, **kwargs):
    return causal_abc(*inputs, backend="triton", chunk_size=16, **kwargs)


def _check(inputs, dtype, out_atol, grad_tol, fn=_triton, reference=reference_causal_abc):
    """fn on ``inputs`` cast to dtype against ``reference`` on the same (rounded) values in float64."""
    cast = [x.to(dtype) for x in inputs]
    weight = torch.randn(inputs[2].shape, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    out, grads = weighted_grads(fn, cast, weight)
    ref, ref_grads = weighted_grads(reference, [x.double() for x in cast], weight)
    assert out.dtype == dtype and all(g.dtype == dtype for g in grads)
    torch.testing.assert_close(out.double(), ref, rtol=0, atol=out_atol)
    for name, g, r in zip("qkvl", grads, ref_grads):
        torch.testing.assert_close(g.double(), r, rtol=grad_tol, atol=grad_tol, msg=f"gradient of {name}")


# (B, H, N, d, n, dv): N not a multiple of the chunk, n = 8 and dv = 24 padded to tiles of 16 / 32,
# n = 20 (not a power of two), N shorter than one chunk, tiles 128 wide taken in column blocks
# of 32 (``MEMORY_BLOCK``), the third partly masked and the fourth wholly.
SHAPES = [(2, 1, 37, 32, 8, 24), (1, 2, 20, 16, 20, 16), (1, 1, 5, 8, 3, 8), (1, 1, 21, 80, 72, 72)]


@pytest.mark.parametrize("B,H,N,d,n,dv", SHAPES)
def test_float32_values_and_gradients_match_the_reference(B, H, N, d, n, dv):
    _check(random_inputs(B, H, N, d, n, dv=dv, seed=N), torch.float32, 2e-5, 1e-4)


def test_float16_inputs_keep_fp32_internals():
    # Logits around +-30 overflow exp() in fp16: only fp32 normalisers keep the result finite.
    _check(random_inputs(1, 2, 37, 32, 8, logit_scale=30.0, seed=4), torch.float16, 5e-3, 2e-2)


@pytest.mark.parametrize("logit_scale", [80.0, -80.0])
def test_logits_around_80_stay_exact(logit_scale):
    q, k, v, l = random_inputs(1, 2, 40, 16, 8, seed=5)
    _check((q, k, v, l.sign() * logit_scale + l), torch.float32, 1e-4, 1e-3)


def test_logits_climbing_steeply_inside_a_chunk():
    # Slot j climbs by 3 j per row: up to 21 per row, 300 inside one chunk of 16 rows, far past
    # what exp() holds against the chunk's first row; the last slot falls instead.
    q, k, v, l = random_inputs(1, 1, 40, 16, 8, seed=6)
    t = torch.arange(40, dtype=torch.float64)[:, None]
    slope = 3.0 * torch.arange(8, dtype=torch.float64)
    slope[-1] = -5.0
    _check((q, k, v, l + slope * t), torch.float32, 1e-4, 1e-3)


@pytest.mark.parametrize("chunk", [16, 32, 64])
def test_a_forced_chunk_is_taken_and_exact(chunk, monkeypatch):
    """ABC_TRITON_CHUNK (the tuning override the self-check times every chunk with) is taken as
    given, and every chunk computes the same function."""
    from abc_fairseq.ops.causal.triton import function as causal_function

    taken = []
    real = causal_function.TritonCausalABC.apply
    monkeypatch.setattr(causal_function.TritonCausalABC, "apply", lambda *a: taken.append(a[-3]) or real(*a))
    monkeypatch.setenv("ABC_TRITON_CHUNK", str(chunk))
    _check(random_inputs(1, 1, 70, 16, 8, seed=chunk), torch.float32, 2e-5, 1e-4)
    assert taken == [chunk]


@pytest.mark.parametrize("value", ["48", "128", "sixty-four"])
def test_a_chunk_the_kernels_cannot_take_is_refused_naming_the_variable(value, monkeypatch):
    monkeypatch.setenv("ABC_TRITON_CHUNK", value)
    with pytest.raises(ValueError, match="ABC_TRITON_CHUNK=.*16"):
        _triton(*(x.float() for x in random_inputs(1, 1, 20, 16, 8, seed=1)))


def test_the_prefix_normalisers_are_found_in_the_kernels_and_exact(monkeypatch):
    """The prefix normalisers are found in the kernels, chunk by chunk: no torch.logcumsumexp is
    called. Slot 2 climbs by 9 per row, so that chunks take both the running sum and the steep
    rows' path."""
    from abc_fairseq.ops.causal.triton import function as causal_function

    taken = []
    real = causal_function.forward_kernels
    monkeypatch.setattr(causal_function, "forward_kernels",
                        lambda *a, gated: taken.append(gated) or real(*a, gated=gated))
    monkeypatch.setattr(torch, "logcumsumexp", None)  # any call would fail
    q, k, v, l = random_inputs(1, 2, 40, 16, 8, seed=14)
    l[..., 2] += 9.0 * torch.arange(40, dtype=torch.float64)
    _check((q, k, v, l), torch.float32, 1e-4, 1e-3)
    assert taken and set(taken) == {False}  # ABC's kernels, never GSA's


def test_the_kernels_chunk_normalisers_equal_the_prefix_logsumexp():
    """e_prev, e_end and decay as the forward kernels find them (chunk totals, then one logaddexp
    per chunk from a given g_before) against float64 logcumsumexp; logits of +-60 around a
    climb, N not a multiple of the chunk."""
    from abc_fairseq.ops.causal.triton.function import forward_kernels

    Z, N, n, d, C = 2, 45, 8, 16, 16
    gen = torch.Generator().manual_seed(15)
    logits = 30.0 * torch.randn(Z, N, n, generator=gen) + 2.0 * torch.arange(N)[:, None]
    g_before = torch.randn(Z, n, generator=gen) * 40.0
    g_before[0, :3] = float("-inf")  # an empty prefix in some slots
    q, k, v = (torch.randn(Z, N, d, generator=gen) for _ in range(3))
    carry = torch.zeros(Z, n, 2 * d)
    *_, norm = forward_kernels(q, k, v, logits, None, carry, g_before, 0.25, 1.0, C, torch.float32, gated=False)
    g = torch.logaddexp(g_before.double()[:, None], torch.logcumsumexp(logits.double(), dim=1))
    e_end = g[:, [min(c + C - 1, N - 1) for c in range(0, N, C)]]
    e_prev = torch.cat([g_before.double()[:, None], e_end[:, :-1]], dim=1)
    torch.testing.assert_close(norm.e_end.double(), e_end, rtol=1e-6, atol=1e-5)
    torch.testing.assert_close(norm.e_prev.double(), e_prev, rtol=1e-6, atol=1e-5)
    torch.testing.assert_close(norm.decay.double(), torch.exp(e_prev - e_end), rtol=1e-5, atol=1e-6)


# bf16 keeps 8 bits of the memories (fp16: 11): its outputs' error is that of bf16 inputs.
@pytest.mark.parametrize("state_dtype,out_atol,grad_tol", [(torch.float16, 5e-3, 2e-2), (torch.bfloat16, 4e-2, 8e-2)])
def test_a_half_precision_chunk_state_is_one_argument_of_the_op_and_exact(monkeypatch, state_dtype, out_atol,
                                                                          grad_tol):
    """``causal_abc(state_dtype=...)`` sets the dtype of the chunk state the kernels keep for the
    backward (the memory entering each chunk) and nothing else: with fp16 inputs the output equals
    the float64 reference within the state dtype's tolerance, and the gradients equal those of the
    fp32 state within half precision's rounding of that state."""
    from abc_fairseq.ops.causal.triton import function as causal_function

    kept = []
    real = causal_function.forward_kernels
    monkeypatch.setattr(causal_function, "forward_kernels",
                        lambda *a, gated: kept.append(a[-1]) or real(*a, gated=gated))
    inputs = [x.to(torch.float16) for x in random_inputs(1, 2, 37, 16, 8, logit_scale=5.0, seed=21)]
    weight = torch.randn(inputs[2].shape, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    runs = {dtype: weighted_grads(lambda *x: _triton(*x, state_dtype=dtype), inputs, weight)
            for dtype in (None, state_dtype)}
    assert kept[-1] == state_dtype and torch.float32 in kept  # None: fp32
    ref = reference_causal_abc(*(x.double() for x in inputs), scale=None)
    out, grads = runs[state_dtype]
    torch.testing.assert_close(out.double(), ref, rtol=0, atol=out_atol)
    for g, g32 in zip(grads, runs[None][1]):
        torch.testing.assert_close(g.double(), g32.double(), rtol=grad_tol, atol=grad_tol)


@pytest.mark.parametrize("bad", [torch.float64, torch.int8, "float16"])
def test_a_chunk_state_dtype_the_kernels_cannot_keep_is_refused_by_name(bad):
    inputs = random_inputs(1, 1, 8, 8, 4, dtype=torch.float32)
    with pytest.raises(ValueError, match="state_dtype"):
        causal_abc(*inputs, backend="torch", state_dtype=bad)


SCANS = {"aten.cumsum.default", "aten.cumprod.default", "aten.logcumsumexp.default", "aten._logcumsumexp.default",
         "aten.cummax.default", "aten.cummin.default"}


class _ScanRecorder(TorchDispatchMode):
    """Records the length of the dimension every PyTorch scan runs along."""

    def __init__(self):
        super().__init__()
        self.lengths = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if str(func) in SCANS:
            x, dim = args[0], (args[1] if len(args) > 1 else kwargs["dim"])
            self.lengths.append(x.shape[dim])
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("op", ["causal_abc", "causal_gsa"])
def test_no_pytorch_op_on_the_kernels_path_scans_the_sequence(op):
    """Forward + backward on the kernels at N = 100: neither ABC's prefix normalisers nor GSA's
    gate sums and their gradient call a PyTorch scan (the kernels sum down their chunk's rows)."""
    fn, inputs = kernel_problem(op)
    with _ScanRecorder() as recorder:
        fn(*inputs, backend="triton", chunk_size=16).sum().backward()
    assert recorder.lengths == []


def test_perturbing_the_future_changes_nothing_in_the_past():
    q, k, v, l = (x.float() for x in random_inputs(1, 2, 40, 16, 8, seed=7))
    before = _triton(q, k, v, l)
    t = 20  # inside the second chunk: later rows of the same chunk are perturbed too
    k2, v2, l2 = k.clone(), v.clone(), l.clone()
    k2[:, :, t + 1:] += 5.0
    v2[:, :, t + 1:] -= 5.0
    l2[:, :, t + 1:] += 90.0  # also makes the rest of the chunk take the exact path
    after = _triton(q, k2, v2, l2)
    assert torch.equal(before[:, :, :t + 1], after[:, :, :t + 1])
    assert not torch.allclose(before[:, :, t + 1:], after[:, :, t + 1:])


def test_state_passing_equals_one_call():
    q, k, v, l = (x.float() for x in random_inputs(2, 1, 45, 16, 8, logit_scale=20.0, seed=8))
    whole, state = _triton(q, k, v, l, return_state=True)
    cut = 21
    head, mid = _triton(*(x[:, :, :cut] for x in (q, k, v, l)), return_state=True)
    tail, end = _triton(*(x[:, :, cut:] for x in (q, k, v, l)), initial_state=mid, return_state=True)
    torch.testing.assert_close(torch.cat([head, tail], dim=2), whole, rtol=0, atol=1e-5)
    for got, expected in zip(end, state):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    # Step by step from the kernels' state continues the same sequence.
    steps, step_state = [], mid
    for i in range(cut, cut + 4):
        out, step_state = causal_abc_step(*(x[:, :, i:i + 1] for x in (q, k, v, l)), step_state)
        steps.append(out)
    torch.testing.assert_close(torch.cat(steps, dim=2), whole[:, :, cut:cut + 4], rtol=0, atol=1e-5)


def test_dropout_with_a_fixed_mask_matches_the_reference():
    inputs = random_inputs(1, 2, 37, 16, 8, logit_scale=5.0, seed=10)
    p = 0.3
    keep = torch.rand(1, 2, 37, 8, generator=torch.Generator().manual_seed(11)) >= p
    _check(inputs, torch.float32, 2e-5, 1e-4,
           fn=lambda *x: _triton(*x, dropout_p=p, dropout_mask=keep),
           reference=lambda *x: reference_causal_abc(*x, dropout_p=p, dropout_mask=keep))


def test_dropout_without_a_mask_draws_one_from_torch_rng():
    q, k, v, l = (x.float() for x in random_inputs(1, 1, 20, 16, 8, seed=12))
    torch.manual_seed(3)
    drawn = _triton(q, k, v, l, dropout_p=0.5)
    torch.manual_seed(3)
    keep = torch.empty(l.shape).bernoulli_(0.5).bool()  # as ops.dropout draws it
    torch.testing.assert_close(drawn, _triton(q, k, v, l, dropout_p=0.5, dropout_mask=keep),
                               rtol=0, atol=0)
    assert not torch.allclose(drawn, _triton(q, k, v, l))


def test_backend_choice_and_fallback(monkeypatch, caplog):
    q, k, v, l = (x.float() for x in random_inputs(1, 1, 9, 8, 5, seed=13))
    torch_out = causal_abc(q, k, v, l, backend="torch")
    # auto keeps CPU tensors on the PyTorch path, even with the interpreter on.
    torch.testing.assert_close(causal_abc(q, k, v, l), torch_out, rtol=0, atol=0)
    with pytest.raises(ValueError, match="backend"):
        causal_abc(q, k, v, l, backend="cuda")
    keep = torch.rand(l.shape, generator=torch.Generator().manual_seed(3)) >= 0.1
    torch.testing.assert_close(causal_abc(q, k, v, l, backend="torch", dropout_p=0.1, dropout_mask=keep),
                               _triton(q, k, v, l, dropout_p=0.1, dropout_mask=keep), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="dropout_mask"):
        causal_abc(q, k, v, l, backend="triton", dropout_p=0.1, dropout_mask=torch.ones(1, 1, 9, 5))
    # Sizes the kernels do not take run on the PyTorch path, said once per reason.
    with caplog.at_level(logging.WARNING, logger="abc_fairseq.ops.backend"):
        for _ in range(2):
            out = causal_abc(q, k, v, l, backend="triton", chunk_size=24)
            torch.testing.assert_close(out, causal_abc(q, k, v, l, chunk_size=24), rtol=0, atol=0)
        wide = torch.randn(1, 1, 9, 130)
        torch.testing.assert_close(causal_abc(q, k, v, wide, backend="triton"),
                                   causal_abc(q, k, v, wide), rtol=0, atol=0)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert "chunk_size 24" in messages[0] and "memory size 130 > 128" in messages[1]
    # Without the interpreter, CPU tensors cannot run the kernels: a clear error.
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(RuntimeError, match="TRITON_INTERPRET"):
        causal_abc(q, k, v, l, backend="triton")


def test_the_ops_import_without_triton():
    # ``ops`` is imported as a top-level package: it has no fairseq imports, and skipping
    # abc_fairseq's plugin registration keeps this subprocess quick.
    code = ("import sys; sys.modules['triton'] = None; sys.path.insert(0, 'abc_fairseq')\n"
            "import torch; from ops import causal_abc\n"
            "x = torch.randn(1, 1, 5, 4); causal_abc(x, x, x, torch.randn(1, 1, 5, 3))\n"
            "try:\n    causal_abc(x, x, x, torch.randn(1, 1, 5, 3), backend='triton')\n"
            "except RuntimeError as e:\n    assert 'triton package' in str(e), e\n"
            "else:\n    raise AssertionError('no error without triton')\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _logit_ops():
    from abc_fairseq.ops import abc_memory

    return {
        "causal_abc": lambda q, k, v, l, backend: causal_abc(q, k, v, l, backend=backend, chunk_size=16),
        "causal_abc_step": lambda q, k, v, l, backend: causal_abc_step(q[:, :, :1], k[:, :, :1], v[:, :, :1],
                                                                       l[:, :, :1], backend=backend)[0],
        "abc_memory": lambda q, k, v, l, backend: torch.cat(abc_memory(k, v, l, backend=backend), -1),
    }


@pytest.mark.parametrize("backend", ["torch", "triton"])
@pytest.mark.parametrize("op", ["causal_abc", "causal_abc_step", "abc_memory"])
def test_half_precision_logits_are_read_as_their_fp32_copy(op, backend):
    """The strategies hand the projection's fp16 logits to the ops uncast: every op, on both
    backends, computes on them what it computes on their fp32 copy (to fp32 rounding: the PyTorch
    memory write takes its in-place softmax for a fresh fp32 copy)."""
    q, k, v, logits = random_inputs(1, 2, 37, 16, 8, logit_scale=8.0, seed=6)
    q, k, v, logits = q.half(), k.half(), v.half(), logits.half()
    fn = _logit_ops()[op]
    out_half = fn(q, k, v, logits, backend)
    out_float = fn(q, k, v, logits.float(), backend)
    assert out_half.dtype == out_float.dtype
    torch.testing.assert_close(out_half, out_float, rtol=2e-6, atol=2e-6)
