"""Causal ABC's public ops: their arguments checked once, then run by ``ops.backend`` on the
Triton kernels (``causal.triton``) or the PyTorch path (``causal.chunk``, ``causal.recurrent``)."""

from typing import Optional, Tuple, Union

import torch

from ..backend import check_backend, dispatch, kernel_chunk, unsupported
from ..utils import (
    check_qkv_phi,
    check_state,
    check_state_dtype,
    check_tiles,
    compute_dtype,
    default_scale,
    dropout_keep_mask,
)
from .chunk import DEFAULT_CHUNK_SIZE, chunk_causal_abc
from .recurrent import recurrent_causal_abc_step
from .state import ABCState, check_in_place


def _empty_result(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, logits: torch.Tensor,
                  initial_state: Optional[ABCState], return_state: bool):
    """No rows (N = 0) or no sequences (B or H = 0): an empty output, and the state unchanged."""
    # [B, H, N, dv] with no element, on the autograd graph of every input like a real output
    # (their gradients are zeros, not None).
    out = v.clone()
    for other in (q, k, logits):
        out = out + other.sum().to(out.dtype)
    if not return_state:
        return out
    B, H, _, d = q.shape
    n, work = logits.shape[-1], compute_dtype(q.dtype)
    if initial_state is None:
        return out, ABCState.empty(B, H, n, d, v.shape[-1], device=q.device, dtype=work)
    return out, ABCState(*(t.detach().to(work) for t in initial_state))


def causal_abc(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    scale: Optional[float] = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    block_size: Optional[int] = None,
    tile_rows: Optional[int] = None,
    initial_state: Optional[ABCState] = None,
    return_state: bool = False,
    dropout_p: float = 0.0,
    dropout_mask: Optional[torch.Tensor] = None,
    backend: str = "auto",
    state_dtype: Optional[torch.dtype] = None,
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
        block_size: rows of one sequence processed at once (rounded down to a multiple of C);
            default: the whole sequence, or ``tile_rows`` rows of it if it is longer.
        tile_rows: rows over the whole batch (sequences x block_size) processed at once; with
            block_size it bounds the scratch memory, whatever the batch size and length.
            Default: ``default_tile_rows(q.device)``.
        initial_state: memory of an earlier prefix to continue from, e.g. a prompt processed
            before. It is a constant: no gradient flows into it. Default: an empty memory.
        return_state: also return the ABCState after the last row, to continue decoding with
            ``causal_abc_step`` or another ``causal_abc`` call.
        dropout_p: attention dropout on the probabilities over the slots, in [0, 1): the output
            reads V~_t^T (P_t * M_t / (1 - p)) (see ``ops.utils``). Pass 0 in evaluation.
        dropout_mask: bool [B, H, N, n], True = keep: the mask M (only with dropout_p > 0);
            drawn from torch's RNG when dropout_p > 0 and none is given.
        backend: "auto" (the Triton kernels for CUDA tensors when Triton imports, else PyTorch),
            "torch", or "triton" (CPU tensors only under TRITON_INTERPRET=1). The kernels ignore
            block_size and tile_rows; shapes they cannot take fall back to PyTorch (logged once).
        state_dtype: the dtype in which the kernels keep each chunk's entering memory [N / C, n,
            d + dv] per sequence-head between forward and backward: float32 (None, the default),
            float16 or bfloat16 (half the bytes; the memories are normalised, |entries| <= max |k|,
            |v|, but lose precision). The running memory and every product accumulate in fp32
            whatever it is; the PyTorch path computes in fp32 and ignores it.

    Returns:
        out [B, H, N, dv] in q's dtype (and the final ABCState if ``return_state``). Normalisers,
        memories and products are computed in fp32 (fp64 for fp64 inputs) whatever q's dtype.
    """
    check_qkv_phi(q, k, v, phi_logits, same_length=True)
    check_backend(backend)
    check_tiles(chunk_size, block_size, tile_rows)
    state_dtype = check_state_dtype(state_dtype)
    B, H, N, d = q.shape
    n, dv = phi_logits.shape[-1], v.shape[-1]
    scale = default_scale(scale, d)
    if initial_state is not None:
        check_state(initial_state, ABCState, "initial_state", B, H, n, d, dv)
    keep_mask = dropout_keep_mask(dropout_p, dropout_mask, (B, H, N, n), q.device)
    keep_scale = 1.0 / (1.0 - dropout_p)
    if N == 0 or B * H == 0:
        return _empty_result(q, k, v, phi_logits, initial_state, return_state)
    chunk = kernel_chunk(chunk_size, N)
    reason = unsupported(q.dtype, chunk_size, N, head_dim=d, value_dim=dv, memory_size=n)
    return dispatch(
        "causal_abc", backend, q.device, reason, chunk_causal_abc,
        lambda: chunk_causal_abc(q, k, v, phi_logits, scale, chunk_size, block_size, tile_rows,
                                 initial_state, return_state, keep_mask, keep_scale),
        "causal.triton.function",
        lambda kernels, guard: kernels.triton_causal_abc(q, k, v, phi_logits, scale, chunk, initial_state,
                                                         return_state, keep_mask, keep_scale, guard,
                                                         state_dtype=state_dtype))


def causal_abc_step(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    state: Optional[ABCState] = None,
    scale: Optional[float] = None,
    backend: str = "auto",
    in_place: bool = False,
) -> Tuple[torch.Tensor, ABCState]:
    """One decoding step of causal ABC.

    q, k: [B, H, 1, d]; v: [B, H, 1, dv]; phi_logits: [B, H, 1, n]; state: the ABCState of the
    prefix, or None at the first token. Returns (out [B, H, 1, dv] in q's dtype, new ABCState).
    Feeding a sequence token by token gives the outputs of ``causal_abc`` on the whole sequence.
    backend: "auto" (one fused Triton launch for CUDA tensors when Triton imports), "torch" or
    "triton" (see ``causal_abc``).
    in_place: write the next state into ``state``'s tensors (fp32, fp64 for fp64 inputs) and
    return them: no new state tensor, the same addresses every step, no host synchronisation
    (what a CUDA graph of the step needs). The state passed is then consumed. At the first token
    (``state`` None) the state is allocated once.
    """
    check_qkv_phi(q, k, v, phi_logits, same_length=True)
    check_backend(backend)
    if q.shape[2] != 1:
        raise ValueError(f"causal_abc_step takes one token: q has shape {tuple(q.shape)}")
    B, H, _, d = q.shape
    n, dv = phi_logits.shape[-1], v.shape[-1]
    if state is None:
        state = ABCState.empty(B, H, n, d, dv, device=q.device, dtype=compute_dtype(q.dtype))
    else:
        check_state(state, ABCState, "state", B, H, n, d, dv)
        if in_place:
            check_in_place(state, compute_dtype(q.dtype))
    scale = default_scale(scale, d)
    reason = unsupported(q.dtype, head_dim=d, value_dim=dv, memory_size=n)
    torch_path = lambda: recurrent_causal_abc_step(q, k, v, phi_logits, state, scale, in_place)  # noqa: E731
    if B * H == 0:
        return torch_path()
    return dispatch("causal_abc_step", backend, q.device, reason, recurrent_causal_abc_step, torch_path,
                    "causal.triton.recurrent",
                    lambda kernels, _guard: kernels.causal_step(q, k, v, phi_logits, state, scale, in_place))
