"""The decoding recurrence: constant-size state, batch-first fields, clear errors; the step in place
(fixed addresses, no host reads), ABC and GSA."""

import pytest
import torch
from gsa_helpers import assert_rows_close
from gsa_helpers import problem as gsa_problem
from gsa_helpers import step_by_step as gsa_step_by_step
from ops_helpers import no_host_reads, random_inputs, step_by_step

from abc_fairseq.ops import ABCState, causal_abc, causal_abc_step, reference_causal_abc
from abc_fairseq.ops.gsa import GSAState, causal_gsa_step, reference_causal_gsa
from abc_fairseq.strategies._common import PAD_LOGIT


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


def _in_place_steps(step, q, k, v, control, order_at=None, order=None):
    """Steps of ``step`` (causal_abc_step or causal_gsa_step) with in_place=True, the host never
    reading a value; the state's addresses after every step. With ``order_at``: before that step
    the state's rows are gathered by ``order`` into their own storage, as a beam reorder is."""
    state, outs, addresses = None, [], []
    for t in range(q.shape[2]):
        if t == order_at:
            state = type(state)(*(field[:len(order)].copy_(field.index_select(0, order)) for field in state))
            q, k, v, control = (x[order] for x in (q, k, v, control))
        with no_host_reads():
            out, following = step(*(x[:, :, t:t + 1] for x in (q, k, v, control)), state, in_place=True)
        assert state is None or all(a is b for a, b in zip(following, state))  # the state passed, returned
        state = following
        outs.append(out)
        addresses.append(tuple(field.data_ptr() for field in state))  # states are returned, held: no reuse
    return torch.cat(outs, dim=2), addresses


def test_in_place_step_keeps_the_storage_and_the_values():
    q, k, v, l = random_inputs(3, 2, 9, 4, 5, logit_scale=6.0, seed=4)
    l[2, :, :3] = PAD_LOGIT  # the last sequence left-padded
    out, addresses = _in_place_steps(causal_abc_step, q, k, v, l)
    assert len(set(addresses)) == 1
    torch.testing.assert_close(out, step_by_step(q, k, v, l), rtol=0, atol=0)  # the same operations
    torch.testing.assert_close(out, causal_abc(q, k, v, l), rtol=0, atol=1e-10)  # the parallel form
    # A beam reorder (repeat, swap and drop rows) gathered into the same storage before step 5.
    order = torch.tensor([2, 2, 0])
    out, addresses = _in_place_steps(causal_abc_step, q, k, v, l, order_at=5, order=order)
    assert len(set(addresses)) == 1
    expected = causal_abc(*(torch.cat([x[:, :, :5][order], x[order, :, 5:]], dim=2) for x in (q, k, v, l)))
    torch.testing.assert_close(out[:, :, 5:], expected[:, :, 5:], rtol=0, atol=1e-10)


@pytest.mark.parametrize("regime", ["mixed", "near_one"])
def test_in_place_gsa_step_keeps_the_storage_and_the_values(regime):
    q, k, v, g = gsa_problem(2, 3, 8, 4, 6, regime=regime, seed=2)
    out, addresses = _in_place_steps(causal_gsa_step, q, k, v, g)
    assert len(set(addresses)) == 1
    torch.testing.assert_close(out, gsa_step_by_step(q, k, v, g)[0], rtol=1e-12, atol=1e-12)
    assert_rows_close(out, reference_causal_gsa(q, k, v, g), 1e-10)


def test_in_place_refuses_a_state_it_cannot_overwrite():
    one = [x[:, :, :1] for x in random_inputs(1, 2, 1, 4, 3)]
    with pytest.raises(ValueError, match="in_place: state.key_memory is torch.float32"):
        causal_abc_step(*one, state=ABCState.empty(1, 2, 3, 4, 4), in_place=True)
    leaf = ABCState.empty(1, 2, 3, 4, 4, dtype=torch.float64)
    leaf = ABCState(leaf.key_memory.requires_grad_(), *leaf[1:])
    with pytest.raises(ValueError, match="requires grad"):
        causal_abc_step(*one, state=leaf, in_place=True)
    with pytest.raises(ValueError, match="in_place: state.value_memory"):
        causal_gsa_step(*one, state=GSAState(torch.zeros(1, 2, 3, 4, dtype=torch.float64), torch.zeros(1, 2, 3, 4)),
                        in_place=True)
