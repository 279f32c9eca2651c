"""Causal gated slot attention over a whole sequence: chunked, in log space, O(N (n + C)) memory.

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

from .._checks import check_backend, check_qkv_phi, default_scale
from ..dropout import dropout_keep_mask
from ..nonfinite import zero_safe_matmul
from ..recurrent import compute_dtype
from ..triton.dispatch import kernel_chunk, kernels_apply, run_kernels, unsupported
from .state import GSAState

DEFAULT_CHUNK_SIZE = 16
# Elements of one [blocks x chunks, C, C, n] scratch tensor (about five are alive at once).
DEFAULT_TILE_ELEMENTS = 1 << 23
# The Triton kernels' chunk (ABC's kernels, which GSA runs on: a [C, C] tile, no [C, C, n] decay),
# shrunk for short sequences and then to what the device's architecture fits.
KERNEL_CHUNK = 64


def _between(C: int, device, dtype) -> torch.Tensor:
    """[C * C, C]: row (t, i) selects the rows m with i < m <= t (a 0/1 matrix)."""
    t, i, m = torch.arange(C, device=device), torch.arange(C, device=device)[:, None], torch.arange(C, device=device)
    selected = (i[None] < m[None, None]) & (m[None, None] <= t[:, None, None])  # [t, i, m]
    return selected.reshape(C * C, C).to(dtype)


def segment_sums(g: torch.Tensor, finite: bool) -> torch.Tensor:
    """g [..., C, n] -> S [..., C, C, n] with S[t, i] = sum_{i < m <= t} g_m (0 for t <= i).

    A sum over the gates between the two rows (never a difference of two long cumulative sums,
    which loses the short segment to rounding), as one product with a 0/1 matrix; with
    ``finite`` False the rows after t are kept out by selection (``zero_safe_matmul``), so a
    non-finite later gate never reaches row t."""
    C = g.shape[-2]
    between = _between(C, g.device, g.dtype)
    if finite:
        sums = torch.matmul(between, g)
    else:
        sums = zero_safe_matmul(between.expand(*g.shape[:-2], C * C, C), g, between.bool())
    return sums.unflatten(-2, (C, C))


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


def causal_gsa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_gates: torch.Tensor,
               scale: Optional[float] = None, chunk_size: Optional[int] = None,
               tile_elements: int = DEFAULT_TILE_ELEMENTS, initial_state: Optional[GSAState] = None,
               return_state: bool = False, dropout_p: float = 0.0,
               dropout_mask: Optional[torch.Tensor] = None,
               backend: str = "auto") -> Union[torch.Tensor, Tuple[torch.Tensor, GSAState]]:
    """Causal gated slot attention (Zhang et al., 2024; equations in ``naive``).

    Args:
        q, k: [B, H, N, d]; v: [B, H, N, dv]; log_gates: [B, H, N, n], g = log a <= 0 (a in (0, 1];
            g = 0 writes nothing and keeps the memory, as padding must).
        scale: multiplies K~_t q_t; defaults to d ** -0.5.
        chunk_size: rows per chunk C; intra-chunk work is O(C (d + n)) per row. Default:
            ``DEFAULT_CHUNK_SIZE`` on the PyTorch path, ``KERNEL_CHUNK`` on the kernels (which
            shrink it for short sequences and to what the device fits).
        tile_elements: bounds the scratch of one block of chunks (elements of a [C, C, n] tensor
            over the block and the batch); at least one chunk is processed at a time.
        initial_state: memories of an earlier prefix to continue from (a constant: no gradient
            flows into it). Default: empty memories.
        return_state: also return the GSAState after the last row.
        dropout_p, dropout_mask: attention dropout on the probabilities over the slots, as in
            ``ops.dropout`` (mask bool [B, H, N, n], True = keep). Pass 0 in evaluation.
        backend: "auto" (the Triton kernels for CUDA tensors when Triton imports, else PyTorch),
            "torch", or "triton" (CPU tensors only under TRITON_INTERPRET=1), as for
            ``causal_abc``; the kernels ignore tile_elements and take finite log gates (the
            strategy's are).

    Returns:
        out [B, H, N, dv] in q's dtype (and the final GSAState if ``return_state``). Gates,
        memories and products are computed in fp32 (fp64 for fp64 inputs).
    """
    check_qkv_phi(q, k, v, log_gates, same_length=True, control_name="log_gates")
    check_backend(backend)
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    if tile_elements < 1:
        raise ValueError(f"tile_elements must be >= 1, got {tile_elements}")
    B, H, N, d = q.shape
    n, dv, Z, work = log_gates.shape[-1], v.shape[-1], B * H, compute_dtype(q.dtype)
    scale = default_scale(scale, d)
    keep = dropout_keep_mask(dropout_p, dropout_mask, (B, H, N, n), q.device)
    if initial_state is None:
        initial_state = GSAState.empty(B, H, n, d, dv, device=q.device, dtype=work)
    elif not isinstance(initial_state, GSAState):
        raise ValueError(f"initial_state must be a GSAState, got {type(initial_state).__name__}")
    initial_state.check(B, H, n, d, dv)
    kernels_chunk = kernel_chunk(chunk_size or KERNEL_CHUNK, N)
    if N > 0 and Z > 0 and kernels_apply(backend, q.device, unsupported(q, v, log_gates, kernels_chunk), "causal_gsa"):
        from ..triton.causal_gated import triton_causal_gsa
        return run_kernels(
            "causal_gsa", backend,
            lambda: triton_causal_gsa(q, k, v, log_gates, scale, kernels_chunk, initial_state,
                                      return_state, keep, 1.0 / (1.0 - dropout_p), backend),
            lambda: causal_gsa(q, k, v, log_gates, scale, chunk_size, tile_elements, initial_state, return_state,
                               dropout_p, keep, backend="torch"))
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
                None if keep_c is None else keep_c[:, part], scale, 1.0 / (1.0 - dropout_p))
        if recompute:
            out, key_memory, value_memory = checkpoint(_chunks, *args, use_reentrant=False)
        else:
            out, key_memory, value_memory = _chunks(*args)
        outs.append(out)
    out = torch.cat(outs, 1).reshape(B, H, M * C, dv)[:, :, :N].to(q.dtype)
    if not return_state:
        return out
    return out, GSAState(key_memory.reshape(B, H, n, d).detach(), value_memory.reshape(B, H, n, dv).detach())
