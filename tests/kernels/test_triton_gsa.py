"""Causal GSA on the ABC Triton kernels (``ops/gsa/triton/function.py``) under Triton's interpreter
(CPU tensors), against the fp64 naive recurrence written from the equations, the PyTorch path and
flash-linear-attention's own naive recurrence.

Gates cover the regimes of the op tests (``gsa_helpers``): mixed, within 1e-38 of 1, within the
smallest normal fp32 of 0 (every chunk takes the kernels' steep, row-by-row path) and alternating.
fp32 and fp16 only: the interpreter computes bf16 ``tl.dot`` wrongly (see test_triton_causal).
"""

import importlib.util

import pytest
import torch
from gsa_helpers import GATE_REGIMES, assert_rows_close, problem
from ops_helpers import weighted_grads

from abc_fairseq.ops.gsa import GSAState, causal_gsa, reference_causal_gsa

if importlib.util.find_spec("triton") is None:  # not imported here: see triton_helpers
    pytest.skip("triton is not installed", allow_module_level=True)

# The interpreter evaluates exp() on lanes that are then selected away (pairs i > t).
pytestmark = [pytest.mark.usefixtures("interpreted_kernels"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")]  # log(1 - a) at a = 1


def _triton(*inputs, **kwargs):
    return causal_gsa(*inputs, backend="triton", chunk_size=16, **kwargs)


def _check(inputs, dtype, out_tol, grad_tol):
    """The kernels on ``inputs`` cast to dtype against the fp64 reference on the same rounded values.
    Outputs: row-relative. Gradients: absolute, against the largest gradient of any input (the
    scale of the problem's gradients): a gate near 0 has a gradient of ~1e-30, which the kernels get as a sum over
    the later rows of O(1) terms that cancel (module docstring of ops.gsa.triton.function), so its error is
    fp32's rounding of those terms, not a fraction of the tiny result."""
    cast = [x.to(dtype) for x in inputs]
    weight = torch.randn(inputs[2].shape, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    out, grads = weighted_grads(_triton, cast, weight)
    ref, ref_grads = weighted_grads(reference_causal_gsa, [x.double() for x in cast], weight)
    assert out.dtype == dtype and all(g.dtype == dtype for g in grads)
    assert_rows_close(out.double(), ref, out_tol)
    scale = max(r.abs().max() for r in ref_grads)
    for name, g, r in zip("qkvg", grads, ref_grads):
        torch.testing.assert_close(g.double(), r, rtol=0, atol=grad_tol * scale, msg=f"gradient of {name}")


# (B, H, N, d, n, dv): N not a multiple of the chunk, n = 8 and dv = 24 padded to 16 / 32 wide
# tiles, n = 20 (not a power of two), N shorter than one chunk, 128 wide tiles in column blocks.
SHAPES = [(1, 2, 37, 16, 8, 24), (1, 1, 20, 16, 20, 16), (1, 1, 5, 8, 3, 8), (1, 1, 21, 80, 72, 72)]


@pytest.mark.parametrize("regime", GATE_REGIMES)
def test_float32_values_and_gradients_match_the_reference(regime):
    # The kernels take exp(l_i - g_t) with l and g holding cumulative log gates from the chunk's
    # first row: the difference loses fp32's epsilon times |G|, up to 87 x 16 where gates near 0
    # alternate with gates near 1 (2e-5 measured, in outputs and gradients); the PyTorch path sums each segment instead.
    tol = 1e-4 if regime == "alternating" else 1e-5
    _check(problem(*SHAPES[0][:5], regime, dv=SHAPES[0][5], seed=1), torch.float32, tol, tol)


@pytest.mark.parametrize("B,H,N,d,n,dv", SHAPES[1:])
def test_float32_shapes(B, H, N, d, n, dv):
    _check(problem(B, H, N, d, n, "mixed", dv=dv, seed=N), torch.float32, 1e-5, 1e-5)


@pytest.mark.parametrize("programs", [1, 2, 7])
def test_the_gate_kernel_takes_spans_of_chunks_when_chunks_are_many(programs, monkeypatch):
    """With at most ``programs`` gate programs per sequence (GATE_PROGRAMS, 64 on a GPU), each
    takes a span of chunks, last first, carrying the later chunks' sum: 7 chunks of 16 rows in
    spans of 8, 4 and 1, every gradient still the reference's."""
    import importlib

    monkeypatch.setattr(importlib.import_module("abc_fairseq.ops.gsa.triton.function"), "GATE_PROGRAMS", programs)
    _check(problem(1, 2, 100, 16, 8, "mixed", dv=16, seed=11), torch.float32, 1e-5, 1e-5)


def test_float16_inputs_keep_fp32_gates():
    # The gates' cumulative sums and the logits built from them stay fp32 inside. (Mixed gates:
    # fp16 rounds a log gate of -1e-30 to 0, a gate of exactly 1, which gets no gradient through
    # its write weight on the kernels; see ops.gsa.triton.gates.)
    _check(problem(1, 2, 37, 16, 8, "mixed", seed=2), torch.float16, 5e-3, 5e-3)


@pytest.mark.parametrize("state_dtype", [torch.float16, torch.bfloat16])
def test_a_half_precision_chunk_state_is_one_argument_of_the_op(state_dtype):
    """``causal_gsa(state_dtype=...)``: the chunk state the kernels keep for the backward in half
    precision; the output stays within the fp16 test's tolerance of the reference and the
    gradients within half precision's rounding of that state of the fp32 state's."""
    inputs = [x.to(torch.float16) for x in problem(1, 2, 37, 16, 8, "mixed", dv=24, seed=2)]
    weight = torch.randn(inputs[2].shape, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    runs = {dtype: weighted_grads(lambda *x: _triton(*x, state_dtype=dtype), inputs, weight)
            for dtype in (None, state_dtype)}
    ref = reference_causal_gsa(*(x.double() for x in inputs))
    assert_rows_close(runs[state_dtype][0].double(), ref, 5e-3)
    for g, g32 in zip(runs[state_dtype][1], runs[None][1]):
        torch.testing.assert_close(g.double(), g32.double(), rtol=2e-2, atol=2e-2)


def test_state_passing_equals_one_call():
    q, k, v, g = problem(2, 1, 45, 16, 8, "mixed", seed=3, dtype=torch.float32)
    full, final = _triton(q, k, v, g, return_state=True)
    head, state = _triton(*(t[:, :, :21] for t in (q, k, v, g)), return_state=True)
    tail, last = _triton(*(t[:, :, 21:] for t in (q, k, v, g)), initial_state=state, return_state=True)
    torch.testing.assert_close(torch.cat([head, tail], 2), full, rtol=0, atol=1e-5)
    _, torch_final = causal_gsa(q, k, v, g, return_state=True, backend="torch")
    for a, b, c in zip(last, final, torch_final):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)
        torch.testing.assert_close(b, c, rtol=0, atol=1e-5)
    expected = reference_causal_gsa(*(t[:, :, 21:].double() for t in (q, k, v, g)),
                                    initial_state=GSAState(*(s.double() for s in state)))
    assert_rows_close(tail.double(), expected, 1e-5)


def test_gate_one_writes_nothing_and_changes_no_other_row():
    """g = 0 (padding) rows: the state after them is the state before, and the other rows' outputs
    equal those of the sequence without them."""
    q, k, v, g = problem(1, 2, 30, 16, 8, "mixed", seed=4, dtype=torch.float32)
    padded = g.clone()
    padded[:, :, 10:20] = 0.0
    out, state = _triton(q, k, v, padded, return_state=True)
    keep = torch.cat([torch.arange(10), torch.arange(20, 30)])
    short, short_state = _triton(*(t[:, :, keep] for t in (q, k, v, g)), return_state=True)
    torch.testing.assert_close(out[:, :, keep], short, rtol=0, atol=1e-5)
    for a, b in zip(state, short_state):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)


def test_no_future_leak():
    q, k, v, g = problem(1, 2, 40, 16, 8, "mixed", seed=5, dtype=torch.float32)
    out = _triton(q, k, v, g)
    changed = [t.clone() for t in (q, k, v, g)]
    for t in changed:
        t[:, :, 25:] = torch.randn_like(t[:, :, 25:]) if t is not changed[3] else -torch.rand_like(t[:, :, 25:])
    torch.testing.assert_close(_triton(*changed)[:, :, :25], out[:, :, :25], rtol=0, atol=0)


def test_dropout_with_a_fixed_mask():
    q, k, v, g = problem(1, 2, 33, 16, 8, "mixed", seed=6)
    keep = torch.rand(1, 2, 33, 8, generator=torch.Generator().manual_seed(0)) >= 0.3
    weight = torch.randn(1, 2, 33, 16, dtype=torch.float64)
    dropped = dict(dropout_p=0.3, dropout_mask=keep)
    got, grads = weighted_grads(lambda *x: _triton(*x, **dropped), [t.float() for t in (q, k, v, g)], weight)
    ref, ref_grads = weighted_grads(lambda *x: reference_causal_gsa(*x, **dropped), [q, k, v, g], weight)
    assert_rows_close(got.double(), ref, 1e-5)
    for a, b in zip(grads, ref_grads):
        torch.testing.assert_close(a.double(), b, rtol=0, atol=1e-5 * max(r.abs().max() for r in ref_grads))


def test_auto_on_cpu_runs_the_pytorch_path_and_fp64_never_reaches_the_kernels():
    q, k, v, g = problem(1, 1, 20, 16, 8, "mixed", seed=7)
    expected = reference_causal_gsa(q, k, v, g)
    for backend in ("auto", "triton"):  # fp64: the kernels do not take it, both fall back
        assert_rows_close(causal_gsa(q, k, v, g, backend=backend), expected, 1e-12)


@pytest.mark.parametrize("regime", ["mixed", "near_one"])
def test_equals_flash_linear_attention_naive_recurrence(regime):
    """The kernels against fla's own ``naive_recurrent_gsa`` ([B, T, H, *], s = 1 - a, g = log a),
    outputs and final memories, with a state carried in."""
    naive = pytest.importorskip("fla.ops.gsa.naive", reason="fla-core (requirements.txt) is not installed")
    q, k, v, g = problem(1, 2, 29, 16, 8, regime, dv=16, seed=8, dtype=torch.float32)
    _, state = _triton(*(t[:, :, :5] for t in (q, k, v, g)), return_state=True)
    ours, final = _triton(q, k, v, g, initial_state=state, return_state=True)
    bthd = [t.transpose(1, 2).contiguous() for t in (q, k, v, -torch.expm1(g), g)]
    fla_state = (state.key_memory.transpose(-1, -2).contiguous(), state.value_memory)
    theirs, (hk, hv) = naive.naive_recurrent_gsa(*bthd, initial_state=fla_state, output_final_state=True)
    assert_rows_close(ours, theirs.transpose(1, 2), 1e-5)
    torch.testing.assert_close(final.key_memory, hk.transpose(-1, -2), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(final.value_memory, hv, rtol=1e-5, atol=1e-6)
