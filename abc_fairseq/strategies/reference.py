"""Naive forms written straight from the equations, O(N^2) or worse: oracles for the tests.

Each builds the memory of every step t explicitly (Eq. 3-5 of the paper) and reads it with
Eq. 4, looping over positions; use them on small inputs only.
"""

from typing import List, Optional

import torch


def _read(q_t, key_memory, value_memory, scale, allowed=None):
    """q_t [B, H, d]; memories [B, H, n, d]; allowed [B, H, n] bool or None; empty -> 0."""
    scores = scale * torch.einsum("bhnd,bhd->bhn", key_memory, q_t)
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return torch.einsum("bhn,bhnd->bhd", probs, value_memory)


def reference_slot_causal(q, k, v, phi, scale, normalize=False, mask_empty=False):
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
        outs.append(_read(q[:, :, t], key_memory, value_memory, scale, allowed))
    return torch.stack(outs, dim=2)


def _real_positions(valid: Optional[torch.Tensor], b: int, N: int) -> List[int]:
    return [i for i in range(N) if valid is None or bool(valid[b, i])]


def reference_window_causal(q, k, v, valid, n, scale):
    """Row t reads the last n real tokens at or before t (Eq. 9); padding rows output 0."""
    B, H, N, d = q.shape
    out = torch.zeros_like(q)
    for b in range(B):
        real = _real_positions(valid, b, N)
        for t in real:
            window = [i for i in real if i <= t][-n:]
            K, V = k[b, :, window], v[b, :, window]  # [H, w, d]
            probs = torch.softmax(scale * torch.einsum("hwd,hd->hw", K, q[b, :, t]), dim=-1)
            out[b, :, t] = torch.einsum("hw,hwd->hd", probs, V)
    return out


def reference_local_window(q, k, v, valid, n, scale):
    """Encoder window: real token of rank r reads real ranks r - floor((n-1)/2) .. r + ceil((n-1)/2)."""
    B, H, N, d = q.shape
    left = (n - 1) // 2
    right = n - 1 - left
    out = torch.zeros_like(q)
    for b in range(B):
        real = _real_positions(valid, b, N)
        for rank, t in enumerate(real):
            window = real[max(0, rank - left): rank + right + 1]
            probs = torch.softmax(scale * torch.einsum("hwd,hd->hw", k[b, :, window], q[b, :, t]), dim=-1)
            out[b, :, t] = torch.einsum("hw,hwd->hd", probs, v[b, :, window])
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


def reference_compressive_causal(q, k, v, valid, n, c, scale):
    """Real token of rank r (from 0) reads the means of blocks max(0, b-n+1)..b-1 of c real tokens and
    the sum / c of its own block so far, b = r // c (Eq. 14 with a FIFO of n slots); padding rows 0."""
    B, H, N, d = q.shape
    out = torch.zeros_like(q)
    for b in range(B):
        real = _real_positions(valid, b, N)
        for rank, t in enumerate(real):
            block = rank // c
            slots = [real[j * c:(j + 1) * c] for j in range(max(0, block - n + 1), block)]
            slots.append(real[block * c: rank + 1])
            K = torch.stack([k[b, :, members].sum(dim=1) / c for members in slots], dim=1)  # [H, s, d]
            V = torch.stack([v[b, :, members].sum(dim=1) / c for members in slots], dim=1)
            probs = torch.softmax(scale * torch.einsum("hsd,hd->hs", K, q[b, :, t]), dim=-1)
            out[b, :, t] = torch.einsum("hs,hsd->hd", probs, V)
    return out


def reference_compressive_bidirectional(q, k, v, valid, n, scale):
    """Every query reads n slots: slot j holds the mean of real ranks r with floor(n r / L) = j."""
    B, H, M, d = q.shape
    out = torch.zeros_like(q)
    for b in range(B):
        real = _real_positions(valid, b, k.shape[2])
        groups = [[t for r, t in enumerate(real) if (n * r) // len(real) == j] for j in range(n)]
        groups = [g for g in groups if g]
        K = torch.stack([k[b, :, g].mean(dim=1) for g in groups], dim=1)
        V = torch.stack([v[b, :, g].mean(dim=1) for g in groups], dim=1)
        probs = torch.softmax(scale * torch.einsum("hsd,hmd->hms", K, q[b]), dim=-1)
        out[b] = torch.einsum("hms,hsd->hmd", probs, V)
    return out
