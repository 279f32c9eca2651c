"""The kernels without gradients (scoring, validation): the causal launchers run the same forward
kernels outside autograd's Function, under Triton's interpreter."""

import importlib.util

import pytest
import torch
from ops_helpers import kernel_problem

if importlib.util.find_spec("triton") is None:  # not imported here: see triton_helpers
    pytest.skip("triton is not installed", allow_module_level=True)

pytestmark = pytest.mark.usefixtures("interpreted_kernels")


@pytest.mark.parametrize("op", ["causal_abc", "causal_gsa"])
def test_without_gradients_the_same_forward_runs_outside_autograd(op):
    """Scoring and validation (no_grad, or inputs without grad): the forward launches as in
    training but without the autograd Function, so nothing is saved; out and the final state are
    the training path's, bit for bit."""
    fn, inputs = kernel_problem(op, N=70)
    trained, trained_state = fn(*inputs, backend="triton", chunk_size=16, return_state=True)
    kept = []
    with torch.no_grad(), torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t) or t, lambda t: t):
        scored, scored_state = fn(*inputs, backend="triton", chunk_size=16, return_state=True)
    assert scored.grad_fn is None and kept == []
    assert torch.equal(scored, trained.detach())
    for got, expected in zip(scored_state, trained_state):
        assert torch.equal(got, expected)
