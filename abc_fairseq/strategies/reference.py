"""Naive forms written straight from the equations, O(N^2) or worse: the pieces of every strategy's
oracle (``Strategy.naive``), for the tests.

Each builds the memory of every step t explicitly (Eq. 3-5 of the paper) and reads it with
Eq. 4, looping over positions; use them on small inputs only. ``keep`` (bool [B, H, M, n], in the
slot order each strategy's docstring gives) and ``p``: attention dropout, the read probabilities
times keep / (1 - p).
"""

from typing import Callable, List, Optional

import torch

from ..ops import reference_abc, reference_causal_abc
from ..ops.gsa import reference_causal_gsa  # noqa: F401 (GSA's oracle, beside the others)


def _dropped(probs, keep, p):
    return probs if keep is None else probs * keep.to(probs.dtype) / (1.0 - p)


def _read(q_t, key_memory, value_memory, scale, allowed=None, keep=None, p=0.0):
    """q_t [B, H, d]; memories [B, H, n, d]; allowed, keep [B, H, n] bool or None; empty -> 0."""
    scores = scale * torch.einsum("bhnd,bhd->bhn", key_memory, q_t)
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    probs = _dropped(torch.softmax(scores, dim=-1).nan_to_num(0.0), keep, p)
    return torch.einsum("bhn,bhnd->bhd", probs, value_memory)


def _softmax_read(q, keys, values, scale, keep=None, p=0.0):
    """q [H, M, d] attends to keys, values [H, w, d]; keep [H, M, w] or None."""
    probs = torch.softmax(scale * torch.einsum("hwd,hmd->hmw", keys, q), dim=-1)
    return torch.einsum("hmw,hwd->hmd", _dropped(probs, keep, p), values)


def reference_slot_causal(q, k, v, phi, scale, normalize=False, mask_empty=False, keep=None, p=0.0):
    """K~_t = sum_{i<=t} phi_i (x) k_i (/ sum_{i<=t} phi_i per slot); q, k, v [B, H, N, d], phi [B, H, N, n]."""
    outs = []
    for t in range(q.shape[2]):
        weights = phi[:, :, : t + 1]  # [B, H, t+1, n]
        key_memory = torch.einsum("bhin,bhid->bhnd", weights, k[:, :, : t + 1])
        value_memory = torch.einsum("bhin,bhid->bhnd", weights, v[:, :, : t + 1])
        if normalize:
            z = weights.sum(dim=2)[..., None]
            key_memory = torch.where(z != 0, key_memory / z.where(z != 0, torch.ones_like(z)), 0.0)
            value_memory = torch.where(z != 0, value_memory / z.where(z != 0, torch.ones_like(z)), 0.0)
        allowed = (weights != 0).any(dim=2) if mask_empty else None
        outs.append(_read(q[:, :, t], key_memory, value_memory, scale, allowed,
                          None if keep is None else keep[:, :, t], p))
    return torch.stack(outs, dim=2)


def reference_slot_bidirectional(q, k, v, phi, scale, normalize=False, mask_empty=False, keep=None, p=0.0):
    """Every query reads K~ = sum_i phi_i (x) k_i (/ sum_i phi_i); q [B, H, M, d], phi [B, H, N, n]."""
    key_memory = torch.einsum("bhin,bhid->bhnd", phi, k)
    value_memory = torch.einsum("bhin,bhid->bhnd", phi, v)
    if normalize:
        z = phi.sum(dim=2)[..., None]
        key_memory = torch.where(z != 0, key_memory / z.where(z != 0, torch.ones_like(z)), 0.0)
        value_memory = torch.where(z != 0, value_memory / z.where(z != 0, torch.ones_like(z)), 0.0)
    allowed = (phi != 0).any(dim=2) if mask_empty else None
    outs = [_read(q[:, :, m], key_memory, value_memory, scale, allowed, None if keep is None else keep[:, :, m], p)
            for m in range(q.shape[2])]
    return torch.stack(outs, dim=2)


def _real_positions(valid: Optional[torch.Tensor], b: int, N: int) -> List[int]:
    return [i for i in range(N) if valid is None or bool(valid[b, i])]


def _keep_rows(keep, b, rows, slots):
    """keep[b] at query rows ``rows`` (an index or a slice) and memory slots ``slots``: [H, (M,) s]."""
    return None if keep is None else keep[b][:, rows][..., slots]


def reference_window_causal(q, k, v, valid, n, scale, keep=None, p=0.0):
    """Row t reads the last n real tokens at or before t (Eq. 9); padding rows output 0. The queue
    holds them in slots n - w .. n - 1 (oldest first) when w <= n tokens are in it."""
    B, H, N, d = q.shape
    out = torch.zeros_like(q)
    for b in range(B):
        real = _real_positions(valid, b, N)
        for t in real:
            window = [i for i in real if i <= t][-n:]
            mask = _keep_rows(keep, b, [t], list(range(n - len(window), n)))
            out[b, :, t] = _softmax_read(q[b, :, [t]], k[b, :, window], v[b, :, window], scale, mask, p)[:, 0]
    return out


def reference_window_cross(q, k, v, valid, n, scale, keep=None, p=0.0):
    """Cross attention: every query reads the last n real source tokens (the queue after the whole
    source, oldest in slot n - w); q [B, H, M, d], k, v [B, H, N, d]."""
    out = torch.zeros_like(q)
    for b in range(q.shape[0]):
        window = _real_positions(valid, b, k.shape[2])[-n:]
        if window:
            mask = _keep_rows(keep, b, slice(None), list(range(n - len(window), n)))
            out[b] = _softmax_read(q[b], k[b, :, window], v[b, :, window], scale, mask, p)
    return out


def reference_local_window(q, k, v, valid, n, scale, keep=None, p=0.0):
    """Encoder window: real token of rank r reads real ranks r - floor((n-1)/2) .. r + ceil((n-1)/2)
    (slot j: rank r - floor((n-1)/2) + j)."""
    B, H, N, d = q.shape
    left = (n - 1) // 2
    right = n - 1 - left
    out = torch.zeros_like(q)
    for b in range(B):
        real = _real_positions(valid, b, N)
        for rank, t in enumerate(real):
            first = max(0, rank - left)
            window = real[first: rank + right + 1]
            slots = [first - (rank - left) + j for j in range(len(window))]
            mask = _keep_rows(keep, b, [t], slots)
            out[b, :, t] = _softmax_read(q[b, :, [t]], k[b, :, window], v[b, :, window], scale, mask, p)[:, 0]
    return out


def reference_kernel_causal(fq, fk, values, normalized=True, denominator=None):
    """out_t = sum_{i<=t} (fq_t . fk_i) values_i (/ sum_{i<=t} fq_t . fk_i, through ``denominator``)."""
    outs = []
    for t in range(fq.shape[2]):
        weights = torch.einsum("bhd,bhid->bhi", fq[:, :, t], fk[:, :, : t + 1])
        out = torch.einsum("bhi,bhid->bhd", weights, values[:, :, : t + 1])
        if normalized:
            out = out / denominator(weights.sum(dim=-1, keepdim=True))
        outs.append(out)
    return torch.stack(outs, dim=2)


def reference_compressive_causal(q, k, v, valid, n, c, scale, keep=None, p=0.0):
    """Real token of rank r (from 0) reads the means of blocks max(0, b-n+1)..b-1 of c real tokens and
    the sum / c of its own block so far, b = r // c (Eq. 14 with a FIFO of n slots); padding rows 0.
    Slot n - 1 - (b - j) holds block j < b, slot n - 1 the row's own block."""
    B, H, N, d = q.shape
    out = torch.zeros_like(q)
    for b in range(B):
        real = _real_positions(valid, b, N)
        for rank, t in enumerate(real):
            block = rank // c
            earlier = range(max(0, block - n + 1), block)
            slots = [real[j * c:(j + 1) * c] for j in earlier] + [real[block * c: rank + 1]]
            K = torch.stack([k[b, :, members].sum(dim=1) / c for members in slots], dim=1)  # [H, s, d]
            V = torch.stack([v[b, :, members].sum(dim=1) / c for members in slots], dim=1)
            mask = _keep_rows(keep, b, [t], [n - 1 - (block - j) for j in earlier] + [n - 1])
            out[b, :, t] = _softmax_read(q[b, :, [t]], K, V, scale, mask, p)[:, 0]
    return out


def reference_compressive_bidirectional(q, k, v, valid, n, scale, keep=None, p=0.0):
    """Every query reads n slots: slot j holds the mean of real ranks r with floor(n r / L) = j."""
    B, H, M, d = q.shape
    out = torch.zeros_like(q)
    for b in range(B):
        real = _real_positions(valid, b, k.shape[2])
        groups = [[t for r, t in enumerate(real) if (n * r) // len(real) == j] for j in range(n)]
        slots = [j for j in range(n) if groups[j]]
        K = torch.stack([k[b, :, groups[j]].mean(dim=1) for j in slots], dim=1)
        V = torch.stack([v[b, :, groups[j]].mean(dim=1) for j in slots], dim=1)
        out[b] = _softmax_read(q[b], K, V, scale, _keep_rows(keep, b, slice(None), slots), p)
    return out


def reference_kernel_bidirectional(fq, fk, values, normalized=True, denominator=None):
    """out_m = sum_i (fq_m . fk_i) values_i (/ sum_i fq_m . fk_i, through ``denominator``); fq [B, H, M, D]."""
    weights = torch.einsum("bhmd,bhid->bhmi", fq, fk)
    out = torch.einsum("bhmi,bhid->bhmd", weights, values)
    return out / denominator(weights.sum(dim=-1, keepdim=True)) if normalized else out


def naive_abc(q, k, v, logits, valid, scale, causal: bool, keep=None, p=0.0):
    """ABC_MLP (Eq. 12) from its control logits log alpha [B, H, N, n]: padding gets alpha = 0 (in
    causal rows that have seen only padding that is 0 / 0, unspecified); keep [B, H, M, n]."""
    if not causal:
        return reference_abc(q, k, v, logits, None if valid is None else ~valid, scale=scale, dropout_p=p,
                             dropout_mask=keep)
    if valid is not None:
        logits = logits.masked_fill(~valid[:, None, :, None], float("-inf"))
    return reference_causal_abc(q, k, v, logits, scale=scale, dropout_p=p, dropout_mask=keep)


def phi_by_token(phi_of: Callable[[int, int, int], torch.Tensor], valid: Optional[torch.Tensor], shape,
                 memory_size: int, dtype) -> torch.Tensor:
    """phi [B, H, N, n], token by token: ``phi_of(b, t, rank)`` [H, n] for every real token t of
    sequence b (rank: its index among the real tokens of b), 0 at padding. shape: k's [B, H, N, d]."""
    B, H, N, _ = shape
    phi = torch.zeros(B, H, N, memory_size, dtype=dtype)
    for b in range(B):
        for rank, t in enumerate(_real_positions(valid, b, N)):
            phi[b, :, t] = phi_of(b, t, rank)
    return phi
