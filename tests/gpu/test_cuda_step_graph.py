"""The decoding step in place on CUDA (ABC, and GSA on the same kernel), replayed from a CUDA graph:
the same outputs as the PyTorch step, the state at fixed addresses (skipped where no GPU is visible; run with
``python -m pytest tests/gpu/test_cuda_step_graph.py``)."""

import importlib.util

import pytest
import torch
from gsa_helpers import problem
from ops_helpers import random_inputs

from abc_fairseq.ops import ABCState, causal_abc, causal_abc_step
from abc_fairseq.ops.gsa import GSAState, causal_gsa, causal_gsa_step

pytestmark = [pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
              pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs triton")]


def _clone(state):
    return ABCState(*(field.clone() for field in state))


@pytest.mark.parametrize("dtype,atol", [(torch.float32, 1e-4), (torch.float16, 3e-3)])
def test_the_in_place_step_replayed_from_a_graph_equals_the_torch_step(dtype, atol):
    q, k, v, l = (x.to("cuda", dtype) for x in random_inputs(4, 3, 12, 64, 16, logit_scale=4.0, seed=1))
    _, prefix = causal_abc(*(x[:, :, :4] for x in (q, k, v, l)), return_state=True, backend="torch")
    static = [x[:, :, 4:5].clone() for x in (q, k, v, l)]
    warm, state = _clone(prefix), _clone(prefix)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # compile and warm on a copy: the step changes its state
        for _ in range(2):
            causal_abc_step(*static, warm, backend="triton", in_place=True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, advanced = causal_abc_step(*static, state, backend="triton", in_place=True)
    assert advanced is state
    addresses = tuple(field.data_ptr() for field in state)
    expected_state = _clone(prefix)
    for t in range(4, 12):
        for buffer, x in zip(static, (q, k, v, l)):
            buffer.copy_(x[:, :, t:t + 1])
        graph.replay()
        expected, expected_state = causal_abc_step(*(x[:, :, t:t + 1] for x in (q, k, v, l)), expected_state,
                                                   backend="torch")
        torch.testing.assert_close(out, expected, rtol=0, atol=atol)
    assert tuple(field.data_ptr() for field in state) == addresses
    for got, want in zip(state, expected_state):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_gsa_step_on_the_kernel_in_a_graph_equals_the_torch_step():
    q, k, v, g = (x.to("cuda", torch.float32) for x in problem(3, 2, 10, 64, 16, regime="mixed", seed=2))
    _, prefix = causal_gsa(*(x[:, :, :3] for x in (q, k, v, g)), return_state=True, backend="torch")
    static = [x[:, :, 3:4].clone() for x in (q, k, v, g)]
    warm, state = (GSAState(*(f.clone() for f in prefix)) for _ in range(2))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        causal_gsa_step(*static, warm, backend="triton", in_place=True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, advanced = causal_gsa_step(*static, state, backend="triton", in_place=True)
    assert advanced is state
    expected_state = GSAState(*(f.clone() for f in prefix))
    for t in range(3, 10):
        for buffer, x in zip(static, (q, k, v, g)):
            buffer.copy_(x[:, :, t:t + 1])
        graph.replay()
        expected, expected_state = causal_gsa_step(*(x[:, :, t:t + 1] for x in (q, k, v, g)), expected_state,
                                                   backend="torch")
        torch.testing.assert_close(out, expected, rtol=0, atol=1e-4)
