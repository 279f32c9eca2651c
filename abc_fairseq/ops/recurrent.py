"""Causal ABC as a recurrence: one token in, one output out, O(n d) work and state per head."""

from typing import Optional, Tuple

import torch

from ._checks import check_backend, check_qkv_phi, default_scale
from .state import ABCState
from .triton.dispatch import kernels_apply, run_kernels, unsupported_sizes


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """Normalisers, phi and memories are kept in fp32 (fp64 stays fp64)."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def causal_abc_step(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    state: Optional[ABCState] = None,
    scale: Optional[float] = None,
    backend: str = "auto",
) -> Tuple[torch.Tensor, ABCState]:
    """One decoding step of causal ABC.

    q, k, v: [B, H, 1, d]; phi_logits: [B, H, 1, n]; state: the ABCState of the prefix, or None
    at the first token. Returns (out [B, H, 1, d] in q's dtype, new ABCState).
    Feeding a sequence token by token gives the outputs of ``causal_abc`` on the whole sequence.
    backend: "auto" (one fused Triton launch for CUDA tensors when Triton imports), "torch" or
    "triton" (see ``causal_abc``).
    """
    check_qkv_phi(q, k, v, phi_logits, same_length=True)
    check_backend(backend)
    if q.shape[2] != 1:
        raise ValueError(f"causal_abc_step takes one token: q has shape {tuple(q.shape)}")
    B, H, _, d = q.shape
    n = phi_logits.shape[-1]
    work = compute_dtype(q.dtype)
    if state is None:
        state = ABCState.empty(B, H, n, d, v.shape[-1], device=q.device, dtype=work)
    elif not isinstance(state, ABCState):
        raise ValueError(f"state must be an ABCState, got {type(state).__name__}")
    elif state.key_memory.shape != (B, H, n, d) or state.value_memory.shape != (B, H, n, v.shape[-1]):
        raise ValueError(
            f"state does not match the inputs: key_memory {tuple(state.key_memory.shape)}, "
            f"value_memory {tuple(state.value_memory.shape)}; expected {(B, H, n, d)} and "
            f"{(B, H, n, v.shape[-1])}"
        )
    scale = default_scale(scale, d)
    reason = unsupported_sizes(q.dtype, head_dim=d, value_dim=v.shape[-1], memory_size=n)
    if B * H and kernels_apply(backend, q.device, reason, "causal_abc_step"):
        from .triton.step_kernel import causal_step
        return run_kernels("causal_abc_step", backend, lambda: causal_step(q, k, v, phi_logits, state, scale),
                           lambda: causal_abc_step(q, k, v, phi_logits, state, scale, backend="torch"))
    # One fused multiply-add per memory: K~' = exp(g - g') K~ + exp(l - g') k with g' = logaddexp(g, l).
    # (Not lerp(K~, k, exp(l - g')): the two weights sum to 1 only while the normaliser can hold
    # log 2, which fails for runs of padding at PAD_LOGIT, where the parallel form sums.)
    logits = phi_logits[:, :, 0].to(work)  # [B, H, n]
    g_new = torch.logaddexp(state.log_normalizer, logits)
    keep = torch.exp(state.log_normalizer - g_new).unsqueeze(-1)  # 0 at the first token
    write = torch.exp(logits - g_new).unsqueeze(-1)  # this token's phi, <= 1
    key_memory = torch.addcmul(state.key_memory * keep, write, k.to(work))
    value_memory = torch.addcmul(state.value_memory * keep, write, v.to(work))
    # The scale goes on the d-vector q, not on the n x d memory; matmul keeps [B, H] as batch.
    scores = torch.matmul(key_memory, (q.to(work) * scale).transpose(-1, -2))  # [B, H, n, 1]
    attn = torch.softmax(scores, dim=-2)
    out = torch.matmul(attn.transpose(-1, -2), value_memory)  # [B, H, 1, d]
    return out.to(q.dtype), ABCState(key_memory, value_memory, g_new)
