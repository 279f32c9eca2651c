"""window-sink (the first S real tokens plus a window of W = n - S, abc_fairseq/strategies/window_sink.py),
float64: every form equals softmax attention restricted to its key set, computed densely from the
definition (an N x N mask, independent of ``naive``), for S from 0 to n and beyond the sequence,
with left padding; S = 0 is ``window`` and S = n is ``global``; the decoding state is n slots
whatever the length; a fixed dropout mask maps onto the documented slots; ``--sink-tokens`` is
checked against the memory size and reaches every layer of a model fairseq-train builds. The
generic strategy tests run it with the default S (test_strategies*.py)."""

import pytest
import torch
from fairseq_helpers import build, parse_error
from strategies_helpers import D, H, inputs, left_padded, make, real_rows, run_bidirectional, steps

import abc_fairseq.models  # noqa: F401 (registers abc_lm)
from abc_fairseq.models.abc_options import DECODER_SELF, read_attention
from abc_fairseq.strategies import StrategyOptions
from abc_fairseq.strategies.window_sink import SINKS

pytestmark = pytest.mark.usefixtures("one_thread")

# (n, S): no sinks, a few, all sinks, and more sinks than the shortest sequence has tokens.
SIZES = [(1, 0), (1, 1), (3, 1), (4, 2), (5, 0), (5, 3), (6, 6), (8, 7)]


def sink_window(name="window-sink", mode="causal", n=4, sinks=2, dropout=0.0):
    return make(name, mode, n=n, options=StrategyOptions(sink_tokens=sinks), dropout=dropout)


def allowed_keys(mode, L, M, sinks, window):
    """bool [M, L]: query row (rank) m may read key rank i, written from the definition."""
    m, i = torch.arange(M)[:, None], torch.arange(L)[None, :]
    sink = i < sinks
    if mode == "causal":
        return (i <= m) & (sink | (m - i < window))
    if mode == "encoder":
        before = (window - 1) // 2 if window else 0
        return sink | ((window > 0) & (i - m >= -before) & (i - m <= window - 1 - before))
    return (sink | (i >= L - window)).expand(M, L)


def dense_reference(q, k, v, valid, mode, sinks, window, scale):
    """Softmax attention of every real query over its allowed real keys (padding rows 0)."""
    out = torch.zeros_like(q)
    for b in range(q.shape[0]):
        keys = torch.nonzero(valid[b]).flatten()
        rows = torch.arange(q.shape[2]) if mode == "cross" else keys
        allowed = allowed_keys(mode, len(keys), len(rows), sinks, window)
        scores = scale * q[b][:, rows] @ k[b][:, keys].transpose(-1, -2)
        probs = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        out[b][:, rows] = probs @ v[b][:, keys]
    return out


@pytest.mark.parametrize("n, sinks", SIZES)
def test_causal_forms_equal_the_dense_definition(n, sinks):
    strategy = sink_window(n=n, sinks=sinks)
    q, k, v, x = inputs(3, 13, seed=n + 10 * sinks)
    valid = left_padded(3, 13, (0, 4, 11))  # 13, 9 and 2 real tokens
    expected = dense_reference(q, k, v, valid, "causal", sinks, n - sinks, strategy.scale)
    full = strategy.causal(q, k, v, x, valid)
    torch.testing.assert_close(real_rows(full, valid), expected, rtol=0, atol=1e-10)
    torch.testing.assert_close(real_rows(strategy.naive(q, k, v, x, valid), valid), expected, rtol=0, atol=1e-10)
    torch.testing.assert_close(steps(strategy, q, k, v, x, valid)[0], full, rtol=0, atol=1e-10)


@pytest.mark.parametrize("mode", ["encoder", "cross"])
@pytest.mark.parametrize("n, sinks", SIZES)
def test_bidirectional_forms_equal_the_dense_definition(mode, n, sinks):
    strategy = sink_window(mode=mode, n=n, sinks=sinks)
    q, k, v, x = inputs(3, 13, seed=n + 10 * sinks)
    if mode == "cross":
        q = inputs(3, 5, seed=n + 1)[0]
    valid = left_padded(3, 13, (0, 4, 11))
    rows = None if mode == "cross" else valid
    expected = real_rows(dense_reference(q, k, v, valid, mode, sinks, n - sinks, strategy.scale), rows)
    got = real_rows(run_bidirectional(strategy, q, k, v, x, valid), rows)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-10)
    torch.testing.assert_close(real_rows(strategy.naive(q, k, v, x, valid), rows), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("mode", ["causal", "encoder", "cross"])
def test_no_sinks_is_window_and_all_sinks_is_global(mode):
    q, k, v, x = inputs(2, 11, seed=5)
    if mode == "cross":
        q = inputs(2, 4, seed=6)[0]
    valid = left_padded(2, 11, (0, 3))
    rows = None if mode == "cross" else valid

    def run(strategy):
        out = strategy.causal(q, k, v, x, valid) if mode == "causal" else run_bidirectional(strategy, q, k, v, x, valid)
        return real_rows(out, rows)

    for n in (1, 4, 5):
        torch.testing.assert_close(run(sink_window(mode=mode, n=n, sinks=0)), run(make("window", mode, n=n)),
                                   rtol=0, atol=1e-12)
        torch.testing.assert_close(run(sink_window(mode=mode, n=n, sinks=n)), run(make("global", mode, n=n)),
                                   rtol=0, atol=1e-12)


@pytest.mark.parametrize("n, sinks", [(4, 2), (5, 0), (3, 3)])
def test_decoding_state_is_n_slots_and_keeps_the_sinks(n, sinks):
    """After 5n tokens the state still holds n slots; the last row reads the first S tokens and the
    last W, and nothing in between."""
    strategy = sink_window(n=n, sinks=sinks)
    N = 5 * n
    q, k, v, x = inputs(2, N, seed=2)
    state, shapes = None, set()
    for t in range(N):
        row = slice(t, t + 1)
        last, state = strategy.step(q[:, :, row], k[:, :, row], v[:, :, row], x[:, row], None, state)
        shapes.add(tuple((key, tuple(value.shape)) for key, value in sorted(state.items())))
    assert shapes == {(("count", (2,)), ("key_memory", (2, H, n, D)), ("value_memory", (2, H, n, D)))}
    torch.testing.assert_close(state["key_memory"][:, :, :sinks], k[:, :, :sinks], rtol=0, atol=0)
    torch.testing.assert_close(state["key_memory"][:, :, sinks:], k[:, :, N - (n - sinks):], rtol=0, atol=0)

    def last_row_after_changing(position):
        changed = [t.clone() for t in (k, v)]
        for t in changed:
            t[:, :, position] += 3.0
        return strategy.causal(q, *changed, x, None)[:, :, -1]

    for position in range(N):
        read = position < sinks or position >= N - (n - sinks)
        assert read != torch.allclose(last_row_after_changing(position), last[:, :, 0], rtol=0, atol=1e-12), position


@pytest.mark.parametrize("mode", ["causal", "encoder", "cross"])
def test_fixed_dropout_mask_reads_the_documented_slots(mode):
    """Slot j < S is sink j, slot S + j the window's j-th key: the forms and ``naive`` agree on it,
    and dropping a sink slot removes exactly that sink's key from a row that reads it."""
    n, sinks, rate = 5, 2, 0.3
    strategy = sink_window(mode=mode, n=n, sinks=sinks, dropout=rate).train()
    q, k, v, x = inputs(2, 10, seed=7)
    if mode == "cross":
        q = inputs(2, 4, seed=8)[0]
    valid = left_padded(2, 10, (0, 3))
    keep = torch.rand(*q.shape[:3], n, generator=torch.Generator().manual_seed(4)) >= rate
    strategy.keep_mask = lambda shape, device: keep
    rows = None if mode == "cross" else valid
    got = real_rows(strategy.causal(q, k, v, x, valid) if mode == "causal" else
                    run_bidirectional(strategy, q, k, v, x, valid), rows)
    torch.testing.assert_close(got, real_rows(strategy.naive(q, k, v, x, valid, keep, rate), rows), rtol=0, atol=1e-10)
    # Sequence 0 (no padding), last row, which reads both sinks in every mode: keep only sink slot 1.
    keep = torch.zeros_like(keep)
    keep[0, :, -1, 1] = True
    out = strategy.causal(q, k, v, x, valid) if mode == "causal" else run_bidirectional(strategy, q, k, v, x, valid)
    probs = torch.softmax(dense_scores(strategy, q[0, :, -1], k[0], mode, sinks, n - sinks), dim=-1)
    torch.testing.assert_close(out[0, :, -1], probs[:, 1:2] * v[0, :, 1] / (1 - rate), rtol=0, atol=1e-10)


def dense_scores(strategy, q_row, keys, mode, sinks, window):
    """Scores [H, L] of the last query row of a sequence without padding over its allowed keys."""
    L = keys.shape[1]
    allowed = allowed_keys(mode, L, L, sinks, window)[-1]
    return (strategy.scale * keys @ q_row[..., None])[..., 0].masked_fill(~allowed, float("-inf"))


def test_sinks_beyond_the_memory_size_are_refused():
    flags = {"memory_size": "--decoder-self-memory", "sink_tokens": "--sink-tokens"}
    with pytest.raises(ValueError, match=r"--sink-tokens \(5\) must not exceed --decoder-self-memory \(4\)"):
        make("window-sink", n=4, options=StrategyOptions(flags, sink_tokens=5))
    from argparse import Namespace

    with pytest.raises(ValueError, match="--sink-tokens"):
        read_attention(Namespace(decoder_self_attn="window-sink", decoder_self_memory=3, sink_tokens=4), DECODER_SELF)
    assert read_attention(Namespace(decoder_self_attn="window-sink", decoder_self_memory=4), DECODER_SELF).options \
        .get(SINKS) == 4  # the default S


LM = ["--task", "language_modeling", "--arch", "abc_lm", "--decoder-layers", "2", "--decoder-embed-dim", "16",
      "--decoder-ffn-embed-dim", "32", "--decoder-attention-heads", "2", "--tokens-per-sample", "16",
      "--decoder-self-attn", "window-sink", "--decoder-self-memory", "6"]


def test_fairseq_train_builds_it_with_its_setting(lm_dir, capsys):
    _, model = build([lm_dir, *LM, "--sink-tokens", "2"])
    assert {(layer.self_attn.strategy.sinks, layer.self_attn.strategy.window)
            for layer in model.decoder.layers} == {(2, 4)}
    assert not [p for layer in model.decoder.layers for p in layer.self_attn.strategy.parameters()]
    _, model = build([lm_dir, *LM])
    assert {layer.self_attn.strategy.sinks for layer in model.decoder.layers} == {4}
    for bad in ("-1", "two"):
        assert "argument --sink-tokens:" in parse_error([lm_dir, *LM, "--sink-tokens", bad], capsys)
    with pytest.raises(ValueError, match="--sink-tokens .* must not exceed --decoder-self-memory"):
        build([lm_dir, *LM, "--sink-tokens", "7"])
