"""The fused decoding step under Triton's interpreter: in place (``in_place=True``) it writes the
next state over the state passed, at the same addresses every step, reads nothing back to the host
and gives the PyTorch step's values; a state that is not contiguous is advanced in a copy written
back into it; GSA's step on the same kernel equals its recurrence."""

import importlib.util

import pytest
import torch
from gsa_helpers import assert_rows_close, problem
from ops_helpers import no_host_reads, random_inputs

from abc_fairseq.ops import ABCState, causal_abc, causal_abc_step
from abc_fairseq.ops.gsa import causal_gsa_step, reference_causal_gsa

if importlib.util.find_spec("triton") is None:  # not imported here: see triton_helpers
    pytest.skip("triton is not installed", allow_module_level=True)

pytestmark = pytest.mark.usefixtures("interpreted_kernels")


def _steps(inputs, state, **kwargs):
    """Every row of ``inputs`` through causal_abc_step after ``state``: outputs and the states."""
    outs, states = [], []
    for t in range(inputs[0].shape[2]):
        out, state = causal_abc_step(*(x[:, :, t:t + 1] for x in inputs), state, **kwargs)
        outs.append(out)
        states.append(state)
    return torch.cat(outs, dim=2), states


@pytest.mark.parametrize("dtype,atol", [(torch.float32, 2e-6), (torch.float16, 2e-3)])
def test_in_place_kernel_step_equals_the_torch_step_at_fixed_addresses(dtype, atol):
    q, k, v, l = (x.to(dtype) for x in random_inputs(2, 2, 6, 16, 5, logit_scale=8.0, seed=3))
    _, prefix = causal_abc(*(x[:, :, :2] for x in (q, k, v, l)), return_state=True, backend="torch")
    rest = [x[:, :, 2:] for x in (q, k, v, l)]
    expected, expected_states = _steps(rest, ABCState(*(f.clone() for f in prefix)), backend="torch")
    state = ABCState(*(f.clone() for f in prefix))
    addresses = tuple(field.data_ptr() for field in state)
    with no_host_reads():
        out, states = _steps(rest, state, backend="triton", in_place=True)
    assert all(s is state for s in states)  # the state passed, advanced and returned every step
    assert tuple(field.data_ptr() for field in state) == addresses
    torch.testing.assert_close(out, expected, rtol=0, atol=atol)
    for got, want in zip(state, expected_states[-1]):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_in_place_kernel_step_writes_back_into_a_strided_state():
    q, k, v, l = (x.float() for x in random_inputs(3, 2, 1, 8, 4, seed=5))
    _, state = causal_abc(*random_inputs(3, 2, 3, 8, 4, seed=6, dtype=torch.float32), return_state=True,
                          backend="torch")
    expected, following = causal_abc_step(q, k, v, l, ABCState(*(f.clone() for f in state)), backend="torch")
    # Every field a non-contiguous view (heads and batch swapped in storage).
    strided = ABCState(*(f.transpose(0, 1).contiguous().transpose(0, 1) for f in state))
    assert not strided.key_memory.is_contiguous()
    out, advanced = causal_abc_step(q, k, v, l, strided, backend="triton", in_place=True)
    assert advanced is strided
    torch.testing.assert_close(out, expected, rtol=0, atol=2e-6)
    for got, want in zip(strided, following):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("regime", ["mixed", "near_one", "alternating"])
@pytest.mark.parametrize("in_place", [False, True])
def test_gsa_step_on_the_kernel_equals_the_recurrence(regime, in_place):
    """GSA's gates on the same kernel (``GATED``): fp32 against the float64 oracle row by row, gates
    within 1e-38 of 1 included (-expm1 by its series there)."""
    q, k, v, g = problem(2, 2, 7, 16, 5, regime=regime, dv=8, seed=4)
    state, outs = None, []
    with no_host_reads():
        for t in range(7):
            out, following = causal_gsa_step(*(x[:, :, t:t + 1].float() for x in (q, k, v, g)), state,
                                              backend="triton", in_place=in_place)
            assert not in_place or state is None or following is state
            state = following
            outs.append(out)
    assert_rows_close(torch.cat(outs, dim=2).double(), reference_causal_gsa(q, k, v, g), 2e-5)
