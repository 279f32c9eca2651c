"""Attention dropout (--attention-dropout) in the strategies besides ABC_MLP (float64): with a fixed
keep mask every form equals its naive reference with that mask on its read probabilities; in
evaluation or at rate 0 nothing changes, bitwise; drawn masks are unbiased; gradients pass gradcheck;
the kernel attentions, which form no probabilities, apply none and the attention module says so."""

import logging

import pytest
import torch
from attention_helpers import E, make_attention
from strategies_helpers import (
    BIDIRECTIONAL,
    CAUSAL,
    N_SLOTS,
    inputs,
    left_padded,
    make,
    naive_reference,
    run_bidirectional,
)

from abc_fairseq.modules import ABCMultiheadAttention, abc_attention
from abc_fairseq.strategies import STRATEGIES
from abc_fairseq.strategies.random_slots import hashed_slots

pytestmark = pytest.mark.usefixtures("one_thread")

RATE = 0.3
ABC_FAMILY = ("abc", "abc-relu", "abc-sigmoid")  # dropout inside the ops, tested in test_ops_dropout.py
ALL = [(name, "causal") for name in CAUSAL] + BIDIRECTIONAL
DROPPING = [(name, mode) for name, mode in ALL if STRATEGIES[name].applies_dropout() and name not in ABC_FAMILY]


def build(name, mode, dropout):
    strategy = make(name, mode, dropout=dropout)
    if name == "random":  # training draws fresh slots: use the eval hash so that runs compare
        strategy.slots = lambda ranks: hashed_slots(ranks, strategy.num_heads, N_SLOTS, strategy.slot_seed)
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
    return out if strategy.mode == "cross" else out.masked_fill(~valid[:, None, :, None], 0.0)


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
    expected = naive_reference(name, strategy, q, k, v, x, valid, keep, RATE)  # before cluster's centroids move
    undropped = naive_reference(name, strategy, q, k, v, x, valid)
    got = forward(strategy, q, k, v, x, valid)
    if mode != "cross":
        expected = expected.masked_fill(~valid[:, None, :, None], 0.0)
        undropped = undropped.masked_fill(~valid[:, None, :, None], 0.0)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-10)
    assert not torch.allclose(got, undropped)  # the mask did drop something


@pytest.mark.parametrize("name, mode", ALL)
def test_evaluation_and_rate_zero_change_nothing(name, mode):
    q, k, v, x, valid = problem(mode, seed=1)
    plain = forward(build(name, mode, 0.0).eval(), q, k, v, x, valid)
    assert torch.equal(forward(build(name, mode, 0.5).eval(), q, k, v, x, valid), plain)
    rng = torch.get_rng_state()
    assert torch.equal(forward(build(name, mode, 0.0).train(), q, k, v, x, valid), plain)
    assert torch.equal(torch.get_rng_state(), rng) or name == "random"  # no mask drawn at rate 0


@pytest.mark.parametrize("name, mode", [("window", "causal"), ("window", "encoder"), ("window", "cross"),
                                        ("compressive", "causal"), ("compressive", "cross"), ("linformer", "causal"),
                                        ("global", "cross")])
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


@pytest.mark.parametrize("name, mode", [("window", "causal"), ("window", "encoder"), ("window", "cross"),
                                        ("compressive", "causal"), ("cluster", "causal"), ("global", "cross")])
def test_gradients_with_a_fixed_mask(name, mode):
    strategy = build(name, mode, RATE).train()
    q, k, v, x, valid = problem(mode, seed=4)
    q, k, v = (t[:1, :, :6].clone().requires_grad_() for t in (q, k, v))
    x, valid = x[:1, :6], valid[:1, :6]
    fixed_mask(strategy, q)
    assert torch.autograd.gradcheck(lambda *qkv: forward(strategy, *qkv, x, valid), (q, k, v))


def test_kernel_attentions_apply_none_and_say_so(monkeypatch, caplog):
    kernels = [name for name, cls in STRATEGIES.items() if not cls.applies_dropout()]
    assert kernels == ["elu", "rfa", "t2r", "linear", "gated-linear"]
    for name in kernels:  # no probabilities to drop: training with a rate equals evaluation
        q, k, v, x, valid = problem("causal", seed=5)
        trained = forward(build(name, "causal", 0.5).train(), q, k, v, x, valid)
        assert torch.equal(trained, forward(build(name, "causal", 0.5).eval(), q, k, v, x, valid))
    with caplog.at_level(logging.WARNING, logger=abc_attention.logger.name):
        for name, warns in (("window", False), ("cluster", False), ("elu", True)):
            monkeypatch.setattr(abc_attention, "_warned_dropout", False)
            caplog.clear()
            spec = make_attention("causal", name, memory=N_SLOTS)[0].strategy_spec
            ABCMultiheadAttention(E, spec.num_heads, dropout=0.1, self_attention=True, causal=True, spec=spec)
            assert ("is not applied by %s attention" % name in caplog.text) == warns, name
