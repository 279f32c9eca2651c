"""Small helpers shared by the strategies: work dtype, padding logit, token ranks, compaction, masked softmax."""

from typing import Optional, Tuple

import torch

from ..ops.utils import compute_dtype  # noqa: F401 (sums, normalisers, states: fp32; fp64 stays)

# Logit given to padding before exp-based control (causal ABC). Finite on purpose: the causal op
# anchors exponents on the prefix normaliser, and a prefix made only of -inf (left padding) would
# give inf - inf = NaN. With this value exp(PAD_LOGIT - g) is exactly 0 (fp32 and fp64) once any
# real token has been seen, so padding never reaches a real token's memory; rows that only see
# padding stay finite (and are ignored).
PAD_LOGIT = -1e30


def advance_in_place(previous) -> bool:
    """Whether a decoding step may write the next state over ``previous`` (an ABCState or
    GSAState): in inference (no autograd, no state with history), where the caller's state is used
    up by the step; under autograd every step keeps its own state, whose history the gradients need."""
    return previous is not None and not torch.is_grad_enabled() and not any(f.requires_grad for f in previous)


def all_valid(valid: Optional[torch.Tensor], batch: int, length: int, device) -> torch.Tensor:
    """``valid`` [B, N] bool (True at real tokens), or all True when None."""
    if valid is None:
        return torch.ones(batch, length, dtype=torch.bool, device=device)
    return valid


def token_ranks(valid: torch.Tensor) -> torch.Tensor:
    """Rank of each token among the real tokens of its sequence, from 0. valid: [B, N] -> [B, N]
    long; padding gets the rank of the next real token (unused: padding writes nothing)."""
    return valid.long().cumsum(1) - valid.long()


def masked_softmax(scores: torch.Tensor, allowed: Optional[torch.Tensor]) -> torch.Tensor:
    """Softmax over the last dim restricted to ``allowed`` (broadcastable bool); a row with nothing
    allowed is all zeros (not NaN), and so is its gradient."""
    if allowed is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~allowed, float("-inf"))
    top = scores.amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top)).detach()
    weights = torch.exp(scores - top)
    return weights / weights.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(weights.dtype).tiny)


def compaction(valid: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Order that moves every sequence's real tokens to its front (keeping their order) and its
    padding to its end. valid: [B, N] -> (order [B, N] long, lengths [B]).

    ``gather(x, order)`` left-aligns; ``scatter(order, y)`` puts results back in place. Strategies
    whose memory depends on token adjacency (windows, pooled blocks) work on left-aligned tokens.
    """
    order = torch.sort((~valid).to(torch.int8), dim=1, stable=True).indices
    return order, valid.sum(dim=1)


def gather_rows(x: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """x [B, H, N, e] reordered along N by order [B, N]."""
    index = order[:, None, :, None].expand(x.shape[0], x.shape[1], -1, x.shape[-1])
    return x.gather(2, index)


def slots_of_ranks(k: torch.Tensor, v: torch.Tensor, order: torch.Tensor, rank: torch.Tensor,
                   filled: torch.Tensor, work: torch.dtype) -> dict:
    """A slot memory holding real tokens by rank: slot j of sequence b holds the real token of rank
    ``rank[b, j]`` where ``filled[b, j]`` (zeros elsewhere). k [B, H, N, d], v [B, H, N, dv], order
    [B, N] (``compaction``'s: real tokens first), rank / filled [B, n] -> {"key_memory" [B, H, n, d],
    "value_memory" [B, H, n, dv], "written" [B, H, n]} in ``work``."""
    B, H, N = k.shape[:3]
    at = order.gather(1, rank.clamp(0, max(N - 1, 0)))  # where each slot's token sits in the input
    memory = {"written": filled[:, None, :].expand(B, H, -1).to(work)}
    for name, rows in (("key_memory", k), ("value_memory", v)):
        memory[name] = gather_rows(rows, at).to(work).masked_fill(~filled[:, None, :, None], 0.0)
    return memory


def scatter_rows(y: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """Inverse of ``gather_rows``: y [B, H, N, e] put back at positions ``order``."""
    index = order[:, None, :, None].expand(y.shape[0], y.shape[1], -1, y.shape[-1])
    return torch.zeros_like(y).scatter(2, index, y)


def zero_padding_rows(out: torch.Tensor, valid: Optional[torch.Tensor]) -> torch.Tensor:
    """out [B, H, N, d] with the rows of padding tokens set to 0."""
    if valid is None:
        return out
    return out.masked_fill(~valid[:, None, :, None], 0.0)


def on_real_rows(q, k, v, valid: Optional[torch.Tensor], keep: Optional[torch.Tensor], attend) -> torch.Tensor:
    """``attend(q, k, v, lengths, keep)`` over every sequence's real tokens moved to its front (in
    the work dtype), its output put back in place: q, k, v [B, H, N, *], valid [B, N] or None, keep
    [B, H, N, n] (dropout keep mask in input row order) or None. Returns [B, H, N, dv] in q's
    dtype, padding rows 0."""
    out_dtype, work = q.dtype, compute_dtype(q.dtype)
    valid = all_valid(valid, q.shape[0], q.shape[2], q.device)
    order, lengths = compaction(valid)
    if keep is not None:
        keep = gather_rows(keep, order)
    q, k, v = (gather_rows(t.to(work), order) for t in (q, k, v))
    return zero_padding_rows(scatter_rows(attend(q, k, v, lengths, keep), order), valid).to(out_dtype)
