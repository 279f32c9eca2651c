"""Causality holds for non-finite inputs: a NaN or an infinity at row r changes no output row
before r (issue: the chunked forms summed 0 * NaN from later rows into earlier ones), in the
chunked op and in every registered strategy's parallel causal form."""

import pytest
import torch
from ops_helpers import random_inputs, step_by_step
from strategies_helpers import OPTIONS

from abc_fairseq.ops import causal_abc
from abc_fairseq.ops.utils import zero_safe_matmul
from abc_fairseq.strategies import STRATEGIES, get_strategy

pytestmark = pytest.mark.usefixtures("one_thread")

BAD_VALUES = [float("nan"), float("inf"), float("-inf")]
N, BAD_ROW = 20, 10  # the bad row sits inside a chunk / band block, not at its start


def _poison(tensor, value, row=BAD_ROW, dim=2):
    """A copy of ``tensor`` with ``value`` in sequence 0, position ``row`` (along ``dim``)."""
    out = tensor.clone()
    index = [0] + [slice(None)] * (tensor.dim() - 1)
    index[dim] = row
    out[tuple(index)] = value
    return out


def _assert_causal(out, clean, row=BAD_ROW, atol=1e-12):
    """Rows before ``row`` of the poisoned sequence, and every row of the others, are unchanged."""
    torch.testing.assert_close(out[0, :, :row], clean[0, :, :row], rtol=0, atol=atol)
    torch.testing.assert_close(out[1:], clean[1:], rtol=0, atol=atol)


@pytest.mark.parametrize("value", BAD_VALUES, ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("which", ["q", "k", "v", "logits"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_causal_abc_rows_before_a_bad_row_are_exact(value, which, dtype):
    inputs = dict(zip(["q", "k", "v", "logits"], random_inputs(2, 2, N, 4, 3, dtype=dtype)))
    poisoned = dict(inputs, **{which: _poison(inputs[which], value)})
    atol = 1e-12 if dtype == torch.float64 else 1e-5
    for chunk in (4, 16, 64):
        out = causal_abc(*poisoned.values(), chunk_size=chunk)
        _assert_causal(out, causal_abc(*inputs.values(), chunk_size=chunk), atol=atol)
        # From the bad row on, the op agrees with the recurrence, NaN for NaN.
        torch.testing.assert_close(out, step_by_step(*poisoned.values()), rtol=0, atol=atol,
                                   equal_nan=True)


def test_causal_abc_nan_in_one_sequence_keeps_another_sequence_exact():
    """A NaN logit in sequence 0 must not hide, from the chunk-level overflow check, a rise of
    logits by far more than exp's range in sequence 1 of the same chunk."""
    q, k, v, logits = random_inputs(2, 1, 16, 4, 3)
    logits[1, :, 5:] += 300.0
    poisoned = _poison(logits, float("nan"), row=12)
    out = causal_abc(q, k, v, poisoned, chunk_size=16)
    torch.testing.assert_close(out[1:], step_by_step(q[1:], k[1:], v[1:], logits[1:]), rtol=0, atol=1e-12)
    torch.testing.assert_close(out[0, :, :12], step_by_step(q, k, v, logits)[0, :, :12], rtol=0, atol=1e-12)
    assert torch.isfinite(out[1]).all()


def test_causal_abc_bad_row_in_a_later_block_and_with_a_state():
    """Blocks and an initial state carry only the past: a NaN in block 2 leaves block 1 alone."""
    q, k, v, logits = random_inputs(2, 2, 24, 4, 3)
    poisoned = _poison(v, float("nan"), row=17)
    out = causal_abc(q, k, poisoned, logits, chunk_size=4, block_size=8)
    _assert_causal(out, causal_abc(q, k, v, logits, chunk_size=4, block_size=8), row=17)


def test_zero_safe_matmul_equals_matmul_when_finite_and_isolates_nan():
    g = torch.Generator().manual_seed(0)
    weights = torch.randn(3, 5, 5, generator=g, dtype=torch.float64).tril()
    values = torch.randn(3, 5, 2, generator=g, dtype=torch.float64)
    keep = torch.ones(5, 5, dtype=torch.bool).tril()
    assert torch.equal(zero_safe_matmul(weights, values, keep), weights @ values)
    values[1, 3, 0] = float("nan")
    out = zero_safe_matmul(weights, values, keep)
    clean = weights @ values.nan_to_num(0.0)
    torch.testing.assert_close(out[1, :3], clean[1, :3])  # rows before the NaN
    assert torch.isnan(out[1, 3:, 0]).all() and torch.isfinite(out[1, :, 1]).all()
    assert torch.equal(out[0], clean[0]) and torch.equal(out[2], clean[2])


# ------------------------------------------------------------------------- strategies (registry)
H, D, SLOTS, C_IN = 2, 4, 4, 6
CAUSAL = [name for name, cls in STRATEGIES.items() if "causal" in cls.modes]


def _strategy(name):
    torch.manual_seed(0)
    cls = get_strategy(name)
    shared = cls.build_shared(C_IN, H, SLOTS, OPTIONS)
    strategy = cls(H, D, SLOTS, "causal", shared=shared, options=OPTIONS)
    if shared is not None:
        shared.double()
    return strategy.double().eval()


@pytest.mark.parametrize("name", CAUSAL)
def test_strategy_parallel_form_is_causal_for_nonfinite_inputs(name):
    strategy = _strategy(name)
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, H, N, D, generator=g, dtype=torch.float64) for _ in range(3))
    x = torch.randn(2, N, C_IN, generator=g, dtype=torch.float64)
    clean = strategy.causal(q, k, v, x, None)
    for value in BAD_VALUES:
        for which, tensor, dim in (("q", q, 2), ("k", k, 2), ("v", v, 2), ("x", x, 1)):
            args = dict(q=q, k=k, v=v, x=x, valid=None)
            args[which] = _poison(tensor, value, dim=dim)
            out = strategy.causal(**args)
            try:
                _assert_causal(out, clean)
            except AssertionError as error:
                raise AssertionError(f"{name}: {value} in {which} at row {BAD_ROW}") from error
