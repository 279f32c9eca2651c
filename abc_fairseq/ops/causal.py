"""Causal ABC over a whole sequence: chunked, blocked, with a recomputing backward.

The sequence is cut into blocks of ``block_size`` rows (a multiple of ``chunk_size``). Inside a
block all chunks are processed at once with batched matmuls (see ``chunk_math``); between blocks
only the bounded memory is carried: [B, H, n, d + dv] plus the normaliser [B, H, n]. The forward
saves the inputs and that memory at each block boundary; the backward walks the blocks in reverse,
recomputes each block's forward from its saved memory and sends the reverse memory to the block
before. Peak memory is therefore O(B H (N (d + n) + block_size (n + C))), never O(B H N n d).
"""

from typing import Optional, Tuple, Union

import torch

from ._checks import check_qkv_phi, default_scale
from .chunk_math import ReverseCarry, block_backward, block_forward
from .recurrent import compute_dtype
from .state import ABCState

DEFAULT_BLOCK_SIZE = 1024


def _pad_rows(x: torch.Tensor, rows: int, value: float) -> torch.Tensor:
    if rows == 0:
        return x
    return torch.nn.functional.pad(x, (0, 0, 0, rows), value=value)


class _CausalABC(torch.autograd.Function):
    """Inputs flattened to [Z = B * H, N, *], already in the working dtype and padded."""

    @staticmethod
    def forward(ctx, q, k, v, logits, carry_kv, g_before, scale, chunk, block):
        Z, N, d = q.shape
        outs, carries = [], []
        for start in range(0, N, block):
            stop = min(start + block, N)
            carries.append((carry_kv, g_before))
            fw = block_forward(q[:, start:stop], k[:, start:stop], v[:, start:stop],
                               logits[:, start:stop], carry_kv, g_before, scale, chunk)
            outs.append(fw.out.reshape(Z, stop - start, v.shape[-1]))
            carry_kv, g_before = fw.carry_kv, fw.g_last
            del fw
        ctx.save_for_backward(q, k, v, logits, *[t for pair in carries for t in pair])
        ctx.scale, ctx.chunk, ctx.block = scale, chunk, block
        ctx.mark_non_differentiable(carry_kv, g_before)
        return torch.cat(outs, dim=1), carry_kv, g_before

    @staticmethod
    def backward(ctx, grad_out, _grad_carry, _grad_g):
        q, k, v, logits, *flat = ctx.saved_tensors
        carries = list(zip(flat[0::2], flat[1::2]))
        N = q.shape[1]
        dq, dk, dv, dl = (torch.empty_like(t) for t in (q, k, v, logits))
        reverse: Optional[ReverseCarry] = None
        starts = list(range(0, N, ctx.block))
        for start, (carry_kv, g_before) in zip(reversed(starts), reversed(carries)):
            stop = min(start + ctx.block, N)
            rows = slice(start, stop)
            dq[:, rows], dk[:, rows], dv[:, rows], dl[:, rows], reverse = block_backward(
                q[:, rows], k[:, rows], v[:, rows], logits[:, rows], carry_kv, g_before,
                grad_out[:, rows], reverse, ctx.scale, ctx.chunk)
        return dq, dk, dv, dl, None, None, None, None, None


def causal_abc(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    scale: Optional[float] = None,
    chunk_size: int = 64,
    block_size: int = DEFAULT_BLOCK_SIZE,
    initial_state: Optional[ABCState] = None,
    return_state: bool = False,
) -> Union[torch.Tensor, Tuple[torch.Tensor, ABCState]]:
    """Causal ABC_MLP (Peng et al., Eq. 4 and 12 with the prefix normaliser of Appendix B.1).

    Row t writes k_t, v_t into n slots with weights exp(l_t) and reads its own prefix memory:
        K~_t = sum_{i<=t} exp(l_i) k_i / sum_{i<=t} exp(l_i)   (per slot; likewise V~_t)
        out_t = V~_t^T softmax(scale * K~_t q_t)

    Args:
        q, k: [B, H, N, d]; v: [B, H, N, dv]; phi_logits: [B, H, N, n], the logits W_phi x before
            exp (any finite magnitude).
        scale: multiplies K~_t q_t; defaults to d ** -0.5.
        chunk_size: rows per chunk C (intra-chunk work is O(C (d + n)) per row).
        block_size: rows processed at once; bounds the temporaries (rounded up to a multiple of C).
        initial_state: memory of an earlier prefix to continue from (treated as a constant:
            no gradient flows into it). The default is an empty memory.
        return_state: also return the ABCState after the last row, for decoding to continue.

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
    work = compute_dtype(q.dtype)
    scale = default_scale(scale, d)

    chunk = min(chunk_size, N)
    block = max(chunk, (block_size // chunk) * chunk)
    pad = (-N) % chunk
    flat = lambda x: _pad_rows(x.to(work).reshape(B * H, N, x.shape[-1]), pad, 0.0)  # noqa: E731
    # Padded rows get logit -inf: they write nothing and come after every real row.
    logits = _pad_rows(phi_logits.to(work).reshape(B * H, N, n), pad, float("-inf"))

    if initial_state is None:
        carry_kv = torch.zeros(B * H, n, d + dv, dtype=work, device=q.device)
        g_before = torch.full((B * H, n), float("-inf"), dtype=work, device=q.device)
    else:
        if initial_state.key_memory.shape != (B, H, n, d) or initial_state.value_memory.shape != (B, H, n, dv):
            raise ValueError(
                f"initial_state does not match the inputs: key_memory "
                f"{tuple(initial_state.key_memory.shape)}, value_memory "
                f"{tuple(initial_state.value_memory.shape)}; expected {(B, H, n, d)} and {(B, H, n, dv)}")
        carry_kv = torch.cat([initial_state.key_memory, initial_state.value_memory], dim=-1)
        carry_kv = carry_kv.detach().to(work).reshape(B * H, n, d + dv)
        g_before = initial_state.log_normalizer.detach().to(work).reshape(B * H, n)

    out, carry_kv, g_last = _CausalABC.apply(flat(q), flat(k), flat(v), logits, carry_kv,
                                             g_before, scale, chunk, block)
    out = out[:, :N].reshape(B, H, N, dv).to(q.dtype)
    if not return_state:
        return out
    carry_kv = carry_kv.reshape(B, H, n, d + dv)
    state = ABCState(carry_kv[..., :d], carry_kv[..., d:], g_last.reshape(B, H, n))
    return out, state
