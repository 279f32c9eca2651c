"""Attention dropout (--attention-dropout) in the strategies besides ABC_MLP (float64): with a fixed
keep mask every form equals its naive reference with that mask on its read probabilities; in
evaluation or at rate 0 nothing changes, bitwise; drawn masks are unbiased; gradients pass gradcheck;
the kernel attentions, which form no probabilities, apply none and the attention module says so."""

import logging

import pytest
import torch
from attention_helpers import E, make_attention
from strategies_helpers import BIDIRECTIONAL, CAUSAL, N_SLOTS, inputs, left_padded, make, real_rows, run_bidirectional

from abc_fairseq.modules import ABCMultiheadAttention, abc_attention
from abc_fairseq.strategies import STRATEGIES

pytestmark = pytest.mark.usefixtures("one_thread")

RATE = 0.3
ALL = [(name, "causal") for name in CAUSAL] + BIDIRECTIONAL
# Those whose mask a test can fix; the ABC_MLP ops draw their own (tested in tests/ops).
DROPPING = [(name, mode) for name, mode in ALL
            if STRATEGIES[name].applies_dropout() and STRATEGIES[name].dropout_through_keep_mask]


def build(name, mode, dropout):
    strategy = make(name, mode, dropout=dropout)
    strategy.use_evaluation_draws()  # a control random in training (random's slots) draws as in eval
    return strategy


def problem(mode, seed=0):
    """q [B, H, M, d], k, v, x and left-padded ``valid`` [B, N]; M != N for cross attention."""
    q, k, v, x = inputs(2, 9, seed=seed)
    if mode == "cross":
        q = inputs(2, 5, seed=seed + 7)[0]
    return q, k, v, x, left_padded(2, 9, (0, 3))


def forward(strategy, q, k, v, x, valid):
    out = strategy.causal(q, k, v, x, valid) if strategy.mode == "causal" else \
        run_bidirectional(strategy, q, k, v, x, valid)
    return out if strategy.mode == "cross" else real_rows(out, valid)


def fixed_mask(strategy, q, seed=3):
    g = torch.Generator().manual_seed(seed)
    keep = torch.rand(*q.shape[:3], N_SLOTS, generator=g) >= RATE

    def keep_mask(shape, device):
        assert tuple(shape) == tuple(keep.shape)
        return keep

    strategy.keep_mask = keep_mask
    return keep


@pytest.mark.parametrize("name, mode", DROPPING)
def test_fixed_mask_equals_the_reference_with_that_mask(name, mode):
    strategy = build(name, mode, RATE).train()
    q, k, v, x, valid = problem(mode)
    keep = fixed_mask(strategy, q)
    rows = None if mode == "cross" else valid
    expected = real_rows(strategy.naive(q, k, v, x, valid, keep, RATE), rows)  # before cluster's centroids move
    undropped = real_rows(strategy.naive(q, k, v, x, valid), rows)
    got = forward(strategy, q, k, v, x, valid)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-10)
    assert not torch.allclose(got, undropped)  # the mask did drop something


@pytest.mark.parametrize("name, mode", ALL)
def test_evaluation_and_rate_zero_change_nothing(name, mode):
    q, k, v, x, valid = problem(mode, seed=1)
    plain = forward(build(name, mode, 0.0).eval(), q, k, v, x, valid)
    assert torch.equal(forward(build(name, mode, 0.5).eval(), q, k, v, x, valid), plain)
    rng = torch.get_rng_state()
    assert torch.equal(forward(build(name, mode, 0.0).train(), q, k, v, x, valid), plain)
    assert torch.equal(torch.get_rng_state(), rng)  # no mask drawn at rate 0


@pytest.mark.parametrize("name, mode", DROPPING)
def test_drawn_masks_are_unbiased(name, mode):
    """The mean over masks drawn from torch's RNG approaches the output without dropout (within 5
    standard errors, elementwise)."""
    strategy = build(name, mode, RATE).train()
    q, k, v, x, valid = problem(mode, seed=2)
    plain = forward(build(name, mode, 0.0).eval(), q, k, v, x, valid)
    torch.manual_seed(0)
    with torch.no_grad():
        draws = torch.stack([forward(strategy, q, k, v, x, valid) for _ in range(300)])
    assert not torch.equal(draws[0], draws[1])
    error = (draws.mean(0) - plain).abs()
    assert (error <= 5 * draws.std(0) / 300 ** 0.5 + 1e-12).all(), error.max()


@pytest.mark.parametrize("name, mode", DROPPING)
def test_gradients_with_a_fixed_mask(name, mode):
    strategy = build(name, mode, RATE).train()
    q, k, v, x, valid = problem(mode, seed=4)
    q, k, v = (t[:1, :, :6].clone().requires_grad_() for t in (q, k, v))
    x, valid = x[:1, :6], valid[:1, :6]
    fixed_mask(strategy, q)
    assert torch.autograd.gradcheck(lambda *qkv: forward(strategy, *qkv, x, valid), (q, k, v))


def test_strategies_without_dropout_apply_none_and_say_so(monkeypatch, caplog):
    """The kernel attentions (``applies_dropout`` False: no probabilities to drop): training with a
    rate equals evaluation, and the attention module warns exactly for those."""
    for name in CAUSAL:
        if not STRATEGIES[name].applies_dropout():
            q, k, v, x, valid = problem("causal", seed=5)
            trained = forward(build(name, "causal", 0.5).train(), q, k, v, x, valid)
            assert torch.equal(trained, forward(build(name, "causal", 0.5).eval(), q, k, v, x, valid))
    with caplog.at_level(logging.WARNING, logger=abc_attention.logger.name):
        for name in CAUSAL:
            warns = not STRATEGIES[name].applies_dropout()
            monkeypatch.setattr(abc_attention, "_warned_dropout", False)
            caplog.clear()
            spec = make_attention("causal", name, memory=N_SLOTS)[0].strategy_spec
            ABCMultiheadAttention(E, spec.num_heads, dropout=0.1, self_attention=True, causal=True, spec=spec)
            assert ("is not applied by %s attention" % name in caplog.text) == warns, name
