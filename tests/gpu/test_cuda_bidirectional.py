"""Bidirectional ABC and the decoding step on a CUDA device, both backends, at full size.

Skipped where no GPU is visible (CI has none; the interpreter tests in
``test_triton_bidirectional.py`` check the kernels' maths there in fp32 and fp16). Here: the
Triton write/read kernels and the fused step against float64 CPU oracles in fp32, fp16 and bf16
(the interpreter mishandles bf16 ``tl.dot``), with fairseq's left padding and attention dropout.
"""

import importlib.util

import pytest
import torch
from ops_helpers import random_inputs

from abc_fairseq.ops import abc, causal_abc_step, reference_abc, reference_causal_abc

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
    pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs triton"),
]

CUDA = torch.device("cuda")
# (output, gradient) tolerances relative to the largest reference value.
TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (5e-3, 1e-2), torch.bfloat16: (3e-2, 5e-2)}


def _near(got, expected, tol, what):
    error = (got.double().cpu() - expected).abs().max().item()
    bound = tol * max(1.0, expected.abs().max().item())
    assert error <= bound, f"{what}: max error {error:.3g} > {bound:.3g}"


def _left_padding(B, N):
    padding = torch.zeros(B, N, dtype=torch.bool)
    for b in range(B):
        padding[b, :(b * 7) % (N // 2)] = True
    return padding


@pytest.mark.parametrize("backend", ["triton", "torch"])
@pytest.mark.parametrize("dtype", list(TOLERANCES))
@pytest.mark.parametrize("N,M,d,n", [(512, 512, 64, 64), (300, 41, 128, 128), (77, 90, 32, 8)])
def test_encoder_and_cross_attention_match_float64(N, M, d, n, dtype, backend):
    B, H = 4, 4
    _, k, v, logits = random_inputs(B, H, N, d, n, logit_scale=4.0, seed=N)
    q = random_inputs(B, H, M, d, n, seed=M)[0]
    padding = _left_padding(B, N)
    rounded = [x.to(dtype).double() for x in (q, k, v, logits)]
    weight = torch.randn(B, H, M, d, dtype=torch.float64)
    leaves = [x.requires_grad_() for x in rounded]
    ref = reference_abc(*leaves, key_padding_mask=padding)
    ref_grads = torch.autograd.grad((ref * weight).sum(), leaves)
    inputs = [x.to(CUDA, dtype).requires_grad_() for x in (q, k, v, logits)]
    out = abc(*inputs, key_padding_mask=padding.to(CUDA), backend=backend)
    assert out.dtype == dtype
    grads = torch.autograd.grad((out.double() * weight.to(CUDA)).sum(), inputs)
    out_tol, grad_tol = TOLERANCES[dtype]
    _near(out, ref.detach(), out_tol, "output")
    for name, grad, ref_grad in zip("qkvl", grads, ref_grads):
        _near(grad, ref_grad, grad_tol, f"gradient of {name}")
        if name != "q":
            assert torch.all(grad[padding.to(CUDA)[:, None].expand(-1, H, -1)] == 0), "padding got a gradient"


def test_kernel_dropout_with_a_fixed_mask_matches_float64():
    B, H, N, d, n, p = 2, 4, 256, 64, 64, 0.1
    q, k, v, logits = random_inputs(B, H, N, d, n, seed=5)
    keep = torch.rand(B, H, N, n, generator=torch.Generator().manual_seed(0)) >= p
    ref = reference_abc(q, k, v, logits, dropout_p=p, dropout_mask=keep)
    out = abc(*(x.to(CUDA, torch.float32) for x in (q, k, v, logits)), dropout_p=p,
              dropout_mask=keep.to(CUDA), backend="triton")
    _near(out, ref, 1e-4, "output")


@pytest.mark.parametrize("dtype", list(TOLERANCES))
def test_fused_step_fed_token_by_token_equals_the_parallel_reference(dtype):
    B, H, N, d, n = 16, 8, 64, 64, 32
    inputs = [x.to(dtype) for x in random_inputs(B, H, N, d, n, logit_scale=10.0, seed=6)]
    state, outs = None, []
    for t in range(N):
        out, state = causal_abc_step(*(x[:, :, t:t + 1].to(CUDA) for x in inputs), state, backend="triton")
        assert out.dtype == dtype and state.key_memory.dtype == torch.float32
        outs.append(out)
    ref = reference_causal_abc(*(x.double() for x in inputs))
    _near(torch.cat(outs, 2), ref, TOLERANCES[dtype][0], "decoded outputs")
