"""Building blocks of chunked causal attention with a bounded memory: one block of chunks, forward
and backward, for any family whose write weights have ABC's form (``chunk_geometry``).

Notation (per head; Z = B * H sequences are batched, a block of T = nc * C rows is cut into nc
chunks of C rows; ``q`` below is already multiplied by the softmax scale):
    W_ti [n]  = exp(l_i - g_t), i <= t     what row i wrote, read at t (ABC: l the phi logits, g
                                           their prefix logsumexp; GSA: from its log gates)
    S_t  [n]  = sum_{i<=t} W_ti (q_t . k_i)            slot scores K~_t q_t
    P_t  [n]  = softmax(S_t)
    P'_t [n]  = P_t * M_t / (1 - p)                    attention dropout (M_t the keep mask; P' = P
                                                       without dropout)
    O_t  [d]  = sum_j P'_t[j] sum_{i<=t} W_ti[j] v_i   V~_t^T P'_t
The factors F, E, H that turn intra-chunk sums into matmuls, the chunk anchors and the exact
path of steep chunks are the geometry's (``chunk_geometry.BlockGeometry``).

Gradients (the backward): with dP'_t[j] = sum_{i<=t} W_ti[j] (dO_t . v_i), the gradient of P'_t,
    dP_t  = dP'_t * M_t / (1 - p)                      (through the dropout)
    dS_t  = P_t (dP_t - P_t . dP_t)                    (softmax backward, undropped P)
    dg_t  = -(dS_t S_t + P'_t dP'_t) = -(dS_t S_t + P_t dP_t)   (g_t enters every W_ti as exp(-g_t))
    dl_i  = sum_{t>=i} W_ti (dS_t (q_t . k_i) + P'_t (dO_t . v_i) [+ dg_t where g is l's prefix
            logsumexp, which spreads dg_t over the rows i <= t by the same weights])
    dv_i  = sum_{t>=i} sum_j P'_t[j] W_ti[j] dO_t      dq_t, dk_i: from dS_t as without dropout.
So the value pass and its gradients (dl's value term, dv) use the dropped P', the softmax backward
and dg the undropped P with dP. Without dropout P' is P itself and nothing extra is computed.
Where g is not l's prefix logsumexp (GSA) the backward returns dl and dg apart.

Shapes used below: "rows" [Z, nc, C, n], "pairs" [Z, nc, C, C] indexed [t, i], "memories"
[Z, nc, n, d]. Temporaries live in a ``Workspace``; only outputs are fresh tensors.
"""

import functools
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

import torch

from ..utils import Workspace, masked_product_sum, nonfinite_batches
from .chunk_geometry import BlockGeometry, prefix_geometry, upper_triangle

# (control [Z, T, n], g_before [Z, n], chunk, ws) -> the block's factors: ``prefix_geometry``
# (ABC) or ``gsa.gates.gated_geometry``.
Geometry = Callable[[torch.Tensor, torch.Tensor, int, Workspace], BlockGeometry]


def _batches(x: torch.Tensor) -> torch.Tensor:
    """[..., M, K] as [batch, M, K]."""
    return x.reshape(-1, *x.shape[-2:])


def matmul_into(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """out = a @ b for [..., M, K] @ [..., K, N] batches; ``out`` must be contiguous."""
    torch.bmm(_batches(a), _batches(b), out=out.view(-1, *out.shape[-2:]))
    return out


def add_matmul_(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """out += a @ b in one GEMM call (beta = 1); a 2-D ``a`` is broadcast without a copy."""
    if a.dim() == 2:
        a = a.expand(*b.shape[:-2], *a.shape)
    out.view(-1, *out.shape[-2:]).baddbmm_(_batches(a), _batches(b))
    return out


@functools.lru_cache(maxsize=16)
def _later_ones(chunk: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """[i, t] ones where t >= i, cached per chunk size."""
    return torch.ones(chunk, chunk, dtype=dtype, device=device).triu()


class IntraChunk:
    """Sums over the pairs i <= t inside each chunk, weighted by W_ti = exp(l_i - g_t).

    Pair matrices A (such as q_t . k_i) are pairs-shaped; row weights R are rows-shaped, and RF
    stands for R * F. The fast path uses W_ti = E_i F_t; the sequences of a flagged chunk use
    W itself (the others keep the fast path, so one steep sequence changes no other's numbers).
    """

    def __init__(self, geo: BlockGeometry):
        self.geo = geo
        self.later_ones = _later_ones(geo.row_decay.shape[2], geo.row_decay.dtype, geo.row_decay.device)

    @staticmethod
    def mask_(A: torch.Tensor) -> torch.Tensor:
        """Zero the pairs i > t, in place (tril_ is ~10x faster than a broadcast masked_fill_)."""
        return A.tril_()

    def read_(self, inter: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
        """inter <- F_t (inter[t] + sum_{i<=t} E_i A[t, i]), i.e. the carried-memory term plus
        sum_{i<=t} W_ti A[t, i]. ``inter`` (rows) and ``A`` (masked here) are updated in place."""
        geo = self.geo
        self.mask_(A)
        kept = [inter[z, c] * geo.row_decay[z, c] for c, z in geo.flagged]
        add_matmul_(inter, A, geo.col_growth).mul_(geo.row_decay)
        for (c, z), part in zip(geo.flagged, kept):
            inter[z, c] = part + torch.einsum("ztij,zti->ztj", geo.exact_weights(c, z), A[z, c])
        return inter

    def mixing(self, out: torch.Tensor, RF: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
        """out <- sum_j R[t, j] W_ti[j] (pairs, zero where i > t)."""
        self.mask_(matmul_into(out, RF, self.geo.col_growth.transpose(-1, -2)))
        for c, z in self.geo.flagged:
            out[z, c] = torch.einsum("ztij,ztj->zti", self.geo.exact_weights(c, z), R[z, c])
        return out

    def column(self, out: torch.Tensor,
               terms: Sequence[Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]]):
        """out <- sum_{t>=i} W_ti[j] sum_k R_k[t, j] A_k[t, i] (rows-shaped, indexed [i, j]).

        ``terms``: (RF_k, R_k, A_k) with A_k masked, or None for all ones: the sum over t >= i is
        then a matmul with a triangle of ones (total - cumsum would cancel, and E_i, up to
        exp(SAFE_EXPONENT), would amplify the error).
        """
        for k, (RF, _, A) in enumerate(terms):
            A_t = self.later_ones if A is None else A.transpose(-1, -2)
            if k == 0:
                matmul_into(out, A_t.expand(*RF.shape[:-2], *A_t.shape[-2:]), RF)
            else:
                add_matmul_(out, A_t, RF)
        out.mul_(self.geo.col_growth)
        for c, z in self.geo.flagged:
            W = self.geo.exact_weights(c, z)
            exact = 0
            for _, R, A in terms:
                if A is None:
                    exact = exact + torch.einsum("ztij,ztj->zij", W, R[z, c])
                else:
                    exact = exact + torch.einsum("ztij,ztj,zti->zij", W, R[z, c], A[z, c])
            out[z, c] = exact
        return out


def _segment_length(nc: int) -> int:
    """Chunks per segment of the two-level scan: the divisor of nc nearest sqrt(nc), or nc itself
    (a plain loop) when nc is small or has no divisor near enough to pay."""
    if nc < 16:
        return nc
    best = min((q for q in range(2, nc) if nc % q == 0), key=lambda q: abs(q * q - nc), default=nc)
    return best if best * 4 <= nc else nc


def _linear_scan_(xs: Sequence[torch.Tensor], fs: Sequence[torch.Tensor], reverse: bool) -> None:
    """In place along dim 1, for every pair (x, f): x[c] += f[c] * x[c - 1] for c = 1 .. nc - 1
    in order (reverse: x[c] += f[c] * x[c + 1] for c = nc - 2 .. 0). f broadcasts against x and
    holds decays in [0, 1].

    A loop over nc chunks costs nc small calls, which dominate at long N. With nc = P x Q the
    same recurrence takes Q - 1 + P - 1 + 1 calls on bigger tensors: scan each segment of Q
    chunks from zero (all segments at once), scan the P segment ends, then add each segment's
    incoming value times the decay accumulated since the segment's start.
    """
    nc = xs[0].shape[1]
    Q = _segment_length(nc)
    P = nc // Q
    xs = [x.view(x.shape[0], P, Q, *x.shape[2:]) for x in xs]
    fs = [f.view(f.shape[0], P, Q, *f.shape[2:]) for f in fs]
    inner = range(1, Q) if not reverse else range(Q - 2, -1, -1)
    prev = -1 if not reverse else 1
    segments = [x.unbind(2) for x in xs]
    factors = [f.unbind(2) for f in fs]
    for q in inner:
        torch._foreach_addcmul_([s[q] for s in segments], [f[q] for f in factors],
                                [s[q + prev] for s in segments])
    if P == 1:
        return
    # Decay from the value entering a segment to each of its chunks: a cumulative product over
    # the segment (from its far end when reversed); every factor is <= 1.
    if not reverse:
        reach = [torch.cumprod(f, dim=2) for f in fs]
        end = Q - 1
    else:
        reach = [torch.cumprod(f.flip(2), dim=2).flip(2) for f in fs]
        end = 0
    ends = [x[:, :, end] for x in xs]
    across = [r[:, :, end] for r in reach]  # decay over a whole segment
    order = range(1, P) if not reverse else range(P - 2, -1, -1)
    for p in order:
        torch._foreach_addcmul_([e[:, p] for e in ends], [a[:, p] for a in across],
                                [e[:, p + prev] for e in ends])
    # Every chunk but the segment's last takes the finished end of the segment before it.
    rest = slice(0, Q - 1) if not reverse else slice(1, Q)
    receive = slice(1, P) if not reverse else slice(0, P - 1)
    give = slice(0, P - 1) if not reverse else slice(1, P)
    for x, r in zip(xs, reach):
        incoming = x[:, give, end].unsqueeze(2)
        x[:, receive, rest].addcmul_(r[:, receive, rest], incoming)


def scan(sums: Sequence[torch.Tensor], carries: Sequence[torch.Tensor], decay: torch.Tensor,
         reverse: bool, ws: Workspace, names: Sequence[str],
         out: Optional[Sequence[torch.Tensor]] = None) -> Tuple[List[torch.Tensor], List[torch.Tensor]]:
    """Turn per-chunk sums into the memories carried between chunks.

    sums: [Z, nc, n, *] each, chunk c's own sums; carries: [Z, n, *], what enters the scan
    (normalised at its first anchor); decay: [Z, nc, n], exp(a_c - a_{c+1}).
    Forward (reverse=False): sums[c] is normalised at a_{c+1}; memories[c] holds everything before
    chunk c, normalised at a_c. Reverse: sums[c] is normalised at a_c; memories[c] holds everything
    after chunk c, normalised at a_{c+1}. Returns (memories in workspace buffers ``names``, or in
    ``out`` when given, and the memories leaving the scan: after the last chunk, or before the first).
    """
    nc = sums[0].shape[1]
    last = 0 if reverse else nc - 1
    memories = list(out) if out is not None else [ws(name, part.shape, part)
                                                  for part, name in zip(sums, names)]
    decays = [decay if part.dim() == 3 else decay.unsqueeze(-1) for part in sums]
    # memory[c + 1] = sums[c] + decay[c] * memory[c] (forward): the sums go in shifted by one
    # chunk with the carry in front, then a linear scan adds the decayed memory before them.
    factors = []
    for memory, part, carry, d in zip(memories, sums, carries, decays):
        if reverse:
            memory[:, -1].copy_(carry)
            memory[:, :-1].copy_(part[:, 1:])
            factors.append(torch.cat([d[:, 1:], d[:, :1]], dim=1))  # the last one is unused
        else:
            memory[:, 0].copy_(carry)
            memory[:, 1:].copy_(part[:, :-1])
            factors.append(torch.cat([d[:, :1], d[:, :-1]], dim=1))  # the first one is unused
    _linear_scan_(memories, factors, reverse)
    leaving = [torch.addcmul(part[:, last], d[:, last], m[:, last])
               for part, d, m in zip(sums, decays, memories)]
    return memories, leaving


class BlockForward(NamedTuple):
    geo: BlockGeometry
    intra: IntraChunk
    q: torch.Tensor  # scaled queries, [Z, nc, C, d]
    key_states: torch.Tensor  # [Z, nc, n, d], memory entering each chunk
    value_states: torch.Tensor  # [Z, nc, n, dv]
    scores: torch.Tensor  # S (rows)
    probs: torch.Tensor  # P (rows)
    value_probs: torch.Tensor  # P' = P * M / (1 - p), the value pass's weights (P itself without dropout)
    probs_f: torch.Tensor  # P' * F (rows)
    qk: torch.Tensor  # q_t . k_i, masked (pairs)
    value_mix: torch.Tensor  # sum_j P'_t[j] W_ti[j] (pairs)
    carry: Optional[Tuple[torch.Tensor, torch.Tensor]]  # memories after the block, at g_last
    g_last: torch.Tensor  # [Z, n]


def block_forward(q, k, v, control, carry_k, carry_v, g_before, scale: float, chunk: int,
                  ws: Workspace, out: Optional[torch.Tensor] = None, keep_states: bool = False,
                  states: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
                  keep_mask: Optional[torch.Tensor] = None, keep_scale: float = 1.0,
                  geometry: Geometry = prefix_geometry) -> BlockForward:
    """One block of causal attention; writes the output into ``out`` ([Z, T, dv]) when given.

    q, k: [Z, T, d]; v: [Z, T, dv]; control: [Z, T, n] (contiguous, T a multiple of ``chunk``),
    what ``geometry`` builds the write weights from (ABC's phi logits by default);
    carry_k [Z, n, d], carry_v [Z, n, dv]: memory of the prefix, normalised at g_before [Z, n].
    keep_states: put the memories entering each chunk (``key_states``, ``value_states``) in fresh
    tensors that outlive the call (for the backward) instead of scratch buffers.
    states: those memories from an earlier call on the same block: they are not recomputed, and
    the returned ``carry`` is None.
    keep_mask: bool [Z, T, n], the attention-dropout keep mask M (None: no dropout); keep_scale:
    1 / (1 - p).
    """
    Z, T, d = q.shape
    nc, n, dv = T // chunk, control.shape[-1], v.shape[-1]
    geo = geometry(control, g_before, chunk, ws)
    intra = IntraChunk(geo)
    rows, pairs = (Z, nc, chunk, n), (Z, nc, chunk, chunk)
    qc = torch.mul(q.view(Z, nc, chunk, d), scale, out=ws("q", (Z, nc, chunk, d), q))
    kc, vc = k.view(Z, nc, chunk, d), v.view(Z, nc, chunk, dv)

    if states is None:
        leave_t = geo.leave.transpose(-1, -2)
        key_sums = matmul_into(ws("key_sums", (Z, nc, n, d), q), leave_t, kc)
        value_sums = matmul_into(ws("value_sums", (Z, nc, n, dv), q), leave_t, vc)
        entering = geo.entering.unsqueeze(-1)
        kept = (torch.empty_like(key_sums), torch.empty_like(value_sums)) if keep_states else None
        (key_states, value_states), carry = scan(
            [key_sums, value_sums], [entering * carry_k, entering * carry_v], geo.chunk_decay, reverse=False,
            ws=ws, names=("key_states", "value_states"), out=kept)
        carry = tuple(carry)
    else:
        (key_states, value_states), carry = states, None

    qk = matmul_into(ws("qk", pairs, q), qc, kc.transpose(-1, -2))
    scores = matmul_into(ws("scores", rows, q), qc, key_states.transpose(-1, -2))
    intra.read_(scores, qk)
    probs = torch.ops.aten._softmax.out(scores, -1, False, out=ws("probs", rows, q))
    value_probs = probs
    if keep_mask is not None:
        value_probs = torch.mul(probs, keep_mask.view(rows), out=ws("value_probs", rows, q))
        value_probs.mul_(keep_scale)
    probs_f = torch.mul(value_probs, geo.row_decay, out=ws("probs_f", rows, q))
    value_mix = intra.mixing(ws("value_mix", pairs, q), probs_f, value_probs)
    if out is not None:
        out = out.view(Z, nc, chunk, dv)
        add_matmul_(matmul_into(out, probs_f, value_states), value_mix, vc)
        # A sum is non-finite whenever a term is (or overflows: then the check below just runs).
        if carry is not None and not bool(torch.isfinite(carry[1].sum())):
            _isolate_nonfinite_values(out, probs_f, value_states, value_mix, vc)
    return BlockForward(geo, intra, qc, key_states, value_states, scores, probs, value_probs,
                        probs_f, qk, value_mix, carry, geo.g_last)


def _isolate_nonfinite_values(out, probs_f, value_states, value_mix, vc) -> None:
    """Recompute, in place, the outputs of the chunks whose values hold a NaN or an infinity.

    value_mix [t, i] is zero for i > t, but the matmul value_mix @ v still multiplies those zeros
    by v_i and 0 * NaN = NaN reaches rows t < i. Only called when the memory leaving the block is
    not finite (a non-finite value always reaches it), so the finite path pays one tiny check.
    """
    bad = nonfinite_batches(vc)
    if bool(bad.any()):
        index = bad.nonzero(as_tuple=True)
        out[index] = (torch.matmul(probs_f[index], value_states[index])
                      + masked_product_sum(value_mix[index], vc[index], ~upper_triangle(vc.shape[2], vc.device)))


class ReverseCarry(NamedTuple):
    """What the rows after a block send back, as sums of exp(a_0 - g_t) * (row term), a_0 the
    sending block's first anchor: keys [Z, n, d] (dS_t q_t), values [Z, n, dv] (P'_t dO_t),
    normaliser [Z, n] (dg_t; None where g is not l's prefix logsumexp). ``entering`` [Z, n]: the
    sending block's exp(g_before - a_0), which renormalises them at the receiving block's g_last."""

    keys: torch.Tensor
    values: torch.Tensor
    normaliser: Optional[torch.Tensor]
    entering: torch.Tensor


def block_backward(q, k, v, control, carry_k, carry_v, g_before, grad_out,
                   reverse: Optional[ReverseCarry], scale: float, chunk: int, ws: Workspace,
                   dq, dk, dv, dcontrol, dg: Optional[torch.Tensor] = None,
                   states: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
                   keep_mask: Optional[torch.Tensor] = None, keep_scale: float = 1.0,
                   geometry: Geometry = prefix_geometry) -> ReverseCarry:
    """Gradients of one block, recomputing its forward from the carried prefix memory.

    grad_out: [Z, T, dv]; dq, dk, dv, dcontrol: contiguous outputs shaped like q, k, v, control;
    dcontrol receives dl; with ``dg`` None, dg is chained into it (ABC: g is l's prefix
    logsumexp), else dg [Z, T, n] receives dg apart (GSA: the caller chains both to its gates).
    ``reverse``: the carry from the block after this one (None for the last block);
    ``states``: the block's (key_states, value_states) kept by the forward, if it kept them.
    ``keep_mask``, ``keep_scale``, ``geometry``: as in ``block_forward``.
    Returns the ReverseCarry for the block before.
    """
    Z, T, d = q.shape
    nc, n, dv_dim = T // chunk, control.shape[-1], v.shape[-1]
    rows, pairs = (Z, nc, chunk, n), (Z, nc, chunk, chunk)
    fw = block_forward(q, k, v, control, carry_k, carry_v, g_before, scale, chunk, ws, states=states,
                       keep_mask=keep_mask, keep_scale=keep_scale, geometry=geometry)
    geo, intra = fw.geo, fw.intra
    prefix = dg is None
    kc, vc = k.view(Z, nc, chunk, d), v.view(Z, nc, chunk, dv_dim)
    do = grad_out.view(Z, nc, chunk, dv_dim)

    # dP'_t[j] = sum_{i<=t} W_ti[j] (dO_t . v_i): the score pass with (dO, V) for (Q, K).
    dov = matmul_into(ws("dov", pairs, q), do, vc.transpose(-1, -2))
    d_probs = matmul_into(ws("d_probs", rows, q), do, fw.value_states.transpose(-1, -2))
    intra.read_(d_probs, dov)
    if keep_mask is not None:  # dP = dP' M / (1 - p); then P dP = P' dP' below
        d_probs.mul_(keep_mask.view(rows)).mul_(keep_scale)
    # g_t enters every W_ti through exp(-g_t): dg_t = -sum_i dW_ti W_ti = -(dS_t S_t + P_t dP_t).
    d_norm = torch.mul(fw.probs, d_probs, out=ws("d_norm", rows, q) if prefix else dg.view(rows))
    d_scores = d_probs.sub_(d_norm.sum(-1, keepdim=True)).mul_(fw.probs)  # softmax backward
    d_norm.addcmul_(d_scores, fw.scores).neg_()
    ds_f = torch.mul(d_scores, geo.row_decay, out=ws("ds_f", rows, q))

    # dQ_t = scale * sum_j dS_t[j] K~_t[j]: the output pass with (dS, K) for (P, V).
    key_mix = intra.mixing(ws("key_mix", pairs, q), ds_f, d_scores)
    dq = dq.view(Z, nc, chunk, d)
    add_matmul_(matmul_into(dq, ds_f, fw.key_states), key_mix, kc).mul_(scale)

    # Reverse memories: rows t send dS_t q_t (for dK), P'_t dO_t (for dV), and with a prefix
    # normaliser dg_t (for dl).
    sums = [matmul_into(ws("rev_sum_k", (Z, nc, n, d), q), ds_f.transpose(-1, -2), fw.q),
            matmul_into(ws("rev_sum_v", (Z, nc, n, dv_dim), q), fw.probs_f.transpose(-1, -2), do)]
    names = ["rev_k", "rev_v"]
    if prefix:
        dn_f = torch.mul(d_norm, geo.row_decay, out=ws("dn_f", rows, q))
        sums.append(dn_f.sum(2))
        names.append("rev_g")
    if reverse is None:
        zeros = (q.new_zeros(Z, n, d), q.new_zeros(Z, n, dv_dim), q.new_zeros(Z, n) if prefix else None)
        reverse = ReverseCarry(*zeros, q.new_ones(Z, n))
    carried = [reverse.keys, reverse.values, reverse.normaliser][:len(sums)]
    entering = reverse.entering
    memories, back = scan(sums, [entering.unsqueeze(-1) * m if m.dim() == 3 else entering * m for m in carried],
                          geo.chunk_decay, reverse=True, ws=ws, names=names)
    rev_k, rev_v = memories[:2]

    leave = geo.leave
    add_matmul_(matmul_into(dk.view(Z, nc, chunk, d), key_mix.transpose(-1, -2), fw.q), leave, rev_k)
    add_matmul_(matmul_into(dv.view(Z, nc, chunk, dv_dim), fw.value_mix.transpose(-1, -2), do),
                leave, rev_v)

    # dl_i[j] = sum_{t>=i} W_ti[j] (dS_t[j] q_t.k_i + P_t[j] dO_t.v_i [+ dg_t[j]]).
    intra.mask_(dov)
    terms = [(ds_f, d_scores, fw.qk), (fw.probs_f, fw.value_probs, dov)]
    if prefix:
        terms.append((dn_f, d_norm, None))
    dl = intra.column(dcontrol.view(rows), terms)
    inter = matmul_into(ws("inter", rows, q), kc, rev_k.transpose(-1, -2))
    add_matmul_(inter, vc, rev_v.transpose(-1, -2))
    if prefix:
        inter.add_(memories[2].unsqueeze(2))
    dl.add_(inter.mul_(leave))
    return ReverseCarry(*back, *([] if prefix else [None]), geo.entering)
