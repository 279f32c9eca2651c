"""Causal ABC over a whole sequence: chunked, blocked, with a recomputing backward.

The sequence is cut into blocks of ``block_size`` rows (a multiple of ``chunk_size``). Inside a
block all chunks are processed at once with batched matmuls (see ``chunk_math``); between blocks
only the bounded memory is carried: [B, H, n, d + dv] plus the normaliser [B, H, n]. The forward
saves its inputs and that memory at each block boundary; the backward walks the blocks in reverse,
recomputes each block's forward from its saved memory and hands the reverse memory to the block
before. Peak memory is O(B H (N (d + n) + block_size (n + C + n d / C))), never O(B H N n d).
"""

from typing import Optional, Tuple, Union

import torch

from ._checks import check_qkv_phi, default_scale
from .chunk_math import ReverseCarry, block_backward, block_forward
from .recurrent import compute_dtype
from .state import ABCState

DEFAULT_CHUNK_SIZE = 64
DEFAULT_BLOCK_SIZE = 1024


class _CausalABC(torch.autograd.Function):
    """q: [Z, N, d] pre-scaled; kv: [Z, N, d + dv]; logits: [Z, N, n]; N a multiple of chunk;
    carry: [Z, n, d + dv] and g_before: [Z, n], the memory before row 0 (a constant)."""

    @staticmethod
    def forward(ctx, q, kv, logits, carry, g_before, chunk, block):
        Z, N, d = q.shape
        outs, boundaries = [], []
        for start in range(0, N, block):
            rows = slice(start, min(start + block, N))
            boundaries.append((carry, g_before))
            fw = block_forward(q[:, rows], kv[:, rows], logits[:, rows], carry, g_before, chunk)
            outs.append(fw.out.reshape(Z, -1, fw.out.shape[-1]))
            carry, g_before = fw.carry, fw.g_last
            del fw  # only the bounded memory crosses blocks
        ctx.save_for_backward(q, kv, logits, *[t for pair in boundaries for t in pair])
        ctx.chunk, ctx.block = chunk, block
        ctx.mark_non_differentiable(carry, g_before)
        return torch.cat(outs, dim=1), carry, g_before

    @staticmethod
    def backward(ctx, grad_out, _grad_carry, _grad_g):
        q, kv, logits, *flat = ctx.saved_tensors
        boundaries = list(zip(flat[0::2], flat[1::2]))
        grad_out = grad_out.contiguous()
        dq, dkv, dl = torch.empty_like(q), torch.empty_like(kv), torch.empty_like(logits)
        reverse: Optional[ReverseCarry] = None
        starts = range(0, q.shape[1], ctx.block)
        for start, (carry, g_before) in zip(reversed(starts), reversed(boundaries)):
            rows = slice(start, start + ctx.block)
            dq[:, rows], dkv[:, rows], dl[:, rows], reverse = block_backward(
                q[:, rows], kv[:, rows], logits[:, rows], carry, g_before, grad_out[:, rows],
                reverse, ctx.chunk)
        return dq, dkv, dl, None, None, None, None


def causal_abc(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    scale: Optional[float] = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    block_size: int = DEFAULT_BLOCK_SIZE,
    initial_state: Optional[ABCState] = None,
    return_state: bool = False,
) -> Union[torch.Tensor, Tuple[torch.Tensor, ABCState]]:
    """Causal ABC_MLP (Peng et al., Eq. 4 and 12 with the prefix normaliser of Appendix B.1).

    Row t writes k_t and v_t into n slots with weights exp(l_t) and reads its own prefix memory:
        K~_t = sum_{i<=t} exp(l_i) k_i / sum_{i<=t} exp(l_i)   (per slot; likewise V~_t)
        out_t = V~_t^T softmax(scale * K~_t q_t)

    Args:
        q, k: [B, H, N, d]; v: [B, H, N, dv]; phi_logits: [B, H, N, n], the logits W_phi x before
            exp (finite, of any magnitude).
        scale: multiplies K~_t q_t; defaults to d ** -0.5.
        chunk_size: rows per chunk C; intra-chunk work is O(C (d + n)) per row.
        block_size: rows processed at once, bounding the temporaries (rounded to a multiple of C).
        initial_state: memory of an earlier prefix to continue from, e.g. a prompt processed
            before. It is a constant: no gradient flows into it. Default: an empty memory.
        return_state: also return the ABCState after the last row, to continue decoding with
            ``causal_abc_step`` or another ``causal_abc`` call.

    Returns:
        out [B, H, N, dv] in q's dtype (and the final ABCState if ``return_state``). Normalisers,
        memories and products are computed in fp32 (fp64 for fp64 inputs) whatever q's dtype.
    """
    check_qkv_phi(q, k, v, phi_logits, same_length=True)
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    B, H, N, d = q.shape
    n, dv = phi_logits.shape[-1], v.shape[-1]
    Z = B * H
    work = compute_dtype(q.dtype)
    scale = default_scale(scale, d)

    chunk = min(chunk_size, N)
    block = max(chunk, (block_size // chunk) * chunk)
    pad = (-N) % chunk
    # Padded rows come after every real row and write nothing (logit -inf).
    pad_rows = lambda x, value: torch.nn.functional.pad(x, (0, 0, 0, pad), value=value) if pad else x  # noqa: E731
    q_flat = pad_rows(q.to(work).reshape(Z, N, d) * scale, 0.0)
    kv_flat = pad_rows(torch.cat([k.to(work), v.to(work)], dim=-1).reshape(Z, N, d + dv), 0.0)
    logits = pad_rows(phi_logits.to(work).reshape(Z, N, n), float("-inf"))

    if initial_state is None:
        carry = q_flat.new_zeros(Z, n, d + dv)
        g_before = q_flat.new_full((Z, n), float("-inf"))
    else:
        expected = ((B, H, n, d), (B, H, n, dv), (B, H, n))
        if tuple(tuple(t.shape) for t in initial_state) != expected:
            raise ValueError(
                "initial_state does not match the inputs: got shapes "
                f"{[tuple(t.shape) for t in initial_state]}, expected {list(expected)}")
        carry = torch.cat([initial_state.key_memory, initial_state.value_memory], dim=-1)
        carry = carry.detach().to(work).reshape(Z, n, d + dv)
        g_before = initial_state.log_normalizer.detach().to(work).reshape(Z, n)

    out, carry, g_last = _CausalABC.apply(q_flat, kv_flat, logits, carry, g_before, chunk, block)
    out = out[:, :N].reshape(B, H, N, dv).to(q.dtype)
    if not return_state:
        return out
    carry = carry.reshape(B, H, n, d + dv)
    return out, ABCState(carry[..., :d], carry[..., d:], g_last.reshape(B, H, n))
