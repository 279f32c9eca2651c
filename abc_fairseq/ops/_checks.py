"""Input validation shared by the ABC ops: every failure names the offending argument."""

from typing import Optional

import torch

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def check_qkv_phi(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    phi_logits: torch.Tensor,
    same_length: bool,
    control_name: str = "phi_logits",
) -> None:
    """Check ``q, k, v: [B, H, *, d]`` and ``phi_logits: [B, H, N_k, n]``.

    ``same_length`` demands ``q`` and ``k`` share their length (causal attention). ``control_name``:
    what errors call ``phi_logits`` (the gated ops pass their log gates).
    """
    named = {"q": q, "k": k, "v": v, control_name: phi_logits}
    for name, tensor in named.items():
        if not isinstance(tensor, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
        if tensor.dim() != 4:
            raise ValueError(
                f"{name} must have shape [B, H, N, *] (4 dims), got shape {tuple(tensor.shape)}"
            )
        if tensor.dtype not in FLOAT_DTYPES:
            raise ValueError(f"{name} must be a floating tensor, got dtype {tensor.dtype}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(
            f"q, k and v must share a dtype, got q {q.dtype}, k {k.dtype}, v {v.dtype}"
        )
    devices = {t.device for t in named.values()}
    if len(devices) != 1:
        raise ValueError(f"q, k, v and {control_name} must be on one device, got {sorted(map(str, devices))}")
    B, H, _, d = q.shape
    if k.shape[:2] != (B, H) or v.shape[:2] != (B, H) or phi_logits.shape[:2] != (B, H):
        raise ValueError(
            f"q, k, v and {control_name} must share [B, H]: got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}, "
            f"{control_name} {tuple(phi_logits.shape)}"
        )
    if k.shape[-1] != d:
        raise ValueError(f"q and k must share the head dim: q {tuple(q.shape)}, k {tuple(k.shape)}")
    if v.shape[2] != k.shape[2] or phi_logits.shape[2] != k.shape[2]:
        raise ValueError(
            f"k, v and {control_name} must share the length N: got "
            f"k {tuple(k.shape)}, v {tuple(v.shape)}, {control_name} {tuple(phi_logits.shape)}"
        )
    if same_length and q.shape[2] != k.shape[2]:
        raise ValueError(
            f"causal attention needs q and k of one length: q {tuple(q.shape)}, k {tuple(k.shape)}"
        )
    if phi_logits.shape[-1] < 1:
        raise ValueError(f"{control_name} must have at least one memory slot, got {tuple(phi_logits.shape)}")


def check_padding_mask(key_padding_mask: Optional[torch.Tensor], k: torch.Tensor) -> None:
    """``key_padding_mask: [B, N_k]`` bool, True at padding."""
    if key_padding_mask is None:
        return
    B, _, N, _ = k.shape
    if key_padding_mask.shape != (B, N):
        raise ValueError(
            f"key_padding_mask must have shape [B, N_k] = {(B, N)}, got {tuple(key_padding_mask.shape)}"
        )
    if key_padding_mask.dtype != torch.bool:
        raise ValueError(f"key_padding_mask must be a bool tensor, got dtype {key_padding_mask.dtype}")


def default_scale(scale: Optional[float], head_dim: int) -> float:
    return head_dim ** -0.5 if scale is None else float(scale)


BACKENDS = ("auto", "torch", "triton")


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
