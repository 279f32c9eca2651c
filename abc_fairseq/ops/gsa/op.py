"""Causal gated slot attention's public ops: their arguments checked once, then run by
``ops.backend`` on ABC's causal Triton kernels (``gsa.triton``) or the PyTorch path
(``gsa.chunk``, ABC's fused chunked op with GSA's geometry; ``gsa.recurrent``)."""

from typing import Optional, Tuple, Union

import torch

from ..backend import check_backend, dispatch, kernel_chunk, unsupported
from ..causal.state import check_in_place
from ..utils import (
    check_qkv_phi,
    check_state,
    check_state_dtype,
    check_tiles,
    compute_dtype,
    default_scale,
    dropout_keep_mask,
)
from .chunk import chunk_causal_gsa
from .recurrent import recurrent_causal_gsa_step
from .state import GSAState

# The Triton kernels' chunk (ABC's kernels, which GSA runs on: a [C, C] tile, no [C, C, n] decay),
# shrunk for short sequences and then to what the device's architecture fits.
KERNEL_CHUNK = 64


def _state(state: Optional[GSAState], B: int, H: int, n: int, d: int, dv: int, q: torch.Tensor,
           name: str) -> GSAState:
    """``state`` checked against the inputs, or the empty state when None."""
    if state is None:
        return _empty_state(q, B, H, n, d, dv)
    check_state(state, GSAState, name, B, H, n, d, dv)
    return state


def _empty_state(q: torch.Tensor, B: int, H: int, n: int, d: int, dv: int) -> GSAState:
    return GSAState.empty(B, H, n, d, dv, device=q.device, dtype=compute_dtype(q.dtype))


def _empty_result(q, k, v, log_gates, state: GSAState, return_state: bool):
    """No rows (or no sequences): an empty output on the graph of every input, the state unchanged."""
    out = v.clone()
    for other in (q, k, log_gates):
        out = out + other.sum().to(out.dtype)
    return (out, GSAState(*(field.detach() for field in state))) if return_state else out


def causal_gsa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_gates: torch.Tensor,
               scale: Optional[float] = None, chunk_size: Optional[int] = None,
               block_size: Optional[int] = None, tile_rows: Optional[int] = None,
               initial_state: Optional[GSAState] = None,
               return_state: bool = False, dropout_p: float = 0.0,
               dropout_mask: Optional[torch.Tensor] = None,
               backend: str = "auto", state_dtype: Optional[torch.dtype] = None
               ) -> Union[torch.Tensor, Tuple[torch.Tensor, GSAState]]:
    """Causal gated slot attention (Zhang et al., 2024; equations in ``naive``).

    Args:
        q, k: [B, H, N, d]; v: [B, H, N, dv]; log_gates: [B, H, N, n], g = log a <= 0 (a in (0, 1];
            g = 0 writes nothing and keeps the memory, as padding must).
        scale: multiplies K~_t q_t; defaults to d ** -0.5.
        chunk_size: rows per chunk C; intra-chunk work is O(C (d + n)) per row. Default:
            ``chunk.DEFAULT_CHUNK_SIZE`` on the PyTorch path, ``KERNEL_CHUNK`` on the kernels
            (which shrink it for short sequences and to what the device fits).
        block_size, tile_rows: rows of one sequence, and rows over the batch, processed at once
            on the PyTorch path (as ``causal_abc``'s: they bound the scratch memory).
        initial_state: memories of an earlier prefix to continue from (a constant: no gradient
            flows into it). Default: empty memories.
        return_state: also return the GSAState after the last row.
        dropout_p, dropout_mask: attention dropout on the probabilities over the slots, as in
            ``ops.dropout`` (mask bool [B, H, N, n], True = keep). Pass 0 in evaluation.
        backend: "auto" (the Triton kernels for CUDA tensors when Triton imports, else PyTorch),
            "torch", or "triton" (CPU tensors only under TRITON_INTERPRET=1), as for
            ``causal_abc``; the kernels ignore block_size and tile_rows and take finite log gates
            (the strategy's are).
        state_dtype: the kernels' chunk-state dtype, as for ``causal_abc`` (None: float32).

    Returns:
        out [B, H, N, dv] in q's dtype (and the final GSAState if ``return_state``). Gates,
        memories and products are computed in fp32 (fp64 for fp64 inputs).
    """
    check_qkv_phi(q, k, v, log_gates, same_length=True, control_name="log_gates")
    check_backend(backend)
    check_tiles(chunk_size, block_size, tile_rows)
    state_dtype = check_state_dtype(state_dtype)
    B, H, N, d = q.shape
    n, dv = log_gates.shape[-1], v.shape[-1]
    scale = default_scale(scale, d)
    keep = dropout_keep_mask(dropout_p, dropout_mask, (B, H, N, n), q.device)
    keep_scale = 1.0 / (1.0 - dropout_p)
    if initial_state is not None:
        check_state(initial_state, GSAState, "initial_state", B, H, n, d, dv)
    # The PyTorch path takes the empty state as tensors; the kernels take None (they start from
    # zeros, with nothing written for them).
    filled = lambda: _empty_state(q, B, H, n, d, dv) if initial_state is None else initial_state  # noqa: E731
    if N == 0 or B * H == 0:
        return _empty_result(q, k, v, log_gates, filled(), return_state)
    torch_path = lambda: chunk_causal_gsa(q, k, v, log_gates, scale, chunk_size, block_size, tile_rows,  # noqa: E731
                                          filled(), return_state, keep, keep_scale)
    chunk = kernel_chunk(chunk_size or KERNEL_CHUNK, N)
    reason = unsupported(q.dtype, chunk, N, head_dim=d, value_dim=dv, memory_size=n)
    return dispatch("causal_gsa", backend, q.device, reason, chunk_causal_gsa, torch_path,
                    "gsa.triton.function",
                    lambda kernels, guard: kernels.triton_causal_gsa(
                        q, k, v, log_gates, scale, chunk, initial_state, return_state, keep, keep_scale, guard,
                        state_dtype=state_dtype))


def causal_gsa_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_gates: torch.Tensor,
                    state: Optional[GSAState] = None, scale: Optional[float] = None, backend: str = "auto",
                    in_place: bool = False) -> Tuple[torch.Tensor, GSAState]:
    """One decoding step of causal GSA (see ``naive`` for the equations).

    q, k: [B, H, 1, d]; v: [B, H, 1, dv]; log_gates: [B, H, 1, n] (log a <= 0; 0 at padding keeps
    the state unchanged); state: the GSAState of the prefix, or None (empty). Returns the output
    [B, H, 1, dv] in q's dtype and the new state (float32, float64 for float64 inputs).
    backend: "auto" (ABC's fused step kernel with GSA's gates for CUDA tensors when Triton
    imports), "torch" or "triton" (see ``causal_gsa``).
    in_place: write the next state into ``state``'s tensors and return them (no new state tensor,
    fixed addresses, no host synchronisation: ready for a CUDA graph); the state passed is consumed.
    """
    check_qkv_phi(q, k, v, log_gates, same_length=True, control_name="log_gates")
    check_backend(backend)
    if q.shape[2] != 1:
        raise ValueError(f"causal_gsa_step takes one token: q has shape {tuple(q.shape)}")
    B, H, _, d = q.shape
    n, dv = log_gates.shape[-1], v.shape[-1]
    fresh = state is None
    state = _state(state, B, H, n, d, dv, q, "state")
    if in_place and not fresh:
        check_in_place(state, compute_dtype(q.dtype))
    scale = default_scale(scale, d)
    torch_path = lambda: recurrent_causal_gsa_step(q, k, v, log_gates, state, scale, in_place)  # noqa: E731
    if B * H == 0:
        return torch_path()
    reason = unsupported(q.dtype, head_dim=d, value_dim=dv, memory_size=n)
    return dispatch("causal_gsa_step", backend, q.device, reason, recurrent_causal_gsa_step, torch_path,
                    "causal.triton.recurrent",
                    lambda kernels, _guard: kernels.gsa_step(q, k, v, log_gates, state, scale, in_place))
