"""Attention dropout over the memory slots (``dropout_p``, ``dropout_mask``) in every form of the
ops: out_t = V~_t^T (softmax(scale K~_t q_t) * M_t / (1 - p)), against the naive reference with the
same mask, values and gradients (including the chunked op's hand-written backward)."""

import pytest
import torch
from ops_helpers import random_inputs

from abc_fairseq.ops import abc, abc_memory, abc_read, causal_abc, reference_abc, reference_causal_abc
from abc_fairseq.ops.utils import dropout_keep_mask

pytestmark = pytest.mark.usefixtures("one_thread")

P = 0.3


def _mask(B, H, M, n, seed=0, p=P):
    return torch.rand(B, H, M, n, generator=torch.Generator().manual_seed(seed)) >= p


def _values_and_grads(fn, inputs, grad_out=None):
    inputs = [t.detach().clone().requires_grad_() for t in inputs]
    out = fn(*inputs)
    if grad_out is None:
        grad_out = torch.randn_like(out, generator=torch.Generator().manual_seed(9))
    return out, torch.autograd.grad(out, inputs, grad_out)


def _assert_same(fn_a, fn_b, inputs, tol=1e-12):
    out_a, grads_a = _values_and_grads(fn_a, inputs)
    out_b, grads_b = _values_and_grads(fn_b, inputs)
    torch.testing.assert_close(out_a, out_b, rtol=0, atol=tol)
    for name, a, b in zip("q k v logits".split(), grads_a, grads_b):
        torch.testing.assert_close(a, b, rtol=0, atol=tol, msg=lambda m: f"d{name}: {m}")


def test_dropout_zero_changes_nothing_and_draws_nothing():
    q, k, v, logits = random_inputs(2, 2, 13, 4, 3)
    state = torch.get_rng_state()
    assert torch.equal(causal_abc(q, k, v, logits, dropout_p=0.0), causal_abc(q, k, v, logits))
    assert torch.equal(abc(q, k, v, logits, dropout_p=0.0), abc(q, k, v, logits))
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.parametrize("chunk, block, logit_shift", [(4, None, 0.0), (4, 8, 0.0), (16, None, 0.0),
                                                       (4, None, 200.0)],
                         ids=["chunk4", "blocks", "one-chunk", "exact-path"])
def test_causal_with_a_fixed_mask_equals_the_reference(chunk, block, logit_shift):
    """N = 13 is not a multiple of the chunk (padded rows); a rise of 200 in the logits sends
    chunks through the exact (flagged) path of the op, which has its own dropout terms."""
    q, k, v, logits = random_inputs(2, 2, 13, 4, 3, logit_scale=3.0)
    logits[:, :, 6:] += logit_shift
    mask = _mask(2, 2, 13, 3)
    _assert_same(lambda *x: causal_abc(*x, chunk_size=chunk, block_size=block, dropout_p=P,
                                       dropout_mask=mask),
                 lambda *x: reference_causal_abc(*x, dropout_p=P, dropout_mask=mask),
                 (q, k, v, logits), tol=1e-11)


def test_causal_dropout_is_per_row_and_slot():
    """Dropping slot j of row t changes row t only; the prefix and later rows read the memory,
    which dropout never touches."""
    q, k, v, logits = random_inputs(1, 2, 12, 4, 3)
    keep = torch.ones(1, 2, 12, 3, dtype=torch.bool)
    dropped = keep.clone()
    dropped[0, 1, 7, 2] = False
    a = causal_abc(q, k, v, logits, chunk_size=4, dropout_p=P, dropout_mask=keep)
    b = causal_abc(q, k, v, logits, chunk_size=4, dropout_p=P, dropout_mask=dropped)
    changed = (a - b).abs().amax(-1) > 0
    assert changed[0, 1, 7] and changed.sum() == 1
    torch.testing.assert_close(a, causal_abc(q, k, v, logits, chunk_size=4) / (1 - P), rtol=0, atol=1e-12)


def test_causal_dropout_keeps_causality_and_initial_state():
    q, k, v, logits = random_inputs(2, 2, 16, 4, 3)
    mask = _mask(2, 2, 16, 3)
    out = causal_abc(q, k, v, logits, chunk_size=4, dropout_p=P, dropout_mask=mask)
    future = [t.clone() for t in (q, k, v, logits)]
    for t in future:
        t[:, :, 10:] = torch.randn_like(t[:, :, 10:])
    changed = causal_abc(*future, chunk_size=4, dropout_p=P, dropout_mask=mask)
    assert torch.equal(out[:, :, :10], changed[:, :, :10])
    # Prefix then continuation, each with its part of the mask, is the whole sequence.
    head, state = causal_abc(*(t[:, :, :6] for t in (q, k, v, logits)), chunk_size=4, return_state=True,
                             dropout_p=P, dropout_mask=mask[:, :, :6])
    tail = causal_abc(*(t[:, :, 6:] for t in (q, k, v, logits)), chunk_size=4, initial_state=state,
                      dropout_p=P, dropout_mask=mask[:, :, 6:])
    torch.testing.assert_close(torch.cat([head, tail], 2), out, rtol=0, atol=1e-12)


def test_bidirectional_with_a_fixed_mask_equals_the_reference_and_ignores_padding():
    q = random_inputs(2, 2, 5, 4, 3, seed=1)[0]
    _, k, v, logits = random_inputs(2, 2, 7, 4, 3)
    padding = torch.zeros(2, 7, dtype=torch.bool)
    padding[1, :3] = True
    mask = _mask(2, 2, 5, 3)
    _assert_same(lambda *x: abc(*x, key_padding_mask=padding, dropout_p=P, dropout_mask=mask),
                 lambda *x: reference_abc(*x, key_padding_mask=padding, dropout_p=P, dropout_mask=mask),
                 (q, k, v, logits))
    out = abc(q, k, v, logits, key_padding_mask=padding, dropout_p=P, dropout_mask=mask)
    noisy = [t.clone() for t in (k, v, logits)]
    for t in noisy:
        t[1, :, :3] = 100 * torch.randn_like(t[1, :, :3])
    torch.testing.assert_close(abc(q, *noisy, key_padding_mask=padding, dropout_p=P, dropout_mask=mask),
                               out, rtol=0, atol=1e-12)
    memory = abc_memory(k, v, logits, padding)
    torch.testing.assert_close(abc_read(q, *memory, dropout_p=P, dropout_mask=mask), out, rtol=0, atol=0)


def test_gradcheck_with_a_fixed_mask():
    q, k, v, logits = (t.requires_grad_() for t in random_inputs(1, 2, 6, 2, 3, seed=4))
    mask = _mask(1, 2, 6, 3, seed=5, p=0.5)
    assert torch.autograd.gradcheck(
        lambda *x: causal_abc(*x, chunk_size=2, dropout_p=0.5, dropout_mask=mask), (q, k, v, logits))
    bidir_mask = _mask(1, 2, 6, 3, seed=6, p=0.5)
    assert torch.autograd.gradcheck(
        lambda *x: abc(*x, dropout_p=0.5, dropout_mask=bidir_mask), (q, k, v, logits))


def test_drawn_masks_use_torchs_rng_and_average_to_the_undropped_output():
    """Without a mask one is drawn (Bernoulli(1 - p), torch's RNG): reproducible under a seed,
    equal to the reference with the same draw, and unbiased: the mean over 4000 masks (a batch of
    copies of one sequence, fixed seed: deterministic) is within 5 standard errors of the output
    without dropout, and far from the mean without the 1 / (1 - p) rescaling."""
    q, k, v, logits = random_inputs(1, 1, 8, 4, 4)
    copies = [t.expand(4000, *t.shape[1:]) for t in (q, k, v, logits)]
    torch.manual_seed(0)
    samples = causal_abc(*copies, chunk_size=4, dropout_p=0.5)
    torch.manual_seed(0)
    mask = dropout_keep_mask(0.5, None, (4000, 1, 8, 4), q.device)
    torch.testing.assert_close(samples, reference_causal_abc(*copies, dropout_p=0.5, dropout_mask=mask),
                               rtol=0, atol=1e-12)
    torch.manual_seed(0)
    assert torch.equal(samples, causal_abc(*copies, chunk_size=4, dropout_p=0.5))
    expected = causal_abc(q, k, v, logits)[0]
    error = (samples.mean(0) - expected).abs()
    stderr = samples.std(0) / 4000 ** 0.5
    assert (error <= 5 * stderr + 1e-12).all(), (error / stderr).max()
    assert (expected.abs() * 0.5 > 5 * stderr).any()  # a missing rescaling would fail above
    torch.manual_seed(1)
    bidir = abc(*copies, dropout_p=0.5)
    assert ((bidir.mean(0) - abc(q, k, v, logits)[0]).abs() <= 5 * bidir.std(0) / 4000 ** 0.5 + 1e-12).all()


@pytest.mark.parametrize("kwargs, match", [
    (dict(dropout_p=1.0), "dropout_p"), (dict(dropout_p=-0.1), "dropout_p"),
    (dict(dropout_p=float("nan")), "dropout_p"),
    (dict(dropout_p=0.0, dropout_mask=torch.ones(1, 1, 4, 2, dtype=torch.bool)), "dropout_mask"),
    (dict(dropout_p=0.2, dropout_mask=torch.ones(1, 1, 4, 3, dtype=torch.bool)), "dropout_mask"),
    (dict(dropout_p=0.2, dropout_mask=torch.ones(1, 1, 4, 2)), "dropout_mask"),
])
def test_bad_dropout_arguments_are_named(kwargs, match):
    q, k, v, logits = random_inputs(1, 1, 4, 2, 2)
    for op in (causal_abc, abc, reference_causal_abc, reference_abc):
        with pytest.raises(ValueError, match=match):
            op(q, k, v, logits, **kwargs)
