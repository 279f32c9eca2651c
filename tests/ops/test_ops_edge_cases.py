"""Empty inputs: no rows (N = 0), no sequences (B = 0) or no heads (H = 0) give empty outputs of
the right shape and dtype, and a state that is the one handed in (nothing was read or written)."""

import pytest
import torch
from ops_helpers import random_inputs

from abc_fairseq.ops import ABCState, abc, abc_memory, abc_read, causal_abc, causal_abc_step, reference_abc

D, SLOTS, DV = 4, 3, 5


def _inputs(B, H, N, dtype=torch.float32, M=None, seed=0):
    q, k, v, logits = random_inputs(B, H, N, D, SLOTS, dtype=dtype, dv=DV, seed=seed)
    if M is not None:
        q = random_inputs(B, H, M, D, SLOTS, dtype=dtype, seed=seed + 1)[0]
    return q, k, v, logits


@pytest.mark.parametrize("shape", [(0, 2, 7), (2, 0, 7), (2, 3, 0)], ids=["B=0", "H=0", "N=0"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
def test_causal_abc_empty(shape, dtype):
    B, H, N = shape
    q, k, v, logits = (t.requires_grad_() for t in _inputs(B, H, N, dtype))
    out, state = causal_abc(q, k, v, logits, return_state=True)
    assert out.shape == (B, H, N, DV) and out.dtype == dtype
    work = torch.float64 if dtype == torch.float64 else torch.float32
    empty = ABCState.empty(B, H, SLOTS, D, DV, dtype=work)
    for got, want in zip(state, empty):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    out.sum().backward()  # an empty output still sits on the graph
    assert q.grad.shape == q.shape and v.grad.shape == v.shape
    assert causal_abc(q, k, v, logits).shape == (B, H, N, DV)


def test_causal_abc_no_rows_returns_the_initial_state():
    q, k, v, logits = _inputs(2, 3, 6, torch.float64)
    _, prompt = causal_abc(q, k, v, logits, return_state=True)
    none = [t[:, :, :0] for t in (q, k, v, logits)]
    out, state = causal_abc(*none, initial_state=prompt, return_state=True)
    assert out.shape == (2, 3, 0, DV)
    for got, want in zip(state, prompt):
        assert torch.equal(got, want)
    # Continuing from it is continuing from the prompt.
    more = [t[:, :, 4:] for t in _inputs(2, 3, 10, torch.float64, seed=3)]
    torch.testing.assert_close(causal_abc(*more, initial_state=state),
                               causal_abc(*more, initial_state=prompt), rtol=0, atol=0)
    with pytest.raises(ValueError, match="initial_state"):
        causal_abc(*[t[:1] for t in none], initial_state=prompt)


@pytest.mark.parametrize("shape", [(0, 2, 7), (2, 0, 7)], ids=["B=0", "H=0"])
def test_causal_abc_step_empty(shape):
    B, H, _ = shape
    q, k, v, logits = _inputs(B, H, 1)
    out, state = causal_abc_step(q, k, v, logits)
    assert out.shape == (B, H, 1, DV) and out.dtype == q.dtype
    assert [tuple(t.shape) for t in state] == [(B, H, SLOTS, D), (B, H, SLOTS, DV), (B, H, SLOTS)]
    out, _ = causal_abc_step(q, k, v, logits, state)
    assert out.shape == (B, H, 1, DV)


@pytest.mark.parametrize("shape", [(0, 2, 7, 5), (2, 0, 7, 5), (2, 3, 7, 0)],
                         ids=["B=0", "H=0", "M=0"])
def test_bidirectional_empty(shape):
    B, H, N, M = shape
    q, k, v, logits = _inputs(B, H, N, M=M)
    mask = torch.zeros(B, N, dtype=torch.bool)
    out = abc(q, k, v, logits, key_padding_mask=mask)
    assert out.shape == (B, H, M, DV) and out.dtype == q.dtype
    key_memory, value_memory = abc_memory(k, v, logits, mask)
    assert key_memory.shape == (B, H, SLOTS, D) and value_memory.shape == (B, H, SLOTS, DV)
    assert abc_read(q, key_memory, value_memory).shape == (B, H, M, DV)


def test_bidirectional_no_keys_is_an_empty_memory():
    """N = 0 keys: nothing is written, as for a source made only of padding (zero memory)."""
    q, k, v, logits = _inputs(2, 3, 0, torch.float64, M=4)
    key_memory, value_memory = abc_memory(k, v, logits)
    assert not key_memory.any() and not value_memory.any()
    out = abc(q, k, v, logits)
    assert out.shape == (2, 3, 4, DV) and not out.any()
    padded = _inputs(2, 3, 5, torch.float64, M=4)
    all_padding = torch.ones(2, 5, dtype=torch.bool)
    torch.testing.assert_close(out, abc(q, *padded[1:], key_padding_mask=all_padding), rtol=0, atol=0)
    assert reference_abc(q, k, v, logits).shape == out.shape
