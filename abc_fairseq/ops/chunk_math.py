"""Building blocks of chunked causal ABC: one block of chunks, forward and backward.

Notation (per head; Z = B * H sequences are batched, a block of T = nc * C rows is cut into nc
chunks of C rows; the query is pre-multiplied by the softmax scale):
    l_i  [n]  phi logits of row i          g_t = log sum_{i<=t} exp(l_i)   (prefix normaliser, per slot)
    W_ti [n]  = exp(l_i - g_t), i <= t     (the prefix-normalised control vector: what i wrote, read at t)
    S_t  [n]  = sum_{i<=t} W_ti (q_t . k_i)            slot scores K~_t q_t
    P_t  [n]  = softmax(S_t)
    O_t  [d]  = sum_j P_t[j] sum_{i<=t} W_ti[j] v_i    V~_t^T P_t

Every exponent is taken against a normaliser of the past, never of the future: chunk c is anchored
at a_c = g at its first row. Then
    F_t = exp(a_c - g_t) <= 1            row factor, t in chunk c
    E_i = exp(l_i - a_c)                 column factor, i in chunk c
    H_i = exp(l_i - a_{c+1}) <= 1        what row i leaves in the memory handed to chunk c + 1
and W_ti = E_i F_t inside a chunk, so intra-chunk sums are matmuls under a causal C x C mask.
E_i overflows only where logits rise by more than ``SAFE_EXPONENT`` above the normaliser inside one
chunk; such chunks are flagged and their intra-chunk terms rebuilt exactly from W (C x C x n), so the
op is exact for logits of any magnitude. Underflow only drops weights below exp(-87) of a
distribution that sums to one. Memories carried across chunks are stored divided by exp(anchor).
"""

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import torch

# Largest exponent the fast (matmul) path takes: exp(60) * C * |q.k| stays far below fp32's max.
SAFE_EXPONENT = 60.0


def _batches(x: torch.Tensor) -> torch.Tensor:
    """[..., M, K] as [batch, M, K]; a view for the chunked layouts used here."""
    return x.reshape(-1, *x.shape[-2:])


def add_matmul_(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """out += a @ b in one GEMM call (beta = 1), for [..., M, K] @ [..., K, N] batches.

    ``out`` may be a strided slice (``view`` raises rather than silently copying); a 2-D ``a`` is
    broadcast over the batch with a stride-0 view, without a copy.
    """
    if a.dim() == 2:
        a = a.expand(*b.shape[:-2], *a.shape)
    out.view(-1, *out.shape[-2:]).baddbmm_(_batches(a), _batches(b))
    return out


def matmul_into(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """out = a @ b, written into ``out`` (which may be a strided slice): saves a copy."""
    torch.bmm(_batches(a), _batches(b), out=out.view(-1, *out.shape[-2:]))
    return out


class BlockGeometry(NamedTuple):
    """Normalisers and factors of one block; [Z, nc, C, n] unless stated."""

    logits: torch.Tensor  # l_i
    before: torch.Tensor  # [Z, nc, n], g just before each chunk
    anchors: torch.Tensor  # [Z, nc + 1, n]: a_0 .. a_{nc-1}, then g at the block's last row
    row_decay: torch.Tensor  # F_t
    col_growth: torch.Tensor  # E_i (clamped in flagged chunks, whose intra terms are rebuilt)
    leave: torch.Tensor  # H_i
    flagged: List[int]  # chunks whose E would overflow
    exact_g: Dict[int, torch.Tensor]  # g_t of the flagged chunks, [Z, C, n]


def block_geometry(logits: torch.Tensor, g_before: torch.Tensor, chunk: int) -> BlockGeometry:
    """logits: [Z, T, n], T a multiple of ``chunk``; g_before: [Z, n], the normaliser of all rows
    before the block (-inf at the start of a sequence)."""
    Z, T, n = logits.shape
    nc = T // chunk
    l = logits.view(Z, nc, chunk, n)
    # Normaliser at each chunk boundary: a scan over nc chunk totals, not over T rows.
    totals = torch.logsumexp(l, dim=2)
    ends = torch.logcumsumexp(torch.cat([g_before.unsqueeze(1), totals], dim=1), dim=1)
    before = ends[:, :-1]
    first = torch.logaddexp(before, l[:, :, 0])  # a_c
    anchors = torch.cat([first, ends[:, -1:]], dim=1)

    exponent = l - first.unsqueeze(2)
    flagged = torch.nonzero(exponent.amax(dim=(0, 2, 3)) > SAFE_EXPONENT).flatten().tolist()
    if flagged:
        exponent.clamp_(max=SAFE_EXPONENT)
    col_growth = exponent.exp_()
    # exp(g_t - a_c) = exp(g_before_chunk - a_c) + sum_{i in chunk, i <= t} E_i.
    row_decay = torch.cumsum(col_growth, dim=2)
    row_decay.add_(torch.exp(before - first).unsqueeze(2)).reciprocal_()
    leave = col_growth * torch.exp(first - anchors[:, 1:]).unsqueeze(2)

    exact_g = {}
    for c in flagged:
        g = torch.logaddexp(before[:, c, None], torch.logcumsumexp(l[:, c], dim=1))
        exact_g[c] = g
        row_decay[:, c] = torch.exp(first[:, c, None] - g)
        leave[:, c] = torch.exp(l[:, c] - anchors[:, c + 1, None])
    return BlockGeometry(l, before, anchors, row_decay, col_growth, leave, flagged, exact_g)


class IntraChunk:
    """Sums over the pairs i <= t inside each chunk, weighted by W_ti = exp(l_i - g_t).

    Shapes: pair matrices A (such as q_t . k_i) are [Z, nc, C, C] indexed [t, i]; row weights R
    are [Z, nc, C, n] indexed [t, j], and RF stands for R * F.
    """

    def __init__(self, geo: BlockGeometry):
        self.geo = geo
        chunk = geo.logits.shape[2]
        ones = torch.ones(chunk, chunk, dtype=geo.logits.dtype, device=geo.logits.device)
        self.above = ones.triu(1).bool()  # pairs i > t, [t, i]
        self.later_ones = ones.triu()  # [i, t]: 1 where t >= i

    def mask_(self, A: torch.Tensor) -> torch.Tensor:
        """Zero the pairs i > t, in place."""
        return A.masked_fill_(self.above, 0.0)

    def exact_weights(self, c: int) -> torch.Tensor:
        """W of chunk c: [Z, C, C, n] indexed [t, i, j], zero where i > t."""
        exponent = self.geo.logits[:, c, None, :, :] - self.geo.exact_g[c][:, :, None, :]
        return exponent.masked_fill_(self.above[None, :, :, None], float("-inf")).exp_()

    def read(self, inter: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
        """F_t * (inter[t] + sum_{i<=t} E_i A[t, i]) = inter-chunk part + sum_{i<=t} W_ti A[t, i].

        inter: [Z, nc, C, n], the carried-memory term before its row factor (overwritten);
        A is masked in place. Returns [Z, nc, C, n].
        """
        geo = self.geo
        self.mask_(A)
        kept = {c: inter[:, c] * geo.row_decay[:, c] for c in geo.flagged}
        add_matmul_(inter, A, geo.col_growth).mul_(geo.row_decay)
        for c, part in kept.items():
            inter[:, c] = part + torch.einsum("ztij,zti->ztj", self.exact_weights(c), A[:, c])
        return inter

    def mixing(self, RF: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
        """sum_j R[t, j] W_ti[j]: [Z, nc, C, C] indexed [t, i], zero where i > t."""
        mix = self.mask_(torch.matmul(RF, self.geo.col_growth.transpose(-1, -2)))
        for c in self.geo.flagged:
            mix[:, c] = torch.einsum("ztij,ztj->zti", self.exact_weights(c), R[:, c])
        return mix

    def column(self, terms: Sequence[Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]]):
        """sum_{t>=i} W_ti[j] sum_k R_k[t, j] A_k[t, i]: [Z, nc, C, n] indexed [i, j].

        ``terms``: (RF_k, R_k, A_k) with A_k masked, or None for all ones (the sum over t >= i is
        then a matmul with a triangle of ones; total - cumsum would cancel, and E_i, up to
        exp(SAFE_EXPONENT), would amplify the error).
        """
        acc = torch.zeros_like(terms[0][0])
        for RF, _, A in terms:
            add_matmul_(acc, self.later_ones if A is None else A.transpose(-1, -2), RF)
        acc.mul_(self.geo.col_growth)
        for c in self.geo.flagged:
            W = self.exact_weights(c)
            exact = 0
            for _, R, A in terms:
                if A is None:
                    exact = exact + torch.einsum("ztij,ztj->zij", W, R[:, c])
                else:
                    exact = exact + torch.einsum("ztij,ztj,zti->zij", W, R[:, c], A[:, c])
            acc[:, c] = exact
        return acc


def scan_forward(local, anchors, carry, g_before):
    """Memories entering each chunk.

    local: [Z, nc, n, D], chunk c's own writes normalised at a_{c+1}; anchors: [Z, nc + 1, n];
    carry: [Z, n, D] normalised at g_before [Z, n]. Returns (states [Z, nc, n, D], states[:, c]
    normalised at a_c; the memory after the block [Z, n, D], normalised at anchors[:, -1]).
    """
    nc = local.shape[1]
    states = torch.empty_like(local)
    torch.mul(torch.exp(g_before - anchors[:, 0]).unsqueeze(-1), carry, out=states[:, 0])
    decay = torch.exp(anchors[:, :-1] - anchors[:, 1:]).unsqueeze(-1)  # [Z, nc, n, 1]
    for c in range(nc - 1):
        torch.addcmul(local[:, c], decay[:, c], states[:, c], out=states[:, c + 1])
    return states, torch.addcmul(local[:, -1], decay[:, -1], states[:, -1])


def scan_backward(local, anchors, carry, carry_anchor):
    """Reverse memories: what the rows after chunk c send back to it.

    local: [Z, nc, n, D], chunk c's own rows normalised at a_c; carry: [Z, n, D], the rows after the
    block normalised at carry_anchor [Z, n] (>= the block's last normaliser). Returns (states
    [Z, nc, n, D], states[:, c] normalised at a_{c+1}; the carry for the block before, at a_0).
    """
    nc = local.shape[1]
    states = torch.empty_like(local)
    torch.mul(torch.exp(anchors[:, -1] - carry_anchor).unsqueeze(-1), carry, out=states[:, -1])
    decay = torch.exp(anchors[:, :-1] - anchors[:, 1:]).unsqueeze(-1)
    for c in range(nc - 1, 0, -1):
        torch.addcmul(local[:, c], decay[:, c], states[:, c], out=states[:, c - 1])
    return states, torch.addcmul(local[:, 0], decay[:, 0], states[:, 0])


class BlockForward(NamedTuple):
    out: torch.Tensor  # [Z, nc, C, dv]
    geo: BlockGeometry
    intra: IntraChunk
    states: torch.Tensor  # [Z, nc, n, d + dv], memory entering each chunk (keys, then values)
    scores: torch.Tensor  # S  [Z, nc, C, n]
    probs: torch.Tensor  # P  [Z, nc, C, n]
    probs_f: torch.Tensor  # P * F
    qk: torch.Tensor  # q_t . k_i, masked  [Z, nc, C, C]
    value_mix: torch.Tensor  # sum_j P_t[j] W_ti[j]  [Z, nc, C, C]
    carry: torch.Tensor  # [Z, n, d + dv], memory after the block, normalised at g_last
    g_last: torch.Tensor  # [Z, n]


def block_forward(q, kv, logits, carry, g_before, chunk: int) -> BlockForward:
    """Causal ABC over one block.

    q: [Z, T, d] (pre-scaled); kv: [Z, T, d + dv], keys then values; logits: [Z, T, n];
    carry: [Z, n, d + dv], memory of the prefix normalised at g_before [Z, n].
    """
    Z, T, d = q.shape
    nc = T // chunk
    geo = block_geometry(logits, g_before, chunk)
    intra = IntraChunk(geo)
    qc = q.view(Z, nc, chunk, d)
    kvc = kv.view(Z, nc, chunk, kv.shape[-1])
    kc, vc = kvc[..., :d], kvc[..., d:]

    local = torch.matmul(geo.leave.transpose(-1, -2), kvc)  # [Z, nc, n, d + dv]
    states, carry_out = scan_forward(local, geo.anchors, carry, g_before)
    key_states, value_states = states[..., :d], states[..., d:]

    qk = torch.matmul(qc, kc.transpose(-1, -2))
    scores = intra.read(torch.matmul(qc, key_states.transpose(-1, -2)), qk)
    probs = torch.softmax(scores, dim=-1)
    probs_f = probs * geo.row_decay
    value_mix = intra.mixing(probs_f, probs)
    out = add_matmul_(torch.matmul(probs_f, value_states), value_mix, vc)
    return BlockForward(out, geo, intra, states, scores, probs, probs_f, qk, value_mix,
                        carry_out, geo.anchors[:, -1])


class ReverseCarry(NamedTuple):
    """What the rows after a block send back, as sums of exp(anchor - g_t) * (row term):
    [Z, n, d + dv + 1] = (dS_t q_t | P_t dO_t | dg_t), normalised at ``anchor`` [Z, n]."""

    memory: torch.Tensor
    anchor: torch.Tensor


def block_backward(q, kv, logits, carry, g_before, grad_out, reverse: Optional[ReverseCarry],
                   chunk: int):
    """Gradients of one block, recomputing its forward from the carried prefix memory.

    grad_out: [Z, T, dv]; ``reverse``: the carry from the block after this one (None for the last).
    Returns (dq [Z, T, d], dkv [Z, T, d + dv], dlogits [Z, T, n], ReverseCarry for the block before).
    """
    Z, T, d = q.shape
    D = kv.shape[-1]
    nc = T // chunk
    fw = block_forward(q, kv, logits, carry, g_before, chunk)
    geo, intra = fw.geo, fw.intra
    qc = q.view(Z, nc, chunk, d)
    kvc = kv.view(Z, nc, chunk, D)
    kc, vc = kvc[..., :d], kvc[..., d:]
    do = grad_out.view(Z, nc, chunk, D - d)

    # dP_t[j] = sum_{i<=t} W_ti[j] (dO_t . v_i): the score pass with (dO, V) for (Q, K).
    dov = torch.matmul(do, vc.transpose(-1, -2))
    d_probs = intra.read(torch.matmul(do, fw.states[..., d:].transpose(-1, -2)), dov)
    pdp = fw.probs * d_probs
    d_scores = d_probs.sub_(pdp.sum(-1, keepdim=True)).mul_(fw.probs)  # softmax backward
    # g_t enters every W_ti through exp(-g_t): dg_t = -sum_i dW_ti W_ti = -(dS_t S_t + P_t dP_t).
    d_norm = torch.addcmul(pdp, d_scores, fw.scores).neg_()
    ds_f = d_scores * geo.row_decay
    dn_f = d_norm * geo.row_decay

    # dQ_t = sum_j dS_t[j] K~_t[j]: the output pass with (dS, K) for (P, V).
    key_mix = intra.mixing(ds_f, d_scores)
    dq = add_matmul_(torch.matmul(ds_f, fw.states[..., :d]), key_mix, kc)

    # Reverse memories: rows t send dS_t q_t (for dK), P_t dO_t (for dV) and dg_t (for dl),
    # normalised at a_c: [Z, nc, n, D + 1].
    local = kv.new_empty(Z, nc, ds_f.shape[-1], D + 1)
    matmul_into(local[..., :d], ds_f.transpose(-1, -2), qc)
    matmul_into(local[..., d:D], fw.probs_f.transpose(-1, -2), do)
    torch.sum(dn_f, dim=2, out=local[..., D])
    if reverse is None:
        reverse = ReverseCarry(local.new_zeros(Z, local.shape[2], D + 1), geo.anchors[:, -1])
    states, back = scan_backward(local, geo.anchors, reverse.memory, reverse.anchor)
    rev_k, rev_v, rev_g = states[..., :d], states[..., d:D], states[..., D]

    dkv = torch.empty_like(kvc)
    add_matmul_(matmul_into(dkv[..., :d], key_mix.transpose(-1, -2), qc), geo.leave, rev_k)
    add_matmul_(matmul_into(dkv[..., d:], fw.value_mix.transpose(-1, -2), do), geo.leave, rev_v)

    # dl_i[j] = sum_{t>=i} W_ti[j] (dS_t[j] q_t.k_i + P_t[j] dO_t.v_i + dg_t[j]).
    intra.mask_(dov)
    d_logits = intra.column([(ds_f, d_scores, fw.qk), (fw.probs_f, fw.probs, dov),
                             (dn_f, d_norm, None)])
    inter = add_matmul_(torch.matmul(kc, rev_k.transpose(-1, -2)), vc, rev_v.transpose(-1, -2))
    d_logits.add_(inter.add_(rev_g.unsqueeze(2)).mul_(geo.leave))
    return (dq.reshape(Z, T, d), dkv.reshape(Z, T, D), d_logits.reshape(Z, T, -1),
            ReverseCarry(back, geo.anchors[:, 0]))
