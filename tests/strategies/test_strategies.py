"""Every registered strategy, in float64: parallel form = recurrent form = its naive form
(``Strategy.naive``, written from its paper), bidirectional forms = their naive form, causality,
padding never written, constant decoding state (``abc_fairseq.strategies``); the cases of single
strategies are in test_strategies_each.py. Every test takes the strategy by name only, so a
strategy registered from outside the package runs them too (test_outside_strategy.py)."""

import pytest
import torch
from strategies_helpers import BIDIRECTIONAL, CAUSAL, inputs, left_padded, make, real_rows, run_bidirectional, steps

from abc_fairseq.strategies.phi import SlotProjection

pytestmark = pytest.mark.usefixtures("one_thread")


# ------------------------------------------------------------------------------------------ causal
@pytest.mark.parametrize("name", CAUSAL)
def test_parallel_equals_recurrent_with_padding(name):
    strategy = make(name)
    q, k, v, x = inputs(3, 9)
    valid = left_padded()
    full = strategy.causal(q, k, v, x, valid)
    inc, _ = steps(strategy, q, k, v, x, valid)
    torch.testing.assert_close(inc, full, rtol=0, atol=1e-10)
    assert torch.isfinite(full).all()
    # Several tokens per incremental call continue the same state.
    head, state = strategy.extend(q[:, :, :4], k[:, :, :4], v[:, :, :4], x[:, :4], valid[:, :4], None)
    tail, _ = strategy.extend(q[:, :, 4:], k[:, :, 4:], v[:, :, 4:], x[:, 4:], valid[:, 4:], state)
    torch.testing.assert_close(torch.cat([head, tail], dim=2), full, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", CAUSAL)
def test_future_does_not_leak(name):
    strategy = make(name)
    q, k, v, x = inputs(2, 10)
    changed = [t.clone() for t in (q, k, v)] + [x.clone()]
    for t in changed[:3]:
        t[:, :, 6:] = 40 * torch.randn_like(t[:, :, 6:])
    changed[3][:, 6:] = 40 * torch.randn_like(x[:, 6:])
    a, b = strategy.causal(q, k, v, x, None), strategy.causal(*changed, None)
    torch.testing.assert_close(a[:, :, :6], b[:, :, :6], rtol=0, atol=1e-12)
    assert not torch.allclose(a[:, :, 6:], b[:, :, 6:])


@pytest.mark.parametrize("name", CAUSAL)
def test_causal_padding_is_never_written(name):
    strategy = make(name)
    T, pad = 7, 3
    q, k, v, x = inputs(1, T)
    alone = strategy.causal(q, k, v, x, None)
    noise = inputs(1, pad, seed=5, scale=30.0)
    padded = [torch.cat([a, b], dim=2) for a, b in zip(noise[:3], (q, k, v))] + [torch.cat([noise[3], x], dim=1)]
    valid = torch.ones(1, T + pad, dtype=torch.bool)
    valid[0, :pad] = False
    out = strategy.causal(*padded, valid)
    torch.testing.assert_close(out[:, :, pad:], alone, rtol=0, atol=1e-10)
    other = [t.clone() for t in padded]
    for t in other[:3]:
        t[:, :, :pad] = -t[:, :, :pad]
    other[3][:, :pad] = -other[3][:, :pad]
    torch.testing.assert_close(strategy.causal(*other, valid)[:, :, pad:], alone, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", CAUSAL)
def test_gradients_are_finite_with_padding(name):
    strategy = make(name)
    q, k, v, x = (t.requires_grad_() for t in inputs(3, 9))
    strategy.causal(q, k, v, x, left_padded()).sum().backward()
    for t in (q, k, v):
        assert t.grad is not None and torch.isfinite(t.grad).all()
    assert x.grad is None or torch.isfinite(x.grad).all()  # x feeds only learned controls
    for p in list(strategy.parameters()) + (list(strategy.shared.parameters()) if strategy.shared else []):
        assert p.grad is not None and torch.isfinite(p.grad).all()


@pytest.mark.parametrize("name", CAUSAL)
def test_decoding_state_has_constant_size(name):
    strategy = make(name)
    q, k, v, x = inputs(2, 12)
    state, sizes = None, set()
    for t in range(12):
        row = slice(t, t + 1)
        _, state = strategy.step(q[:, :, row], k[:, :, row], v[:, :, row], x[:, row], None, state)
        sizes.add(tuple((key, tuple(value.shape)) for key, value in sorted(state.items())))
        assert all(value.shape[0] == 2 for value in state.values())  # batch first: reorderable
    assert len(sizes) == 1


def far_logits(strategy):
    """A learned control projection (W_phi, GSA's gates) scaled by 3: logits far from 0, where the
    activations' shapes matter."""
    if isinstance(strategy.shared, SlotProjection):
        strategy.shared.weight.data *= 3
    return strategy


@pytest.mark.parametrize("name", CAUSAL)
def test_parallel_equals_naive_reference(name):
    strategy = far_logits(make(name))
    q, k, v, x = inputs(2, 11, seed=3)
    valid = left_padded(2, 11, (0, 2))
    expected = real_rows(strategy.naive(q, k, v, x, valid), valid)
    torch.testing.assert_close(real_rows(strategy.causal(q, k, v, x, valid), valid), expected, rtol=0, atol=1e-10)


# ------------------------------------------------------------------------------------ bidirectional
@pytest.mark.parametrize("name, mode", BIDIRECTIONAL)
def test_bidirectional_padding_is_never_written(name, mode):
    strategy = make(name, mode)
    T, pad = 7, 2
    q, k, v, x = inputs(1, T)
    if mode == "cross":
        q = inputs(1, 4, seed=9)[0]
    alone = run_bidirectional(strategy, q, k, v, x, None)
    noise = inputs(1, pad, seed=5, scale=30.0)
    k2, v2 = (torch.cat([a, b], dim=2) for a, b in zip(noise[1:3], (k, v)))
    x2 = torch.cat([noise[3], x], dim=1)
    q2 = q if mode == "cross" else torch.cat([noise[0], q], dim=2)
    valid = torch.ones(1, T + pad, dtype=torch.bool)
    valid[0, :pad] = False
    out = run_bidirectional(strategy, q2, k2, v2, x2, valid)
    rows = slice(None) if mode == "cross" else slice(pad, None)
    torch.testing.assert_close(out[:, :, rows], alone, rtol=0, atol=1e-10)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("name, mode", BIDIRECTIONAL)
def test_bidirectional_equals_naive_reference(name, mode):
    strategy = far_logits(make(name, mode))
    q, k, v, x = inputs(2, 11, seed=4)
    valid = left_padded(2, 11, (0, 3))
    if mode == "cross":
        q = inputs(2, 5, seed=6)[0]
    rows = None if mode == "cross" else valid  # cross: every decoder row is real
    expected = real_rows(strategy.naive(q, k, v, x, valid), rows)
    got = real_rows(run_bidirectional(strategy, q, k, v, x, valid), rows)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name, mode", BIDIRECTIONAL)
def test_bidirectional_sees_the_whole_sequence(name, mode):
    """Some later token changes the first row (which one depends on the strategy: a local window's
    neighbour, the global prefix, the last n tokens for window's cross memory)."""
    strategy = make(name, mode)
    q, k, v, x = inputs(2, 10)
    first = run_bidirectional(strategy, q, k, v, x, None)
    assert torch.isfinite(first).all()

    def first_row_reads(later):
        changed = [t.clone() for t in (k, v)]
        for t in changed:
            t[:, :, later] += 5.0
        return not torch.allclose(first[:, :, 0], run_bidirectional(strategy, q, *changed, x, None)[:, :, 0])

    assert any(first_row_reads(later) for later in range(1, 10))


def test_encoder_window_matches_the_reference():
    for n in (1, 2, 3, 4):
        strategy = make("window", "encoder", n=n)
        q, k, v, x = inputs(2, 9, seed=n)
        valid = left_padded(2, 9, (0, 3))
        torch.testing.assert_close(real_rows(strategy.encode(q, k, v, x, valid), valid),
                                   strategy.naive(q, k, v, x, valid), rtol=0, atol=1e-10)


@pytest.mark.parametrize("n", [1, 2, 5, 16])
def test_window_sizes_against_the_reference(n):
    strategy = make("window", n=n)
    q, k, v, x = inputs(2, 13, seed=n)
    valid = left_padded(2, 13, (0, 4))
    got = strategy.causal(q, k, v, x, valid)
    torch.testing.assert_close(got, strategy.naive(q, k, v, x, valid), rtol=0, atol=1e-10)
    torch.testing.assert_close(steps(strategy, q, k, v, x, valid)[0], got, rtol=0, atol=1e-10)


@pytest.mark.parametrize("n", [1, 3, 4, 9, 12])
def test_window_cross_reads_the_last_n_real_source_tokens(n):
    """Cross attention: every query reads the queue fed the whole (left-padded) source, i.e. softmax
    attention over the last n real source tokens; a shorter source leaves slots out of the softmax;
    the padding, whatever it holds, changes nothing."""
    strategy = make("window", "cross", n=n)
    q = inputs(3, 5, seed=n)[0]
    _, k, v, x = inputs(3, 9, seed=n + 1)
    valid = left_padded(3, 9, (0, 3, 8))  # real lengths 9, 6 and 1: n above, at and below them
    got = strategy.read(q, strategy.memory(k, v, x, valid))
    torch.testing.assert_close(got, strategy.naive(q, k, v, x, valid), rtol=0, atol=1e-10)
    for b, pad in enumerate((0, 3, 8)):
        alone = strategy.read(q[b:b + 1], strategy.memory(k[b:b + 1, :, pad:], v[b:b + 1, :, pad:], x[b:b + 1, pad:],
                                                          None))
        torch.testing.assert_close(got[b:b + 1], alone, rtol=0, atol=1e-10)
    noisy = [t.clone() for t in (k, v)]
    for t in noisy:
        t[~valid[:, None, :, None].expand_as(t)] = 1e4
    torch.testing.assert_close(strategy.read(q, strategy.memory(*noisy, x, valid)), got, rtol=0, atol=0)
    if n < 9:  # sequence 0 (9 real tokens): the token just before its last n is not read, the oldest kept is
        for position, read in ((9 - n - 1, False), (9 - n, True)):
            changed = [t.clone() for t in (k, v)]
            for t in changed:
                t[0, :, position] += 5.0
            out = strategy.read(q, strategy.memory(*changed, x, valid))
            assert torch.equal(out[0], got[0]) != read
