"""What the causal kernels keep between forward and backward and what their backward allocates,
under Triton's interpreter (issue 44's recomputation and peak-memory targets). Counted, not
timed: autograd's saved tensors, and the tensors the backward's factory ops create.
"""

import importlib.util

import pytest
import torch
from ops_helpers import kernel_problem
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

if importlib.util.find_spec("triton") is None:  # not imported here: see triton_helpers
    pytest.skip("triton is not installed", allow_module_level=True)

pytestmark = [pytest.mark.usefixtures("interpreted_kernels"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]

N = 96


@pytest.mark.parametrize("op", ["causal_abc", "causal_gsa"])
def test_nothing_of_the_sequences_length_is_kept_in_fp32_for_the_backward(op):
    """With fp16 inputs, the tensors autograd keeps between forward and backward are the inputs
    (fp16) and the chunk state (N / C rows): no fp32 tensor with a row per token (issue 44's
    recomputation target; GSA's logits and normalisers were kept as fp32 [Z, N, n] before)."""
    fn, inputs = kernel_problem(op, torch.float16, N=N)
    kept = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t) or t, lambda t: t):
        out = fn(*inputs, backend="triton", chunk_size=16)
    long_fp32 = [tuple(t.shape) for t in kept if t.dtype == torch.float32 and N in t.shape]
    assert kept and long_fp32 == []
    assert {t.dtype for t in kept if N in t.shape} == {torch.float16}
    out.sum().backward()


class _AllocationRecorder(TorchDispatchMode):
    """The (dtype, shape) of every tensor an op returns in storage of its own while active: what
    factory ops, copies, casts and out-of-place ops allocate (views and ``out=`` writes excluded)."""

    def __init__(self):
        super().__init__()
        self.created = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        given = {t.untyped_storage().data_ptr() for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.numel() and t.untyped_storage().data_ptr() not in given:
                self.created.append((t.dtype, tuple(t.shape)))
        return out


@pytest.mark.parametrize("op", ["causal_abc", "causal_gsa"])
def test_the_backward_allocates_three_fp32_row_terms_per_token_and_slot(op):
    """The fp32 tensors with a row per token ([.., N, ..] or flattened [Z N, ..]) that the backward
    allocates hold 3 n floats per token and head: its row terms dS, P' and dg, dl's two parts
    written over dS and P' (5 n before). q, k, v and the logits' gradients come in the inputs'
    dtype (fp16)."""
    fn, inputs = kernel_problem(op, torch.float16, N=N)
    out = fn(*inputs, backend="triton", chunk_size=16)
    Z, n = inputs[0].shape[0] * inputs[0].shape[1], inputs[3].shape[-1]
    grad = torch.ones_like(out)  # made before: the harness allocates nothing inside
    with _AllocationRecorder() as recorder:
        out.backward(grad)
    long = [(dtype, shape) for dtype, shape in recorder.created if N in shape or Z * N in shape]
    fp32_floats = sum(torch.Size(shape).numel() for dtype, shape in long if dtype == torch.float32)
    assert fp32_floats == 3 * Z * N * n, long
    assert all(g.dtype == torch.float16 for g in (x.grad for x in inputs))
