"""The decoding recurrence: constant-size state, batch-first fields, clear errors."""

import pytest
import torch
from ops_helpers import random_inputs, step_by_step

from abc_fairseq.ops import ABCState, causal_abc_step, reference_causal_abc


def test_steps_match_the_reference():
    inputs = random_inputs(2, 3, 17, 5, 7, seed=1)
    torch.testing.assert_close(step_by_step(*inputs), reference_causal_abc(*inputs), rtol=0, atol=1e-10)


def test_state_size_does_not_grow():
    q, k, v, l = random_inputs(2, 2, 64, 8, 4)
    state, sizes = None, set()
    for t in range(64):
        row = slice(t, t + 1)
        _, state = causal_abc_step(q[:, :, row], k[:, :, row], v[:, :, row], l[:, :, row], state)
        sizes.add(state.nbytes())
    assert sizes == {2 * 2 * 4 * (8 + 8 + 1) * 8}  # B H n (d + dv + 1) fp64 numbers


def test_state_reorders_along_the_batch():
    q, k, v, l = random_inputs(3, 2, 5, 4, 3)
    state = None
    for t in range(4):
        row = slice(t, t + 1)
        _, state = causal_abc_step(q[:, :, row], k[:, :, row], v[:, :, row], l[:, :, row], state)
    order = torch.tensor([2, 0, 0])
    reordered = state.index_select(order)
    out, _ = causal_abc_step(q[order][:, :, 4:5], k[order][:, :, 4:5], v[order][:, :, 4:5],
                             l[order][:, :, 4:5], reordered)
    expected, _ = causal_abc_step(q[:, :, 4:5], k[:, :, 4:5], v[:, :, 4:5], l[:, :, 4:5], state)
    torch.testing.assert_close(out, expected[order], rtol=0, atol=0)


def test_half_precision_step_keeps_fp32_state():
    q, k, v, l = (x.half() for x in random_inputs(1, 2, 1, 4, 3, logit_scale=50.0))
    out, state = causal_abc_step(q, k, v, l)
    assert out.dtype == torch.float16
    assert all(field.dtype == torch.float32 for field in state)
    assert torch.isfinite(out).all()


def test_errors_name_the_problem():
    q, k, v, l = random_inputs(1, 2, 2, 4, 3)
    with pytest.raises(ValueError, match="one token"):
        causal_abc_step(q, k, v, l)
    one = [x[:, :, :1] for x in (q, k, v, l)]
    with pytest.raises(ValueError, match="state"):
        causal_abc_step(*one, state=ABCState.empty(1, 2, 5, 4, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="state must be an ABCState"):
        causal_abc_step(*one, state=(1, 2, 3))
