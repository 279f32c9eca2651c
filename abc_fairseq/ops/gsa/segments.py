"""Causal gated slot attention over a whole sequence, the direct chunked form: the oracle beside
``chunk`` (which runs GSA through causal ABC's fused chunked op), in log space, O(N (n + C)) memory.

Per head and slot, with log gates g_t = log a_t <= 0 and write weights s_t = 1 - a_t = -expm1(g_t),
the memory row t reads is
    K~_t = exp(G_t) K~_0 + sum_{i<=t} exp(G_t - G_i) s_i (x) k_i,   G_t = sum_{m<=t} g_m
(likewise V~_t), where K~_0 is the memory entering the chunk and the sums run over the chunk.
Every exponent is a sum of log gates over rows i < m <= t, computed as such (a masked cumulative
sum, never a difference of large cumulative sums and never anchored on a later row), so every
factor is <= 1 and exact for gates as close to 0 or 1 as the dtype holds: nothing is clamped.

The sequence is cut into chunks of C rows; blocks of chunks are processed at once (batched
products over a [C, C, n] decay tensor per chunk) and only the memories [n, d + dv] pass between
chunks. With gradients each block is recomputed in the backward (activation checkpointing), so
what is kept is the inputs and one memory per block: O(N (d + n)) besides the output, never
O(N n d); the scratch of one block is bounded by ``tile_elements``.
"""

from typing import Optional, Tuple, Union

import torch
from torch.utils.checkpoint import checkpoint

from ..utils import compute_dtype, zero_safe_matmul
from .gates import segment_sums
from .state import GSAState

DEFAULT_CHUNK_SIZE = 16
# Elements of one [blocks x chunks, C, C, n] scratch tensor (about five are alive at once).
DEFAULT_TILE_ELEMENTS = 1 << 23


def _chunks(q, k, v, g, key_memory, value_memory, keep, scale: float, keep_scale: float):
    """One block of chunks. q, k [Z, M, C, d]; v [Z, M, C, dv]; g [Z, M, C, n]; key_memory
    [Z, n, d], value_memory [Z, n, dv]: the memories entering the block; keep [Z, M, C, n] bool or
    None. Returns out [Z, M, C, dv] and the memories after the block."""
    C = q.shape[2]
    causal = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()  # [t, i]: i <= t
    finite = bool(torch.isfinite(q.sum() + k.sum() + v.sum() + g.sum()))  # else: selections, not products
    write = -torch.expm1(g)  # s_i = 1 - a_i, exact near a = 1
    segments = segment_sums(g, finite)  # [Z, M, t, i, n]
    # W[t, i, j] = exp(G_t - G_i) s_i for i <= t, 0 after: exp(-inf) = 0 above the diagonal.
    above = torch.zeros(C, C, 1, dtype=g.dtype, device=g.device).masked_fill(~causal[:, :, None], float("-inf"))
    weights = torch.exp(segments + above) * write.unsqueeze(2)
    qk = torch.matmul(q, k.transpose(-1, -2))  # [Z, M, t, i]
    if not finite:  # 0 * NaN from a later row would reach row t
        weights = torch.where(causal[:, :, None], weights, weights.new_zeros(()))
        qk = torch.where(causal, qk, qk.new_zeros(()))
    prefix = g.cumsum(2).exp()  # exp(G_t): decay of the entering memory at row t
    to_end = segments[:, :, -1].exp() * write  # exp(G_last - G_i) s_i: row i's weight in the chunk's memory
    total = prefix[:, :, -1, :, None]  # [Z, M, n, 1]: decay over the whole chunk
    key_writes = torch.matmul(to_end.transpose(-1, -2), k)  # [Z, M, n, d]
    value_writes = torch.matmul(to_end.transpose(-1, -2), v)
    entering_k, entering_v = [], []
    # Memories entering each chunk: a short scan over the chunks (unbind, not indexing: one
    # gradient buffer per tensor in the backward instead of one per chunk).
    for decay, key_write, value_write in zip(total.unbind(1), key_writes.unbind(1), value_writes.unbind(1)):
        entering_k.append(key_memory)
        entering_v.append(value_memory)
        key_memory = decay * key_memory + key_write
        value_memory = decay * value_memory + value_write
    entering_k, entering_v = torch.stack(entering_k, 1), torch.stack(entering_v, 1)

    intra = torch.matmul(qk.unsqueeze(-2), weights).squeeze(-2)  # [Z, M, t, n]: sum_i qk[t, i] W[t, i, :]
    scores = intra + prefix * torch.matmul(q, entering_k.transpose(-1, -2))
    probs = torch.softmax(scale * scores, dim=-1)
    if keep is not None:
        probs = probs * keep * keep_scale
    mix = torch.matmul(weights, probs.unsqueeze(-1)).squeeze(-1)  # [Z, M, t, i]: 0 for i > t
    out = zero_safe_matmul(mix, v, causal) + torch.matmul(probs * prefix, entering_v)
    return out, key_memory, value_memory


def segment_causal_gsa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_gates: torch.Tensor, scale: float,
                     chunk_size: Optional[int], tile_elements: Optional[int], initial_state: GSAState,
                     return_state: bool, keep: Optional[torch.Tensor], keep_scale: float
                     ) -> Union[torch.Tensor, Tuple[torch.Tensor, GSAState]]:
    """Causal GSA, the direct chunked form (autograd through a [C, C, n] decay per chunk, each
    block recomputed in the backward), its arguments as ``causal_gsa``'s: q, k [B, H, N, d];
    v [B, H, N, dv]; log_gates [B, H, N, n]; keep bool [B, H, N, n] (True = kept) or None;
    keep_scale = 1 / (1 - p); tile_elements None: ``DEFAULT_TILE_ELEMENTS``. Returns out
    [B, H, N, dv] in q's dtype (and the final GSAState)."""
    tile_elements = DEFAULT_TILE_ELEMENTS if tile_elements is None else tile_elements
    B, H, N, d = q.shape
    n, dv, Z, work = log_gates.shape[-1], v.shape[-1], B * H, compute_dtype(q.dtype)
    key_memory, value_memory = (field.detach().to(work).reshape(Z, n, -1) for field in initial_state)
    if N == 0 or Z == 0:  # an empty output on the graph of every input, the state unchanged
        out = v.clone()
        for other in (q, k, log_gates):
            out = out + other.sum().to(out.dtype)
        return (out, GSAState(key_memory.reshape(B, H, n, d), value_memory.reshape(B, H, n, dv))) \
            if return_state else out

    C = min(chunk_size or DEFAULT_CHUNK_SIZE, N)
    pad = (-N) % C
    M = (N + pad) // C

    def chunked(x, value=0.0):  # [B, H, N, e] -> [Z, M, C, e]; padded rows come last and write nothing
        x = torch.nn.functional.pad(x, (0, 0, 0, pad), value=value) if pad else x
        return x.reshape(Z, M, C, x.shape[-1])

    q_c, k_c, v_c, g_c = (chunked(x.to(work)) for x in (q, k, v, log_gates))
    keep_c = None if keep is None else chunked(keep, True)
    per_block = max(1, tile_elements // max(1, Z * C * C * n))
    recompute = torch.is_grad_enabled() and any(x.requires_grad for x in (q, k, v, log_gates))
    outs = []
    for start in range(0, M, per_block):
        part = slice(start, min(start + per_block, M))
        args = (q_c[:, part], k_c[:, part], v_c[:, part], g_c[:, part], key_memory, value_memory,
                None if keep_c is None else keep_c[:, part], scale, keep_scale)
        if recompute:
            out, key_memory, value_memory = checkpoint(_chunks, *args, use_reentrant=False)
        else:
            out, key_memory, value_memory = _chunks(*args)
        outs.append(out)
    out = torch.cat(outs, 1).reshape(B, H, M * C, dv)[:, :, :N].to(q.dtype)
    if not return_state:
        return out
    return out, GSAState(key_memory.reshape(B, H, n, d).detach(), value_memory.reshape(B, H, n, dv).detach())
