"""Bidirectional ABC (encoder and cross attention) against the paper's equations; padding."""

import pytest
import torch
from ops_helpers import random_inputs

from abc_fairseq.ops import abc, abc_memory, reference_abc


@pytest.mark.parametrize("M,N,n", [(1, 1, 4), (5, 9, 3), (12, 7, 16)])
def test_matches_reference(M, N, n):
    q, _, _, _ = random_inputs(2, 3, M, 6, n, seed=M)
    _, k, v, l = random_inputs(2, 3, N, 6, n, seed=N + 10)
    torch.testing.assert_close(abc(q, k, v, l), reference_abc(q, k, v, l), rtol=0, atol=1e-12)
    out32 = abc(q.float(), k.float(), v.float(), l.float())
    torch.testing.assert_close(out32.double(), reference_abc(q, k, v, l), rtol=0, atol=1e-5)


def test_left_padding_changes_nothing_for_real_tokens():
    q, k, v, l = random_inputs(1, 2, 8, 4, 5, seed=3)
    pad = 3
    garbage = random_inputs(1, 2, pad, 4, 5, logit_scale=20.0, seed=4)
    k_pad, v_pad, l_pad = (torch.cat([g, x], dim=2) for g, x in zip(garbage[1:], (k, v, l)))
    mask = torch.zeros(1, 8 + pad, dtype=torch.bool)
    mask[:, :pad] = True
    padded = abc(q, k_pad, v_pad, l_pad, key_padding_mask=mask)
    torch.testing.assert_close(padded, abc(q, k, v, l), rtol=0, atol=1e-12)
    torch.testing.assert_close(padded, reference_abc(q, k_pad, v_pad, l_pad, mask), rtol=0, atol=1e-12)


def test_padding_is_never_written_to_memory():
    _, k, v, l = random_inputs(2, 2, 6, 4, 3)
    mask = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    K1, V1 = abc_memory(k, v, l, mask)
    k2, v2 = k.clone(), v.clone()
    k2[1, :, 4:] = 1e6
    v2[1, :, 4:] = -1e6
    K2, V2 = abc_memory(k2, v2, l, mask)
    assert torch.equal(K1, K2) and torch.equal(V1, V2)


def test_all_padding_gives_empty_memory():
    _, k, v, l = random_inputs(1, 1, 3, 4, 2)
    K, V = abc_memory(k, v, l, torch.ones(1, 3, dtype=torch.bool))
    assert torch.count_nonzero(K) == 0 and torch.count_nonzero(V) == 0


def test_gradients_match_reference():
    q, k, v, l = (x.requires_grad_() for x in random_inputs(2, 2, 5, 4, 3))
    mask = torch.tensor([[True, False, False, False, False], [False] * 5])
    g1 = torch.autograd.grad(abc(q, k, v, l, mask).sum(), (q, k, v, l))
    g2 = torch.autograd.grad(reference_abc(q, k, v, l, mask).sum(), (q, k, v, l))
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_bad_mask_raises():
    q, k, v, l = random_inputs(1, 1, 3, 4, 2)
    with pytest.raises(ValueError, match="key_padding_mask"):
        abc(q, k, v, l, key_padding_mask=torch.zeros(1, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="key_padding_mask must be a bool"):
        abc(q, k, v, l, key_padding_mask=torch.zeros(1, 3))


@pytest.mark.parametrize("masked", [False, True])
def test_inference_softmax_in_place_matches_and_spares_callers_logits(masked):
    q, k, v, l = random_inputs(2, 3, 9, 4, 5, logit_scale=30.0, seed=7)
    mask = torch.tensor([[False] * 9, [True] * 2 + [False] * 7]) if masked else None
    expected = reference_abc(q, k, v, l, mask)
    kept = l.clone()
    with torch.no_grad():
        torch.testing.assert_close(abc(q, k, v, l, key_padding_mask=mask), expected, rtol=0, atol=1e-12)
        assert torch.equal(l, kept)  # not handed over: never overwritten
        handed = l.clone()
        K, V = abc_memory(k, v, handed, mask, overwrite_logits=True)
    K_ref, V_ref = abc_memory(k, v, l, mask)
    torch.testing.assert_close(K, K_ref, rtol=0, atol=1e-12)
    torch.testing.assert_close(V, V_ref, rtol=0, atol=1e-12)
    if not masked:  # phi was computed in the handed-over storage: a distribution over positions
        torch.testing.assert_close(handed.sum(2), torch.ones_like(handed.sum(2)), rtol=0, atol=1e-12)
