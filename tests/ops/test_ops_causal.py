"""Chunked causal ABC against the paper's equations, the recurrence, and itself."""

import pytest
import torch
from ops_helpers import random_inputs, step_by_step

from abc_fairseq.ops import causal_abc, reference_causal_abc
from abc_fairseq.ops.causal import chunk as causal_chunk
from abc_fairseq.ops.causal.chunk_geometry import SAFE_EXPONENT
from abc_fairseq.ops.causal.chunk_math import _linear_scan_

# (B, H, N, d, n, chunk, block, tile_rows): N = 1, N < n, N not a multiple of the chunk, n not a
# power of two, several blocks, several groups of sequences (small tile_rows), chunk larger than N,
# the default block (None: whole sequences per tile, or tile_rows rows of a longer one, with a
# shorter last block); the value dim differs from the key dim (set in the test).
SHAPES = [
    (2, 2, 1, 8, 4, 4, 8, 16384),
    (1, 3, 5, 4, 16, 4, 8, 16384),
    (2, 2, 29, 6, 5, 8, 16, 16384),
    (2, 3, 29, 6, 5, 8, 16, 40),
    (1, 2, 70, 8, 12, 16, 32, 16384),
    (2, 1, 20, 4, 3, 64, 1024, 16384),
    (3, 2, 40, 4, 4, 8, 64, 1),
    (2, 3, 29, 6, 5, 8, None, 16384),
    (2, 3, 29, 6, 5, 8, None, 40),
    (1, 2, 70, 8, 12, 16, None, 48),
    # Long enough for the two-level chunk scan: 75 chunks (segments of 5), 24 per block (of 4).
    (1, 2, 300, 4, 5, 4, None, 16384),
    (2, 1, 300, 4, 5, 4, 96, 16384),
]


def _grads(fn, inputs, weight):
    inputs = [x.detach().clone().requires_grad_() for x in inputs]
    out = fn(*inputs)
    grads = torch.autograd.grad((out * weight).sum(), inputs)
    return out.detach(), grads


@pytest.mark.parametrize("keep_chunk_states", [False, True])
@pytest.mark.parametrize("B,H,N,d,n,chunk,block,tile_rows", SHAPES)
def test_float64_matches_reference_values_and_gradients(B, H, N, d, n, chunk, block, tile_rows, keep_chunk_states,
                                                        monkeypatch):
    """Both backwards: the chunk memories recomputed (the default) or kept by the forward."""
    monkeypatch.setattr(causal_chunk, "KEEP_CHUNK_STATES", keep_chunk_states)
    inputs = random_inputs(B, H, N, d, n, dv=d + 2, seed=N)
    weight = torch.randn(B, H, N, d + 2, dtype=torch.float64)
    out, grads = _grads(lambda *x: causal_abc(*x, chunk_size=chunk, block_size=block,
                                              tile_rows=tile_rows), inputs, weight)
    ref, ref_grads = _grads(reference_causal_abc, inputs, weight)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-9)
    for name, g, r in zip("qkvl", grads, ref_grads):
        torch.testing.assert_close(g, r, rtol=0, atol=1e-9, msg=f"gradient of {name}")


@pytest.mark.parametrize("B,H,N,d,n,chunk,block,tile_rows", SHAPES)
def test_float32_matches_float64_reference(B, H, N, d, n, chunk, block, tile_rows):
    inputs = random_inputs(B, H, N, d, n, seed=N + 1)
    ref = reference_causal_abc(*inputs)
    out = causal_abc(*(x.float() for x in inputs), chunk_size=chunk, block_size=block,
                     tile_rows=tile_rows)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out.double(), ref, rtol=0, atol=1e-4)


@pytest.mark.parametrize("nc", [1, 5, 17, 24, 64, 75, 128])
@pytest.mark.parametrize("reverse", [False, True])
def test_two_level_chunk_scan_matches_a_plain_loop(nc, reverse):
    gen = torch.Generator().manual_seed(nc)
    x = torch.randn(3, nc, 4, 2, dtype=torch.float64, generator=gen)
    g = torch.randn(3, nc, 4, dtype=torch.float64, generator=gen)
    f = torch.rand(3, nc, 4, dtype=torch.float64, generator=gen)
    expected_x, expected_g = x.clone(), g.clone()
    order = range(1, nc) if not reverse else range(nc - 2, -1, -1)
    for c in order:
        before = c - 1 if not reverse else c + 1
        expected_x[:, c] += f[:, c, :, None] * expected_x[:, before]
        expected_g[:, c] += f[:, c] * expected_g[:, before]
    _linear_scan_([x, g], [f.unsqueeze(-1), f], reverse)
    torch.testing.assert_close(x, expected_x, rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(g, expected_g, rtol=1e-13, atol=1e-13)


def test_gradcheck_small():
    inputs = [x.requires_grad_() for x in random_inputs(1, 2, 11, 3, 4, seed=3)]
    assert torch.autograd.gradcheck(lambda *x: causal_abc(*x, chunk_size=4, block_size=8), inputs)


def test_default_scale_is_inverse_sqrt_head_dim():
    inputs = random_inputs(1, 1, 9, 16, 4)
    torch.testing.assert_close(causal_abc(*inputs), causal_abc(*inputs, scale=0.25), rtol=0, atol=0)
    assert not torch.allclose(causal_abc(*inputs), causal_abc(*inputs, scale=1.0))


def test_matches_step_by_step_recurrence():
    inputs = random_inputs(2, 3, 45, 8, 6, seed=7)
    torch.testing.assert_close(causal_abc(*inputs, chunk_size=8, block_size=16),
                               step_by_step(*inputs), rtol=0, atol=1e-10)


@pytest.mark.parametrize("tile_rows", [16384, 20])
def test_state_continues_a_sequence(tile_rows):
    q, k, v, l = random_inputs(2, 2, 50, 8, 6, seed=8)
    full = causal_abc(q, k, v, l, chunk_size=8)
    cut = 21
    first, state = causal_abc(q[:, :, :cut], k[:, :, :cut], v[:, :, :cut], l[:, :, :cut],
                              chunk_size=8, block_size=8, tile_rows=tile_rows, return_state=True)
    second = causal_abc(q[:, :, cut:], k[:, :, cut:], v[:, :, cut:], l[:, :, cut:],
                        chunk_size=8, initial_state=state)
    torch.testing.assert_close(torch.cat([first, second], dim=2), full, rtol=0, atol=1e-10)
    assert state.key_memory.shape == (2, 2, 6, 8) and state.log_normalizer.shape == (2, 2, 6)


@pytest.mark.parametrize("t", [0, 7, 8, 30])
def test_no_future_leakage(t):
    inputs = random_inputs(2, 2, 40, 8, 6, seed=t)
    out = causal_abc(*inputs, chunk_size=8, block_size=16)
    perturbed = [x.clone() for x in inputs]
    for x in perturbed:
        x[:, :, t + 1:] += 3.0 * torch.randn_like(x[:, :, t + 1:])
    out_perturbed = causal_abc(*perturbed, chunk_size=8, block_size=16)
    assert torch.equal(out[:, :, : t + 1], out_perturbed[:, :, : t + 1])
    assert not torch.allclose(out[:, :, t + 1:], out_perturbed[:, :, t + 1:])


def test_no_gradient_flows_from_the_past_to_the_future():
    inputs = [x.requires_grad_() for x in random_inputs(1, 2, 33, 4, 5, seed=2)]
    t = 12
    out = causal_abc(*inputs, chunk_size=8, block_size=16)
    grads = torch.autograd.grad(out[:, :, t].sum(), inputs)
    for name, g in zip("qkvl", grads):
        assert torch.count_nonzero(g[:, :, t + 1:]) == 0, name
        assert torch.count_nonzero(g[:, :, : t + 1]) > 0, name


@pytest.mark.parametrize("logit_scale", [40.0, 80.0])
def test_large_logits_are_exact(logit_scale):
    """Logits around +-80 make exp overflow fp16 and come near fp32's limit."""
    inputs = random_inputs(2, 2, 37, 6, 5, logit_scale=logit_scale, seed=5)
    weight = torch.randn(2, 2, 37, 6, dtype=torch.float64)
    out, grads = _grads(lambda *x: causal_abc(*x, chunk_size=8, block_size=16), inputs, weight)
    ref, ref_grads = _grads(reference_causal_abc, inputs, weight)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-9)
    for g, r in zip(grads, ref_grads):
        torch.testing.assert_close(g, r, rtol=0, atol=1e-8)
    out32 = causal_abc(*(x.float() for x in inputs), chunk_size=8)
    torch.testing.assert_close(out32.double(), ref, rtol=0, atol=1e-4)


@pytest.mark.parametrize("slope", [30.0, -30.0])
def test_logits_rising_or_falling_beyond_exp_range(slope):
    """Logits climbing by 30 per row overflow exp in fp64 too; the recurrence is the oracle."""
    q, k, v, _ = random_inputs(1, 2, 40, 6, 5, seed=9)
    ramp = slope * torch.arange(40, dtype=torch.float64).view(1, 1, 40, 1)
    logits = ramp + torch.randn(1, 2, 40, 5, dtype=torch.float64)
    assert (logits.abs().max() > 1000) and (logits.diff(dim=2).abs().max() > SAFE_EXPONENT / 3)
    inputs = [x.float().requires_grad_() for x in (q, k, v, logits)]
    out = causal_abc(*inputs, chunk_size=8, block_size=16)
    torch.testing.assert_close(out.double(), step_by_step(q, k, v, logits), rtol=0, atol=1e-4)
    grads = torch.autograd.grad(out.sum(), inputs)
    assert all(torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize("dtype,atol", [(torch.float16, 5e-3), (torch.bfloat16, 3e-2)])
def test_half_precision_inputs_keep_fp32_internals(dtype, atol):
    q, k, v, l = random_inputs(2, 2, 30, 8, 6, logit_scale=30.0, seed=4)
    half = [x.to(dtype) for x in (q, k, v, l)]
    out = causal_abc(*half, chunk_size=8)
    assert out.dtype == dtype and torch.isfinite(out).all()
    ref = reference_causal_abc(*(x.double() for x in half))
    torch.testing.assert_close(out.double(), ref, rtol=0, atol=atol)


def test_bad_inputs_raise_value_errors_naming_them():
    q, k, v, l = random_inputs(1, 2, 6, 4, 3)
    with pytest.raises(ValueError, match="phi_logits"):
        causal_abc(q, k, v, l[:, :, :5])
    with pytest.raises(ValueError, match="q, k and v must share a dtype"):
        causal_abc(q.float(), k, v, l)
    with pytest.raises(ValueError, match="head dim"):
        causal_abc(q, k[..., :3], v, l)
    with pytest.raises(ValueError, match="q"):
        causal_abc(q[0], k, v, l)
    with pytest.raises(ValueError, match="chunk_size"):
        causal_abc(q, k, v, l, chunk_size=0)
