"""Bidirectional ABC and the fused decoding step on Triton, run by Triton's interpreter on CPU.

Against the float64 oracles written from the paper's equations: the memory write (softmax of the
phi logits over positions, padding never written), the read with and without attention dropout, and
the decoding step fed one token at a time. fp32 and fp16 inputs (the interpreter mishandles bf16
``tl.dot``; bf16 is checked by tests/gpu/test_cuda.py on a GPU).
"""

import importlib.util

import pytest
import torch
from ops_helpers import random_inputs

from abc_fairseq.ops import abc, abc_memory, abc_read, causal_abc_step, reference_abc, reference_causal_abc

pytestmark = pytest.mark.usefixtures("interpreted_kernels")

if importlib.util.find_spec("triton") is None:
    pytest.skip("triton is not installed", allow_module_level=True)

TOLERANCE = {torch.float32: 2e-5, torch.float16: 3e-3}


def left_padding(B, N, pads):
    padding = torch.zeros(B, N, dtype=torch.bool)
    for b, count in enumerate(pads):
        padding[b, :count] = True
    return padding


def run_abc(q, k, v, logits, padding, dropout_p=0.0, keep=None):
    return abc(q, k, v, logits, key_padding_mask=padding, dropout_p=dropout_p, dropout_mask=keep,
               backend="triton")


def grads_of(fn, inputs, grad_out):
    inputs = [x.detach().requires_grad_() for x in inputs]
    out = fn(*inputs)
    (out.double() * grad_out).sum().backward()
    return out.detach(), [x.grad for x in inputs]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("d, dv, n", [(32, 32, 8), (64, 48, 20)])
def test_values_and_gradients_match_the_reference_with_left_padding(dtype, d, dv, n):
    B, H, N, M = 2, 2, 37, 21
    _, k, v, logits = random_inputs(B, H, N, d, n, dv=dv, logit_scale=3.0, seed=1)
    q = random_inputs(B, H, M, d, n, seed=2)[0]
    padding = left_padding(B, N, [0, 6])
    inputs = [x.to(dtype) for x in (q, k, v, logits)]
    grad_out = torch.randn(B, H, M, dv, dtype=torch.float64)
    out, grads = grads_of(lambda *x: run_abc(*x, padding), inputs, grad_out)
    ref, ref_grads = grads_of(lambda *x: reference_abc(*x, key_padding_mask=padding),
                              [x.double() for x in inputs], grad_out)
    assert out.dtype == dtype
    tol = TOLERANCE[dtype]
    torch.testing.assert_close(out.double(), ref, atol=tol, rtol=tol)
    for grad, ref_grad in zip(grads, ref_grads):
        assert grad.dtype == dtype
        torch.testing.assert_close(grad.double(), ref_grad, atol=tol * 4, rtol=tol * 4)


def test_padding_writes_nothing_and_gets_no_gradient():
    B, H, N, d, n = 2, 2, 24, 32, 16
    q, k, v, logits = random_inputs(B, H, N, d, n, dtype=torch.float32, seed=3)
    padding = left_padding(B, N, [5, 0])
    base = run_abc(q, k, v, logits, padding)
    garbage = [x.clone() for x in (k, v, logits)]
    for x in garbage:
        x[0, :, :5] = float("nan")
    garbage[2][0, :, :5] = 1e4
    inputs = [q.clone(), *garbage]
    for x in inputs:
        x.requires_grad_()
    out = run_abc(*inputs, padding)
    assert torch.equal(out, base)
    out.sum().backward()
    for x in inputs[1:]:
        assert torch.all(x.grad[0, :, :5] == 0)
        assert torch.isfinite(x.grad).all()


def test_an_all_padding_sequence_reads_a_zero_memory():
    q, k, v, logits = random_inputs(2, 1, 16, 32, 8, dtype=torch.float32, seed=4)
    padding = left_padding(2, 16, [16, 0])
    key_memory, value_memory = abc_memory(k, v, logits, padding, backend="triton")
    assert torch.all(key_memory[0] == 0) and torch.all(value_memory[0] == 0)
    out = abc_read(q, key_memory, value_memory, backend="triton")
    assert torch.all(out[0] == 0) and torch.isfinite(out).all()


def test_logits_of_any_finite_magnitude_are_exact():
    q, k, v, logits = random_inputs(1, 2, 70, 32, 16, dtype=torch.float64, logit_scale=80.0, seed=5)
    out = run_abc(*(x.float() for x in (q, k, v, logits)), None)
    ref = reference_abc(q, k, v, logits)
    torch.testing.assert_close(out.double(), ref, atol=1e-4, rtol=1e-4)


def test_dropout_with_a_fixed_mask_matches_the_reference():
    B, H, N, M, d, n, p = 2, 2, 19, 23, 32, 16, 0.3
    _, k, v, logits = random_inputs(B, H, N, d, n, seed=6)
    q = random_inputs(B, H, M, d, n, seed=7)[0]
    padding = left_padding(B, N, [3, 0])
    keep = torch.rand(B, H, M, n, generator=torch.Generator().manual_seed(0)) > p
    grad_out = torch.randn(B, H, M, d, dtype=torch.float64)
    out, grads = grads_of(lambda *x: run_abc(*x, padding, p, keep),
                          [x.float() for x in (q, k, v, logits)], grad_out)
    ref, ref_grads = grads_of(lambda *x: reference_abc(*x, key_padding_mask=padding, dropout_p=p, dropout_mask=keep),
                              [q, k, v, logits], grad_out)
    torch.testing.assert_close(out.double(), ref, atol=2e-5, rtol=2e-5)
    for grad, ref_grad in zip(grads, ref_grads):
        torch.testing.assert_close(grad.double(), ref_grad, atol=1e-4, rtol=1e-4)


def test_inputs_are_read_through_their_strides():
    """fairseq's projections are [T, B, H * d]; viewed as [B, H, T, d] they are not contiguous."""
    T, B, H, d, n = 20, 2, 3, 32, 8
    gen = torch.Generator().manual_seed(8)
    q, k, v = (torch.randn(T, B, H * d, generator=gen).view(T, B, H, d).permute(1, 2, 0, 3) for _ in range(3))
    logits = torch.randn(T, B, H * n, generator=gen).view(T, B, H, n).permute(1, 2, 0, 3)
    assert not q.is_contiguous()
    strided = run_abc(q, k, v, logits, None)
    dense = run_abc(*(x.contiguous() for x in (q, k, v, logits)), None)
    torch.testing.assert_close(strided, dense, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_decoding_step_token_by_token_equals_the_parallel_reference(dtype):
    B, H, N, d, n = 3, 2, 12, 32, 8
    q, k, v, logits = random_inputs(B, H, N, d, n, logit_scale=30.0, seed=9)
    inputs = [x.to(dtype) for x in (q, k, v, logits)]
    state, torch_state, outs = None, None, []
    for t in range(N):
        token = [x[:, :, t:t + 1] for x in inputs]
        out, state = causal_abc_step(*token, state, backend="triton")
        torch_out, torch_state = causal_abc_step(*token, torch_state, backend="torch")
        assert out.dtype == dtype and state.key_memory.dtype == torch.float32
        torch.testing.assert_close(out, torch_out, atol=TOLERANCE[dtype], rtol=TOLERANCE[dtype])
        outs.append(out)
    ref = reference_causal_abc(*(x.double() for x in inputs))
    tol = TOLERANCE[dtype] * 2
    torch.testing.assert_close(torch.cat(outs, 2).double(), ref, atol=tol, rtol=tol)
    for field, torch_field in zip(state, torch_state):
        torch.testing.assert_close(field, torch_field, atol=1e-4, rtol=1e-5)


def test_sizes_the_kernels_do_not_take_fall_back_to_pytorch(caplog):
    q, k, v, logits = random_inputs(1, 1, 6, 8, 130, dtype=torch.float32, seed=10)
    with caplog.at_level("WARNING", logger="abc_fairseq.ops.backend"):
        out = abc(q, k, v, logits, backend="triton")
    torch.testing.assert_close(out, abc(q, k, v, logits, backend="torch"), rtol=0, atol=0)
    assert "memory size 130 > 128" in caplog.text
