"""Building blocks of chunked causal ABC: one block of chunks, forward and backward.

Notation (per head; Z = B * H sequences are batched, a block of T = nc * C rows is cut in nc chunks of C):
    l_i  [n]  phi logits of row i          g_t = log sum_{i<=t} exp(l_i)   (prefix normaliser, per slot)
    W_ti [n]  = exp(l_i - g_t) for i <= t  (the prefix-normalised control vector phi written by i, read at t)
    S_t  [n]  = sum_{i<=t} W_ti * (q_t . k_i)          raw slot scores, K~_t q_t
    P_t  [n]  = softmax(scale * S_t)
    O_t  [d]  = sum_j P_t[j] sum_{i<=t} W_ti[j] v_i    V~_t^T P_t

Every exponent is taken against a normaliser of the past, never of the future: chunk c is anchored
at a_c = g at its first row. Then
    F_t = exp(a_c - g_t) <= 1                        (row factor, t in chunk c)
    E_i = exp(l_i - a_c)                             (column factor, i in chunk c)
    H_i = exp(l_i - a_{c+1}) <= 1                    (what row i leaves in the memory after chunk c)
and W_ti = E_i F_t inside a chunk, so intra-chunk sums are matmuls with the causal C x C mask.
E_i overflows only when logits rise by more than ``SAFE_EXPONENT`` over the normaliser inside one
chunk; such chunks are flagged and their intra-chunk terms recomputed exactly from W (C x C x n),
so the op is exact for logits of any magnitude. Underflow only drops weights below exp(-87) of a
distribution summing to one.

Memories carried across chunks and blocks are stored divided by exp(anchor), so they stay bounded.
"""

from typing import List, NamedTuple, Optional

import torch

# Largest exponent taken by the fast (matmul) path: exp(60) * C * |q.k| stays far from fp32's max.
SAFE_EXPONENT = 60.0


class BlockGeometry(NamedTuple):
    """Normalisers and decay factors of one block, all [Z, nc, C, n] unless stated."""

    g: torch.Tensor  # g_t, prefix log-normaliser per row
    anchors: torch.Tensor  # [Z, nc + 1, n]: a_0..a_{nc-1}, then g at the block's last row
    row_decay: torch.Tensor  # F_t = exp(a_c - g_t)
    col_growth: torch.Tensor  # E_i = exp(min(l_i - a_c, SAFE_EXPONENT))
    leave: torch.Tensor  # H_i = exp(l_i - a_{c+1})
    flagged: List[int]  # chunks whose E overflowed the fast path: recomputed exactly
    logits: torch.Tensor  # l_i


def block_geometry(logits: torch.Tensor, g_before: torch.Tensor, chunk: int) -> BlockGeometry:
    """logits: [Z, T, n] with T a multiple of ``chunk``; g_before: [Z, n], the normaliser of
    everything before the block (-inf at the start of a sequence)."""
    Z, T, n = logits.shape
    nc = T // chunk
    g = torch.logaddexp(g_before.unsqueeze(1), torch.logcumsumexp(logits, dim=1))
    g = g.view(Z, nc, chunk, n)
    l = logits.view(Z, nc, chunk, n)
    anchors = torch.cat([g[:, :, 0], g[:, -1, -1:]], dim=1)  # [Z, nc + 1, n]
    row_decay = torch.exp(anchors[:, :-1, None] - g)
    growth_exponent = l - anchors[:, :-1, None]
    chunk_max = growth_exponent.amax(dim=(0, 2, 3))
    flagged = torch.nonzero(chunk_max > SAFE_EXPONENT).flatten().tolist()
    col_growth = torch.exp(growth_exponent.clamp(max=SAFE_EXPONENT))
    leave = torch.exp(l - anchors[:, 1:, None])
    return BlockGeometry(g, anchors, row_decay, col_growth, leave, flagged, l)


def causal_mask(chunk: int, device) -> torch.Tensor:
    """[C, C] bool, True where column i <= row t."""
    return torch.ones(chunk, chunk, dtype=torch.bool, device=device).tril()


class IntraChunk:
    """Sums over pairs i <= t inside one chunk, weighted by W_ti = exp(l_i - g_t).

    Fast path: W_ti = E_i F_t with a causal mask (matmuls). Flagged chunks: W built exactly.
    Shapes: A (pair scores such as q_t . k_i) [Z, nc, C, C] indexed [t, i]; R (row weights per slot)
    [Z, nc, C, n] indexed [t, j].
    """

    def __init__(self, geo: BlockGeometry):
        self.geo = geo
        self.mask = causal_mask(geo.g.shape[2], geo.g.device)

    def _exact_weights(self, c: int) -> torch.Tensor:
        """W for chunk c: [Z, C, C, n] indexed [t, i, j], zero where i > t."""
        l, g = self.geo.logits[:, c], self.geo.g[:, c]
        exponent = l[:, None, :, :] - g[:, :, None, :]
        exponent = exponent.masked_fill(~self.mask[None, :, :, None], float("-inf"))
        return torch.exp(exponent)

    def scores(self, A: torch.Tensor) -> torch.Tensor:
        """sum_{i<=t} W_ti[j] A[t, i] -> [Z, nc, C, n]. ``A`` is masked in place."""
        A = A.masked_fill_(~self.mask, 0.0)
        out = self.geo.row_decay * torch.matmul(A, self.geo.col_growth)
        for c in self.geo.flagged:
            out[:, c] = torch.einsum("ztij,zti->ztj", self._exact_weights(c), A[:, c])
        return out

    def mixing(self, R: torch.Tensor) -> torch.Tensor:
        """sum_j R[t, j] W_ti[j] -> [Z, nc, C, C] indexed [t, i] (zero above the diagonal)."""
        out = torch.matmul(R * self.geo.row_decay, self.geo.col_growth.transpose(-1, -2))
        out.masked_fill_(~self.mask, 0.0)
        for c in self.geo.flagged:
            out[:, c] = torch.einsum("ztij,ztj->zti", self._exact_weights(c), R[:, c])
        return out

    def column_scores(self, terms) -> torch.Tensor:
        """sum_{t>=i} W_ti[j] * sum_k R_k[t, j] A_k[t, i] -> [Z, nc, C, n] indexed [i, j].

        ``terms`` is a list of (R_k, A_k); A_k = None stands for all ones. A_k must be masked.
        """
        acc = None
        for R, A in terms:
            RF = R * self.geo.row_decay
            if A is None:  # sum over t >= i: a reversed cumulative sum inside the chunk
                part = RF.flip(2).cumsum(2).flip(2)
            else:
                part = torch.matmul(A.transpose(-1, -2), RF)
            acc = part if acc is None else acc + part
        out = self.geo.col_growth * acc
        for c in self.geo.flagged:
            W = self._exact_weights(c)
            exact = None
            for R, A in terms:
                if A is None:
                    part = torch.einsum("ztij,ztj->zij", W, R[:, c])
                else:
                    part = torch.einsum("ztij,ztj,zti->zij", W, R[:, c], A[:, c])
                exact = part if exact is None else exact + part
            out[:, c] = exact
        return out


def scan_forward(
    local: torch.Tensor, anchors: torch.Tensor, carry: torch.Tensor, g_before: torch.Tensor
):
    """Memories entering each chunk.

    local: [Z, nc, n, D], chunk c's own writes normalised at a_{c+1}; anchors: [Z, nc + 1, n];
    carry: [Z, n, D] normalised at g_before [Z, n]. Returns (states [Z, nc, n, D] normalised at a_c,
    final state [Z, n, D] normalised at anchors[:, -1]).
    """
    nc = local.shape[1]
    states = torch.empty_like(local)
    current = torch.exp(g_before - anchors[:, 0]).unsqueeze(-1) * carry
    decay = torch.exp(anchors[:, :-1] - anchors[:, 1:]).unsqueeze(-1)  # [Z, nc, n, 1]
    for c in range(nc):
        states[:, c] = current
        current = decay[:, c] * current + local[:, c]
    return states, current


def scan_backward(local: torch.Tensor, anchors: torch.Tensor, carry: torch.Tensor,
                  carry_anchor: torch.Tensor):
    """Reverse memories: what rows after chunk c send back to it.

    local: [Z, nc, n, D], chunk c's own rows normalised at a_c; carry: [Z, n, D], rows after the
    block normalised at carry_anchor [Z, n] (>= the block's last normaliser). Returns (states
    [Z, nc, n, D] where states[:, c] holds rows after chunk c normalised at a_{c+1}, and the carry
    for the previous block, normalised at a_0).
    """
    nc = local.shape[1]
    states = torch.empty_like(local)
    current = torch.exp(anchors[:, -1] - carry_anchor).unsqueeze(-1) * carry
    decay = torch.exp(anchors[:, :-1] - anchors[:, 1:]).unsqueeze(-1)
    for c in range(nc - 1, -1, -1):
        states[:, c] = current
        current = local[:, c] + decay[:, c] * current
    return states, current


class BlockForward(NamedTuple):
    out: torch.Tensor  # [Z, nc, C, dv]
    geo: BlockGeometry
    intra: IntraChunk
    key_states: torch.Tensor  # [Z, nc, n, d]
    value_states: torch.Tensor  # [Z, nc, n, dv]
    raw_scores: torch.Tensor  # S  [Z, nc, C, n]
    probs: torch.Tensor  # P  [Z, nc, C, n]
    qk: torch.Tensor  # masked q_t . k_i  [Z, nc, C, C]
    value_mix: torch.Tensor  # sum_j P[t, j] W_ti[j]  [Z, nc, C, C]
    carry_kv: torch.Tensor  # [Z, n, d + dv] after the block, normalised at g_last
    g_last: torch.Tensor  # [Z, n]


def block_forward(q, k, v, logits, carry_kv, g_before, scale: float, chunk: int) -> BlockForward:
    """Causal ABC over one block.

    q, k: [Z, T, d]; v: [Z, T, dv]; logits: [Z, T, n]; carry_kv: [Z, n, d + dv] memory of the
    prefix (keys then values) normalised at g_before [Z, n]. T must be a multiple of ``chunk``.
    """
    Z, T, d = q.shape
    nc = T // chunk
    geo = block_geometry(logits, g_before, chunk)
    intra = IntraChunk(geo)
    qc, kc = q.view(Z, nc, chunk, d), k.view(Z, nc, chunk, d)
    vc = v.view(Z, nc, chunk, v.shape[-1])

    kv = torch.cat([kc, vc], dim=-1)
    local = torch.matmul(geo.leave.transpose(-1, -2), kv)  # [Z, nc, n, d + dv]
    states, carry_out = scan_forward(local, geo.anchors, carry_kv, g_before)
    key_states, value_states = states[..., :d], states[..., d:]

    qk = torch.matmul(qc, kc.transpose(-1, -2))
    raw_scores = geo.row_decay * torch.matmul(qc, key_states.transpose(-1, -2))
    raw_scores = raw_scores + intra.scores(qk)
    probs = torch.softmax(scale * raw_scores, dim=-1)

    value_mix = intra.mixing(probs)
    out = torch.matmul(probs * geo.row_decay, value_states) + torch.matmul(value_mix, vc)
    return BlockForward(out, geo, intra, key_states, value_states, raw_scores, probs, qk,
                        value_mix, carry_out, geo.anchors[:, -1])


class ReverseCarry(NamedTuple):
    """What the rows after a block send back: sums of exp(anchor - g_t) * (row terms).

    keys: [Z, n, d] (dS_t q_t), values: [Z, n, dv] (P_t dO_t), normaliser: [Z, n] (dg_t),
    all normalised at ``anchor`` [Z, n].
    """

    keys: torch.Tensor
    values: torch.Tensor
    normaliser: torch.Tensor
    anchor: torch.Tensor


def block_backward(q, k, v, logits, carry_kv, g_before, grad_out, reverse: Optional[ReverseCarry],
                   scale: float, chunk: int):
    """Gradients of one block; recomputes its forward from the carried prefix memory.

    grad_out: [Z, T, dv]; ``reverse``: carry from the block after this one (None for the last).
    Returns (dq, dk, dv, dlogits, reverse carry for the block before).
    """
    Z, T, d = q.shape
    dv_dim = v.shape[-1]
    nc = T // chunk
    fw = block_forward(q, k, v, logits, carry_kv, g_before, scale, chunk)
    geo, intra = fw.geo, fw.intra
    n = logits.shape[-1]
    qc, kc = q.view(Z, nc, chunk, d), k.view(Z, nc, chunk, d)
    vc = v.view(Z, nc, chunk, dv_dim)
    do = grad_out.view(Z, nc, chunk, dv_dim)

    # dP_t[j] = sum_{i<=t} W_ti[j] (dO_t . v_i): the score pass with (dO, V) in place of (Q, K).
    dov = torch.matmul(do, vc.transpose(-1, -2))
    d_probs = geo.row_decay * torch.matmul(do, fw.value_states.transpose(-1, -2))
    d_probs = d_probs + intra.scores(dov)
    # Softmax backward; S enters as scale * S.
    d_raw = scale * fw.probs * (d_probs - (fw.probs * d_probs).sum(-1, keepdim=True))
    # g_t enters every W_ti as exp(-g_t): dg_t = -(sum_i dW_ti W_ti).
    d_norm = -(d_raw * fw.raw_scores + fw.probs * d_probs)

    # dQ_t = sum_j dS_t[j] K~_t[j]: the output pass with (dS, K) in place of (P, V).
    key_mix = intra.mixing(d_raw)
    dq = torch.matmul(d_raw * geo.row_decay, fw.key_states) + torch.matmul(key_mix, kc)

    # Reverse memories: rows t >= i send dS_t q_t (for dK), P_t dO_t (for dV), dg_t (for dl).
    local = torch.cat([
        torch.matmul((d_raw * geo.row_decay).transpose(-1, -2), qc),
        torch.matmul((fw.probs * geo.row_decay).transpose(-1, -2), do),
        (d_norm * geo.row_decay).sum(2).unsqueeze(-1),
    ], dim=-1)  # [Z, nc, n, d + dv + 1], normalised at a_c
    if reverse is None:
        carry = torch.zeros(Z, n, d + dv_dim + 1, dtype=q.dtype, device=q.device)
        carry_anchor = geo.anchors[:, -1]
    else:
        carry = torch.cat([reverse.keys, reverse.values, reverse.normaliser.unsqueeze(-1)], dim=-1)
        carry_anchor = reverse.anchor
    states, carry_back = scan_backward(local, geo.anchors, carry, carry_anchor)
    rev_keys, rev_values, rev_norm = states[..., :d], states[..., d:d + dv_dim], states[..., -1]

    dk = torch.matmul(key_mix.transpose(-1, -2), qc) + torch.matmul(geo.leave, rev_keys)
    dvals = torch.matmul(fw.value_mix.transpose(-1, -2), do) + torch.matmul(geo.leave, rev_values)

    # dl_i[j] = sum_{t>=i} W_ti[j] (dS_t[j] q_t.k_i + P_t[j] dO_t.v_i + dg_t[j]).
    dov.masked_fill_(~intra.mask, 0.0)
    d_logits = intra.column_scores([(d_raw, fw.qk), (fw.probs, dov), (d_norm, None)])
    d_logits = d_logits + geo.leave * (
        torch.matmul(kc, rev_keys.transpose(-1, -2))
        + torch.matmul(vc, rev_values.transpose(-1, -2))
        + rev_norm.unsqueeze(2)
    )
    back = ReverseCarry(carry_back[..., :d], carry_back[..., d:d + dv_dim], carry_back[..., -1],
                        geo.anchors[:, 0])
    shape = lambda x: x.reshape(Z, T, x.shape[-1])  # noqa: E731
    return shape(dq), shape(dk), shape(dvals), shape(d_logits), back
