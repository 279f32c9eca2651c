"""The ops and fairseq training on a CUDA device, against float64 CPU oracles.

Skipped where no GPU is visible (CI has none); run on a GPU machine with
``python -m pytest tests/gpu/test_cuda.py``. The CPU suite checks the maths; this file checks that the
same code gives the same numbers on CUDA (where the workspace defers to the caching allocator and
the GEMMs are cuBLAS's), in fp32 and with fp16 / bf16 inputs, and that fairseq trains, scores and
generates with an ABC model in mixed precision.
"""

import importlib.util
import logging
import os
import re
import subprocess
import sys

import pytest
import torch
from ops_helpers import random_inputs

from abc_fairseq.ops import abc, causal_abc, causal_abc_step, reference_abc, reference_causal_abc
from abc_fairseq.ops.gsa import causal_gsa

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CUDA = torch.device("cuda")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Causal tests run on both paths: the PyTorch chunked ops and the Triton kernels ("auto" on CUDA).
HAS_TRITON = importlib.util.find_spec("triton") is not None
BACKENDS = ["torch", "triton"] if HAS_TRITON else ["torch"]
needs_triton = pytest.mark.skipif(not HAS_TRITON, reason="needs triton")


def _on_cuda(tensors, dtype, requires_grad=False):
    return [x.to(CUDA, dtype).requires_grad_(requires_grad) for x in tensors]


def _reference_with_grads(fn, inputs, weight):
    """fn over float64 CPU copies of ``inputs``: (out, grads)."""
    leaves = [x.detach().cpu().double().requires_grad_() for x in inputs]
    out = fn(*leaves)
    return out.detach(), torch.autograd.grad((out * weight).sum(), leaves)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("N,chunk", [(1, 64), (29, 8), (200, 64), (1000, 64)])
def test_causal_float32_values_and_gradients_match_the_cpu_reference(N, chunk, backend):
    inputs = random_inputs(2, 3, N, 16, 12, dv=20, seed=N)
    weight = torch.randn(2, 3, N, 20, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    ref, ref_grads = _reference_with_grads(reference_causal_abc, inputs, weight)
    leaves = _on_cuda(inputs, torch.float32, requires_grad=True)
    out = causal_abc(*leaves, chunk_size=chunk, backend=backend)
    assert out.device.type == "cuda" and out.dtype == torch.float32
    grads = torch.autograd.grad((out * weight.to(CUDA, torch.float32)).sum(), leaves)
    # TF32 may be on for cuBLAS: hold CUDA to the same tolerance as the CPU float32 tests.
    torch.testing.assert_close(out.double().cpu(), ref, rtol=0, atol=1e-4)
    for name, g, r in zip("qkvl", grads, ref_grads):
        torch.testing.assert_close(g.double().cpu(), r, rtol=1e-3, atol=1e-3, msg=f"gradient of {name}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype,atol", [(torch.float16, 5e-3), (torch.bfloat16, 3e-2)])
def test_causal_half_precision_inputs_keep_fp32_internals(dtype, atol, backend):
    # Logits around +-30 overflow exp in fp16: only fp32 normalisers keep the result finite.
    half = [x.to(dtype) for x in random_inputs(2, 2, 300, 32, 16, logit_scale=30.0, seed=4)]
    out = causal_abc(*_on_cuda(half, dtype), backend=backend)
    assert out.dtype == dtype and torch.isfinite(out).all()
    ref = reference_causal_abc(*(x.double() for x in half))
    torch.testing.assert_close(out.double().cpu(), ref, rtol=0, atol=atol)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("logit_scale", [80.0])
def test_causal_large_logits_stay_exact(logit_scale, backend):
    inputs = random_inputs(1, 2, 150, 8, 6, logit_scale=logit_scale, seed=7)
    out = causal_abc(*_on_cuda(inputs, torch.float32), chunk_size=16, backend=backend)
    torch.testing.assert_close(out.double().cpu(), reference_causal_abc(*inputs), rtol=0, atol=1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_steps_on_cuda_match_the_parallel_form(backend):
    inputs = _on_cuda(random_inputs(2, 2, 70, 8, 5, seed=5), torch.float32)
    parallel = causal_abc(*inputs, chunk_size=16, backend=backend)
    state, outs = None, []
    for t in range(70):
        out, state = causal_abc_step(*(x[:, :, t:t + 1] for x in inputs), state)
        outs.append(out)
    assert all(s.device.type == "cuda" and s.dtype == torch.float32 for s in state)
    torch.testing.assert_close(torch.cat(outs, dim=2), parallel, rtol=0, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_future_leakage_on_cuda(backend):
    q, k, v, l = _on_cuda(random_inputs(1, 2, 130, 8, 6, seed=8), torch.float32)
    before = causal_abc(q, k, v, l, backend=backend)
    t = 70
    k2, v2, l2 = k.clone(), v.clone(), l.clone()
    k2[:, :, t + 1:] += 5.0
    v2[:, :, t + 1:] -= 5.0
    l2[:, :, t + 1:] += 50.0
    after = causal_abc(q, k2, v2, l2, backend=backend)
    assert torch.equal(before[:, :, :t + 1], after[:, :, :t + 1])


def test_bidirectional_with_padding_matches_the_cpu_reference():
    q, _, _, _ = random_inputs(2, 3, 9, 8, 5, seed=2)
    _, k, v, l = random_inputs(2, 3, 11, 8, 5, seed=3)
    mask = torch.zeros(2, 11, dtype=torch.bool)
    mask[1, :4] = True  # left padding, as fairseq's sources
    ref = reference_abc(q, k, v, l, mask)
    out = abc(*_on_cuda((q, k, v, l), torch.float32), key_padding_mask=mask.to(CUDA))
    torch.testing.assert_close(out.double().cpu(), ref, rtol=0, atol=1e-5)
    for dtype in (torch.float16, torch.bfloat16):
        half = abc(*_on_cuda((q, k, v, l), dtype), key_padding_mask=mask.to(CUDA))
        assert half.dtype == dtype
        torch.testing.assert_close(half.double().cpu(), ref, rtol=0, atol=3e-2)


# ---- the Triton kernels at full size ---------------------------------------------------------


def _assert_near(got, expected, tol, what):
    """Max error within ``tol`` of the largest reference value (at least 1)."""
    error = (got.double().cpu() - expected.cpu()).abs().max().item()
    bound = tol * max(1.0, expected.abs().max().item())
    assert error <= bound, f"{what}: max error {error:.3g} > {bound:.3g}"


def _triton_against_float64(inputs, dtype, tols, **kwargs):
    """The kernels on ``inputs`` in dtype against the PyTorch path in float64 on the same rounded
    values (itself held to the naive reference at 1e-9 by the CPU suite): values and gradients."""
    out_tol, grad_tol = tols
    rounded = [x.to(dtype).double() for x in inputs]
    weight = torch.randn(inputs[2].shape, dtype=torch.float64, device=CUDA,
                         generator=torch.Generator(CUDA).manual_seed(1))
    oracle = [x.to(CUDA).requires_grad_() for x in rounded]
    ref = causal_abc(*oracle, backend="torch", **kwargs)
    ref_grads = torch.autograd.grad((ref * weight).sum(), oracle)
    leaves = _on_cuda(inputs, dtype, requires_grad=True)
    out = causal_abc(*leaves, backend="triton", **kwargs)
    grads = torch.autograd.grad((out.double() * weight).sum(), leaves)
    assert out.dtype == dtype
    _assert_near(out, ref.detach(), out_tol, "output")
    for name, g, r in zip("qkvl", grads, ref_grads):
        _assert_near(g, r, grad_tol, f"gradient of {name}")


TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (5e-3, 1e-2),
              torch.bfloat16: (3e-2, 5e-2)}


@needs_triton
@pytest.mark.parametrize("dtype", list(TOLERANCES))
@pytest.mark.parametrize("N,d,n", [(1000, 64, 64), (777, 32, 8), (300, 128, 128), (64, 64, 64)])
def test_triton_matches_float64_at_full_size(N, d, n, dtype):
    inputs = random_inputs(2, 4, N, d, n, seed=N)
    _triton_against_float64(inputs, dtype, TOLERANCES[dtype])


@needs_triton
@pytest.mark.parametrize("dtype", list(TOLERANCES))
def test_triton_logits_around_80_and_steep_climbs(dtype):
    q, k, v, l = random_inputs(2, 4, 500, 64, 64, seed=3)
    big = l.sign() * 80.0 + l
    # A sawtooth: each slot climbs (or falls) by up to 147 over 50 rows, then drops back; the
    # climbs straddle the chunks, and the logits stay small enough for fp32 rounding.
    ramp = (torch.arange(500, dtype=torch.float64) % 50)[:, None]
    climbing = l + 3.0 * ramp * torch.linspace(-0.5, 1.0, 64, dtype=torch.float64)
    for logits in (big, climbing):
        _triton_against_float64((q, k, v, logits), dtype, TOLERANCES[dtype])


@needs_triton
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_triton_future_changes_nothing_in_the_past(dtype):
    q, k, v, l = _on_cuda(random_inputs(2, 4, 700, 64, 64, seed=8), dtype)
    before = causal_abc(q, k, v, l, backend="triton")
    t = 300
    k2, v2, l2 = k.clone(), v.clone(), l.clone()
    k2[:, :, t + 1:] += 5.0
    v2[:, :, t + 1:] -= 5.0
    l2[:, :, t + 1:] += 90.0
    after = causal_abc(q, k2, v2, l2, backend="triton")
    assert torch.equal(before[:, :, :t + 1], after[:, :, :t + 1])


@needs_triton
def test_triton_state_passing_equals_one_call():
    q, k, v, l = _on_cuda(random_inputs(2, 4, 700, 64, 64, logit_scale=20.0, seed=9), torch.float32)
    whole, state = causal_abc(q, k, v, l, backend="triton", return_state=True)
    cut = 333
    head, mid = causal_abc(*(x[:, :, :cut] for x in (q, k, v, l)), backend="triton", return_state=True)
    tail, end = causal_abc(*(x[:, :, cut:] for x in (q, k, v, l)), backend="triton",
                           initial_state=mid, return_state=True)
    # A cut inside a chunk sums the same fp32 terms in another order: an H100 (Triton 3.6) gave
    # 2e-5 at outputs of order 1 (logit scale 20 amplifies rounding); 1e-4 is still 10x under tf32's.
    torch.testing.assert_close(torch.cat([head, tail], dim=2), whole, rtol=0, atol=1e-4)
    for got, expected in zip(end, state):
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    out, _ = causal_abc_step(*(x[:, :, cut:cut + 1] for x in (q, k, v, l)), mid)
    torch.testing.assert_close(out, whole[:, :, cut:cut + 1], rtol=0, atol=1e-4)


@needs_triton
@pytest.mark.parametrize("dtype", list(TOLERANCES))
@pytest.mark.parametrize("N,d,n,temperature", [(1000, 64, 64, 8.0), (777, 128, 32, 8.0), (500, 64, 64, 1.0)])
def test_triton_gsa_matches_float64(N, d, n, temperature, dtype):
    """causal_gsa on ABC's kernels (fp32 log gates, as the strategy makes them) against its PyTorch
    path in float64 on the same rounded q, k, v; temperature 1 gives gates near 0 (steep chunks)."""
    q, k, v, logits = random_inputs(2, 4, N, d, n, logit_scale=4.0, seed=N)
    gates = (torch.nn.functional.logsigmoid(logits) / temperature).float()
    weight = torch.randn(2, 4, N, d, dtype=torch.float64, device=CUDA, generator=torch.Generator(CUDA).manual_seed(1))
    oracle = [x.to(dtype).double().to(CUDA).requires_grad_() for x in (q, k, v)] + [gates.double().to(CUDA)]
    oracle[3].requires_grad_()
    ref = causal_gsa(*oracle, backend="torch")
    ref_grads = torch.autograd.grad((ref * weight).sum(), oracle)
    leaves = _on_cuda((q, k, v), dtype, requires_grad=True) + [gates.to(CUDA).requires_grad_()]
    out = causal_gsa(*leaves, backend="triton")
    grads = torch.autograd.grad((out.double() * weight).sum(), leaves)
    out_tol, grad_tol = TOLERANCES[dtype]
    _assert_near(out, ref.detach(), out_tol, "output")
    for name, g, r in zip("qkvg", grads, ref_grads):
        _assert_near(g, r, grad_tol, f"gradient of {name}")


@needs_triton
@pytest.mark.parametrize("dtype", list(TOLERANCES))
def test_triton_dropout_with_a_fixed_mask(dtype):
    inputs = random_inputs(1, 2, 150, 64, 32, logit_scale=5.0, seed=10)
    p = 0.25
    keep = torch.rand(1, 2, 150, 32, generator=torch.Generator().manual_seed(11)) >= p
    rounded = [x.to(dtype).double().requires_grad_() for x in inputs]
    weight = torch.randn(1, 2, 150, 64, dtype=torch.float64)
    ref = reference_causal_abc(*rounded, dropout_p=p, dropout_mask=keep)
    ref_grads = torch.autograd.grad((ref * weight).sum(), rounded)
    leaves = _on_cuda(inputs, dtype, requires_grad=True)
    out = causal_abc(*leaves, backend="triton", dropout_p=p, dropout_mask=keep.to(CUDA))
    grads = torch.autograd.grad((out.double() * weight.to(CUDA)).sum(), leaves)
    out_tol, grad_tol = TOLERANCES[dtype]
    _assert_near(out, ref.detach(), out_tol, "output")
    for name, g, r in zip("qkvl", grads, ref_grads):
        _assert_near(g, r, grad_tol, f"gradient of {name}")


@needs_triton
def test_auto_takes_the_kernels_on_cuda_and_falls_back_for_other_sizes(caplog):
    from abc_fairseq.ops.backend import unsupported, use_kernels

    q, k, v, l = _on_cuda(random_inputs(1, 2, 50, 64, 64, seed=12), torch.bfloat16)
    assert use_kernels("causal_abc", "auto", q.device, unsupported(q.dtype, 64, 50, head_dim=64, memory_size=64))
    wide = torch.randn(1, 2, 50, 160, device=CUDA)
    with caplog.at_level(logging.WARNING):
        assert not use_kernels("causal_abc", "auto", q.device, unsupported(q.dtype, 64, 50, memory_size=160))
    assert any("memory size 160" in r.getMessage() for r in caplog.records)
    torch.testing.assert_close(causal_abc(q, k, v, wide), causal_abc(q, k, v, wide, backend="torch"),
                               rtol=0, atol=0)


# ---- fairseq on the GPU ---------------------------------------------------------------------

LM_ARGS = ["--task", "language_modeling", "--arch", "abc_lm_small", "--decoder-layers", "2",
           "--decoder-embed-dim", "128", "--decoder-ffn-embed-dim", "256",
           "--decoder-attention-heads", "4", "--decoder-self-memory", "16", "--tokens-per-sample", "128",
           "--optimizer", "adam", "--lr", "1e-3", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "20",
           "--max-tokens", "4096", "--max-update", "60", "--no-epoch-checkpoints", "--log-format", "simple",
           "--log-interval", "10", "--num-workers", "0", "--seed", "1", "--user-dir", "abc_fairseq"]


def _fairseq(tool, *args):
    proc = subprocess.run([sys.executable, "-m", f"fairseq_cli.{tool}", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONWARNINGS="ignore"))
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"fairseq-{tool} failed:\n{log[-4000:]}"
    return log


# fairseq 0.12's --bf16 implies --tpu (it asks torch_xla for the device), so mixed precision on a
# GPU means fp16 with its loss scaler; bf16 inputs are covered by the op tests above.
@pytest.mark.parametrize("precision", ["--fp16", "--memory-efficient-fp16"])
def test_abc_lm_trains_and_scores_in_mixed_precision(tmp_path, precision, default_corpus):
    data = default_corpus
    train_log = _fairseq("train", data, *LM_ARGS, precision, "--save-dir", tmp_path)
    losses = [float(x) for x in re.findall(r"\bloss=([\d.]+)", train_log)]
    assert len(losses) >= 2 and losses[-1] < losses[0], train_log[-3000:]
    eval_log = _fairseq("eval_lm", data, "--path", tmp_path / "checkpoint_last.pt", "--user-dir",
                        "abc_fairseq", "--max-tokens", "4096", "--tokens-per-sample", "128",
                        "--context-window", "64", "--fp16")
    perplexity = float(re.search(r"Perplexity: ([\d.]+)", eval_log).group(1))
    # Trained for 60 updates: well below the vocabulary size, and finite.
    assert 1.0 < perplexity < 2000.0, eval_log[-2000:]
