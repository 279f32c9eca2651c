"""Causal gated slot attention ops (``abc_fairseq.ops.gsa``): the chunked form and the recurrent
step equal the naive recurrence written from the equations, in fp64 for gates as close to 0 and 1
as fp32 holds; state passing, padding gates, causality for non-finite inputs, attention dropout,
gradients, the memory the backward keeps, and flash-linear-attention's own recurrence."""

import pytest
import torch
from gsa_helpers import GATE_REGIMES, assert_rows_close, problem, step_by_step

from abc_fairseq.ops.gsa import GSAState, causal_gsa, reference_causal_gsa
from abc_fairseq.ops.gsa.segments import segment_causal_gsa

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("regime", GATE_REGIMES)
@pytest.mark.parametrize("N, chunk", [(1, 64), (7, 3), (16, 4), (33, 8), (40, 64)])
@pytest.mark.parametrize("dv", [None, 3])
def test_chunked_and_step_equal_the_reference_fp64(regime, N, chunk, dv):
    q, k, v, g = problem(2, 2, N, 5, 4, regime, dv=dv, seed=N)
    expected = reference_causal_gsa(q, k, v, g)
    for block in (chunk, None):  # one chunk per block (state passed between blocks) or all at once
        assert_rows_close(causal_gsa(q, k, v, g, chunk_size=chunk, block_size=block), expected, 1e-12)
    assert_rows_close(step_by_step(q, k, v, g)[0], expected, 1e-12)


@pytest.mark.parametrize("regime", GATE_REGIMES)
def test_fused_op_equals_the_direct_chunked_form(regime):
    """The op runs GSA through causal ABC's fused chunked op; the direct form (autograd over a
    [C, C, n] decay per chunk, ``gsa.segments``) stays beside it as a second oracle: outputs and
    gradients agree, and the direct form still equals the recurrence."""
    inputs = [t.requires_grad_() for t in problem(2, 2, 70, 6, 5, regime, seed=3)]
    state = GSAState.empty(2, 2, 5, 6, 6, dtype=torch.float64)
    direct = segment_causal_gsa(*inputs, 6 ** -0.5, 16, None, state, False, None, 1.0)
    fused = causal_gsa(*inputs, chunk_size=16)
    assert_rows_close(direct, reference_causal_gsa(*inputs), 1e-12)
    assert_rows_close(fused, direct, 1e-12)
    weights = torch.randn_like(fused)
    for a, b in zip(torch.autograd.grad((fused * weights).sum(), inputs),
                    torch.autograd.grad((direct * weights).sum(), inputs)):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("regime", GATE_REGIMES)
def test_fp32_inputs_against_the_fp64_reference(regime):
    q, k, v, g = problem(2, 3, 50, 8, 6, regime, seed=1)
    expected = reference_causal_gsa(q, k, v, g)
    q32, k32, v32, g32 = (t.float() for t in (q, k, v, g))
    assert_rows_close(causal_gsa(q32, k32, v32, g32, chunk_size=16).double(), expected, 1e-5)
    assert_rows_close(step_by_step(q32, k32, v32, g32)[0].double(), expected, 1e-5)


def test_write_weights_are_exact_next_to_one():
    """g = -1e-30: a is 1.0 in any float, 1 - a = 1e-30 only through expm1; V~_1 = 1e-30 v_1."""
    q, k, v, _ = problem(1, 1, 1, 4, 2)
    g = torch.full((1, 1, 1, 2), -1e-30, dtype=torch.float64)
    for dtype in (torch.float64, torch.float32):
        out = causal_gsa(*(t.to(dtype) for t in (q, k, v, g)))
        torch.testing.assert_close(out.double(), 1e-30 * v, rtol=1e-6, atol=0)


@pytest.mark.parametrize("split", [1, 5, 16, 23])
def test_state_passing_prefill_then_decode_equals_the_full_pass(split):
    q, k, v, g = problem(2, 2, 24, 4, 3, "mixed", seed=split)
    full, final = causal_gsa(q, k, v, g, chunk_size=4, return_state=True)
    head, state = causal_gsa(q[:, :, :split], k[:, :, :split], v[:, :, :split], g[:, :, :split],
                             chunk_size=4, return_state=True)
    tail = [t[:, :, split:] for t in (q, k, v, g)]
    stepped, stepped_state = step_by_step(*tail, state=state)
    extended, extended_state = causal_gsa(*tail, chunk_size=8, initial_state=state, return_state=True)
    for out, last in ((stepped, stepped_state), (extended, extended_state)):
        torch.testing.assert_close(torch.cat([head, out], dim=2), full, rtol=0, atol=1e-12)
        for a, b in zip(last, final):
            torch.testing.assert_close(a, b, rtol=0, atol=1e-12)
    reference = reference_causal_gsa(*tail, initial_state=state)
    torch.testing.assert_close(extended, reference, rtol=0, atol=1e-12)


def test_gate_zero_writes_nothing_and_keeps_the_state():
    """Log gate 0 (padding): whatever k and v hold, the memories and the later outputs are those of
    the sequence without those rows, left padding and rows in between alike."""
    q, k, v, g = problem(1, 2, 10, 4, 3, "mixed", seed=3)
    alone, alone_state = causal_gsa(q, k, v, g, chunk_size=4, return_state=True)
    rows = torch.tensor([0, 0, 0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9])  # 3 pads in front, 1 in the middle
    real = torch.ones(len(rows), dtype=torch.bool)
    real[[0, 1, 2, 6]] = False
    noise = problem(1, 2, len(rows), 4, 3, seed=9)
    padded = [torch.where(real[:, None], t[:, :, rows], 1e3 * n) for t, n in zip((q, k, v), noise[:3])]
    gates = torch.where(real[:, None], g[:, :, rows], 0.0)
    for step in (False, True):
        out, state = step_by_step(*padded, gates) if step else \
            causal_gsa(*padded, gates, chunk_size=4, return_state=True)
        torch.testing.assert_close(out[:, :, real], alone, rtol=0, atol=1e-12)
        for a, b in zip(state, alone_state):
            torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("which", ["q", "k", "v", "g"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_rows_before_a_nonfinite_row_are_exact(value, which, dtype):
    inputs = dict(zip("qkvg", problem(2, 2, 20, 4, 3, "mixed", dtype=dtype)))
    poisoned = {name: t.clone() for name, t in inputs.items()}
    poisoned[which][0, :, 10] = value
    atol = 1e-12 if dtype == torch.float64 else 1e-6
    for chunk in (4, 16, 64):
        clean = causal_gsa(*inputs.values(), chunk_size=chunk)
        out = causal_gsa(*poisoned.values(), chunk_size=chunk)
        torch.testing.assert_close(out[0, :, :10], clean[0, :, :10], rtol=0, atol=atol)
        torch.testing.assert_close(out[1:], clean[1:], rtol=0, atol=atol)


def test_dropout_with_a_fixed_mask_equals_the_reference():
    q, k, v, g = problem(2, 2, 13, 4, 5, "mixed", seed=4)
    keep = torch.rand(2, 2, 13, 5, generator=torch.Generator().manual_seed(0)) >= 0.3
    expected = reference_causal_gsa(q, k, v, g, dropout_p=0.3, dropout_mask=keep)
    got = causal_gsa(q, k, v, g, chunk_size=4, dropout_p=0.3, dropout_mask=keep)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-12)
    assert not torch.allclose(got, causal_gsa(q, k, v, g, chunk_size=4))
    inputs = [t[:1, :1, :7].clone().requires_grad_() for t in (q, k, v, g)]
    assert torch.autograd.gradcheck(lambda *x: causal_gsa(*x, chunk_size=3, dropout_p=0.3,
                                                          dropout_mask=keep[:1, :1, :7]), inputs)


@pytest.mark.parametrize("regime", ["mixed", "alternating"])
def test_gradients_match_the_reference_and_gradcheck(regime):
    """gradcheck's finite differences (steps of 1e-6) need every log gate at least that far from 0,
    its upper bound: with gates within 1e-6 of one (``alternating``) the log gates are checked
    against the reference's autograd only."""
    inputs = [t.requires_grad_() for t in problem(1, 2, 9, 3, 2, regime, seed=5)]
    q, k, v, g = inputs
    if regime == "mixed":
        assert torch.autograd.gradcheck(lambda *x: causal_gsa(*x, chunk_size=4, block_size=4), inputs)
    else:
        assert torch.autograd.gradcheck(lambda *x: causal_gsa(*x, g, chunk_size=4, block_size=4), (q, k, v))
    weights = torch.randn(1, 2, 9, 3, dtype=torch.float64)
    grads = torch.autograd.grad((causal_gsa(*inputs, chunk_size=4) * weights).sum(), inputs)
    expected = torch.autograd.grad((reference_causal_gsa(*inputs) * weights).sum(), inputs)
    for a, b in zip(grads, expected):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("regime", ["mixed", "near_one", "alternating"])
def test_fp32_gradients_at_length_512_against_the_fp64_reference(regime):
    """The gates' gradient sums over every later row (terms that cancel): in fp32 each gradient
    stays within 5e-6 of its largest over 512 rows, several blocks and chunks. (With every gate
    near 0 the true gradients of q, k and the gates are below 1e-14, under fp32's resolution of
    the O(1) terms they come from, in this form and the direct one alike.)"""
    inputs = problem(1, 2, 512, 8, 8, regime, seed=11)
    weights = torch.randn(1, 2, 512, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    ref = [t.clone().requires_grad_() for t in inputs]
    expected = torch.autograd.grad((reference_causal_gsa(*ref) * weights).sum(), ref)
    ours = [t.float().requires_grad_() for t in inputs]
    got = torch.autograd.grad((causal_gsa(*ours, block_size=128) * weights.float()).sum(), ours)
    for a, b in zip(got, expected):
        assert ((a.double() - b).abs().max() <= 5e-6 * b.abs().max()), (a.double() - b).abs().max() / b.abs().max()


def test_backward_keeps_no_per_row_memory():
    """What autograd saves is O(N (d + n)) plus one memory per block, never a [N, C, n] or
    [N, n, d] tensor: the blocks are recomputed in the backward."""
    B, H, N, d, n, chunk = 1, 2, 256, 8, 16, 32
    inputs = [t.requires_grad_() for t in problem(B, H, N, d, n, seed=6)]
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t.numel()) or t, lambda t: t):
        out = causal_gsa(*inputs, chunk_size=chunk, block_size=2 * chunk)
    blocks = N // (2 * chunk)
    assert sum(saved) <= 4 * B * H * N * (2 * d + d + n) + blocks * 4 * B * H * n * d, sum(saved)
    assert max(saved) < B * H * N * n * 2
    out.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in inputs)


def test_empty_inputs_and_bad_arguments():
    q, k, v, g = problem(2, 2, 0, 4, 3)
    out, state = causal_gsa(q, k, v, g, return_state=True)
    assert out.shape == (2, 2, 0, 4) and state.key_memory.shape == (2, 2, 3, 4)
    q, k, v, g = problem(2, 2, 5, 4, 3)
    with pytest.raises(ValueError, match="log_gates"):
        causal_gsa(q, k, v, g[:, :, :4])
    with pytest.raises(ValueError, match="chunk_size"):
        causal_gsa(q, k, v, g, chunk_size=0)
    with pytest.raises(ValueError, match="state does not match"):
        causal_gsa(q, k, v, g, initial_state=GSAState.empty(2, 2, 4, 4, 4, dtype=torch.float64))


# --------------------------------------------------------------- flash-linear-attention's definition
@pytest.mark.parametrize("regime", GATE_REGIMES)
@pytest.mark.parametrize("with_state", [False, True])
def test_equals_flash_linear_attention_naive_recurrence(regime, with_state):
    """fla's ``naive_recurrent_gsa(q, k, v, s, g)`` ([B, T, H, *], s the write weights, g the log
    gates, float32 on CPU) on s = 1 - a = -expm1(g): the same outputs and final memories."""
    naive = pytest.importorskip("fla.ops.gsa.naive", reason="fla-core (requirements.txt) is not installed")
    q, k, v, g = (t.float() for t in problem(2, 3, 29, 8, 6, regime, dv=5, seed=7))
    state = None
    if with_state:
        _, state = causal_gsa(*(t[:, :, :5] for t in (q, k, v, g)), return_state=True)
    ours, final = causal_gsa(q, k, v, g, chunk_size=8, initial_state=state, return_state=True)
    bthd = [t.transpose(1, 2).contiguous() for t in (q, k, v, -torch.expm1(g), g)]
    fla_state = None if state is None else (state.key_memory.transpose(-1, -2).contiguous(), state.value_memory)
    theirs, (hk, hv) = naive.naive_recurrent_gsa(*bthd, initial_state=fla_state, output_final_state=True)
    assert_rows_close(ours, theirs.transpose(1, 2), 1e-5)
    torch.testing.assert_close(final.key_memory, hk.transpose(-1, -2), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(final.value_memory, hv, rtol=1e-5, atol=1e-6)
