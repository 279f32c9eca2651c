"""Helpers shared by every op family: argument checks, the work dtype, attention dropout over
the slots, causality for non-finite inputs, reusable CPU scratch memory, and environment
variables set for a scope (the kernels' overrides, Triton's switches)."""

import contextlib
import math
import os
import threading
from typing import Dict, Iterator, Optional, Sequence, Tuple

import torch


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """Normalisers, phi and memories are kept in fp32 (fp64 stays fp64)."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def unit_last_stride(x: torch.Tensor) -> torch.Tensor:
    """``x``, or a contiguous copy when its last dimension is strided (what the kernels index)."""
    return x if x.stride(-1) == 1 else x.contiguous()


def differentiable(*tensors: torch.Tensor) -> bool:
    """Whether autograd records an op on ``tensors``: grad mode on and one of them requiring grad.
    The kernels' launchers skip their autograd Function otherwise (scoring, decoding)."""
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


@contextlib.contextmanager
def scoped_environment(**values: str) -> Iterator[None]:
    """Within: ``os.environ`` holds ``values``; after, each name is as it was (unset included)."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        os.environ.update(values)  # inside: a value that is no str fails part-way, and is undone
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# ---- argument checks: every failure names the offending argument ----

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


def check_tiles(chunk_size: Optional[int], block_size: Optional[int], tile_rows: Optional[int]) -> None:
    """ValueError naming the argument unless each of the chunked ops' tile sizes is None or >= 1."""
    for name, value in (("chunk_size", chunk_size), ("block_size", block_size), ("tile_rows", tile_rows)):
        if value is not None and value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")


STATE_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def check_state_dtype(state_dtype: Optional[torch.dtype]) -> torch.dtype:
    """The kernels' chunk-state dtype: ``state_dtype`` (None: fp32), else a ValueError naming it."""
    if state_dtype is None:
        return torch.float32
    if state_dtype not in STATE_DTYPES:
        raise ValueError(f"state_dtype must be one of float32, float16, bfloat16 (or None), got {state_dtype}")
    return state_dtype


def default_scale(scale: Optional[float], head_dim: int) -> float:
    return head_dim ** -0.5 if scale is None else float(scale)


def check_state(state, state_type: type, name: str, B: int, H: int, n: int, d: int, dv: int) -> None:
    """``state`` (an ``ABCState`` or ``GSAState``, as ``state_type``) of the inputs' sizes, else a
    ValueError naming the argument ``name``."""
    if not isinstance(state, state_type):
        article = "an" if state_type.__name__[0] in "AEIOU" else "a"
        raise ValueError(f"{name} must be {article} {state_type.__name__}, got {type(state).__name__}")
    state.check(B, H, n, d, dv, name)


# ---- attention dropout over the slots ----
# Attention dropout over the memory slots, shared by every form of the ops.
#
# ABC's counterpart of the attention weights that softmax attention drops are the probabilities
# over the n slots, P_t = softmax(scale * K~_t q_t). With dropout rate p and a keep mask M_t in
# {0, 1}^n (True = keep, Bernoulli(1 - p)), the output reads
#     out_t = V~_t^T (P_t * M_t / (1 - p))
# while the softmax and the prefix normalisers are unchanged. E[out_t] over masks is the output
# without dropout. Callers apply it in training only (pass dropout_p = 0 in evaluation).
def dropout_keep_mask(dropout_p: float, dropout_mask: Optional[torch.Tensor], shape: Sequence[int],
                      device: torch.device) -> Optional[torch.Tensor]:
    """Validate the dropout arguments of an op and return its keep mask, or None for no dropout.

    dropout_p: in [0, 1). dropout_mask: bool [B, H, M, n] (``shape``), True = keep; only with
    dropout_p > 0. Without a mask and with dropout_p > 0 one is drawn from torch's RNG.
    """
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)):
        raise ValueError(f"dropout_p must be a float in [0, 1), got {dropout_p!r}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    if dropout_p == 0.0:
        if dropout_mask is not None:
            raise ValueError("dropout_mask was given with dropout_p = 0: pass the rate it was drawn with")
        return None
    shape = tuple(shape)
    if dropout_mask is None:
        return torch.empty(shape, device=device).bernoulli_(1.0 - dropout_p).bool()
    if not isinstance(dropout_mask, torch.Tensor) or dropout_mask.dtype != torch.bool:
        raise ValueError(f"dropout_mask must be a bool tensor (True = keep), got "
                         f"{getattr(dropout_mask, 'dtype', type(dropout_mask).__name__)}")
    if tuple(dropout_mask.shape) != shape:
        raise ValueError(f"dropout_mask must have shape [B, H, M, n] = {shape}, got "
                         f"{tuple(dropout_mask.shape)}")
    if dropout_mask.device != torch.device(device):
        raise ValueError(f"dropout_mask must be on {device}, got {dropout_mask.device}")
    return dropout_mask


def drop(probs: torch.Tensor, keep_mask: Optional[torch.Tensor], dropout_p: float) -> torch.Tensor:
    """probs * keep_mask / (1 - dropout_p) (out of place, differentiable); probs when no mask."""
    if keep_mask is None:
        return probs
    return probs * keep_mask * (1.0 / (1.0 - dropout_p))


# ---- causality for non-finite inputs ----
# Causality for non-finite inputs: a masked product must not let a NaN or inf leak across the mask.
#
# Causal forms compute sums over i <= t as a matmul with a weight matrix whose entries i > t are
# zero. That is exact for finite values, but IEEE arithmetic makes 0 * NaN = NaN and 0 * inf = NaN,
# so one non-finite value in row i turns every earlier row t < i of the same chunk into NaN, while
# the recurrent form (and the paper's definition) leaves those rows untouched.
#
# ``zero_safe_matmul`` keeps the matmul for finite values (one cheap check) and recomputes only the
# batches that hold a non-finite value with a select instead of a product.
def masked_product_sum(weights: torch.Tensor, values: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """sum_k [keep[m, k]] weights[m, k] values[k, e] over batches, never computing
    weight * value where ``keep`` is False.

    weights [..., M, K]; values [..., K, E]; keep: bool broadcastable to [..., M, K].
    Returns [..., M, E]. Materialises [..., M, K, E]: use it on the few batches that need it.
    """
    products = weights.unsqueeze(-1) * values.unsqueeze(-3)
    return torch.where(keep.unsqueeze(-1), products, products.new_zeros(())).sum(-2)


def nonfinite_batches(values: torch.Tensor) -> torch.Tensor:
    """values [..., K, E] -> bool [...]: the batches holding a NaN or an infinity."""
    return ~torch.isfinite(values).flatten(-2).all(-1)


def zero_safe_matmul(weights: torch.Tensor, values: torch.Tensor, keep: torch.Tensor,
                     summary: Optional[torch.Tensor] = None) -> torch.Tensor:
    """weights @ values, where the weights outside ``keep`` are zero and stay out of the sum
    even when the values they would meet are not finite.

    weights [..., M, K]; values [..., K, E] with the same batch dims; keep broadcastable to
    [..., M, K] (True where a weight may be nonzero). ``summary``: a tensor that is non-finite
    whenever ``values`` is (e.g. a sum already computed from them); checking it instead of
    ``values`` spares a pass over the values on the finite path.
    """
    out = torch.matmul(weights, values)
    check = values if summary is None else summary
    if bool(torch.isfinite(check).all()):
        return out
    bad = nonfinite_batches(values)
    if not bool(bad.any()):
        return out
    index = bad.nonzero(as_tuple=True)
    keep = keep.expand(*weights.shape)
    return out.index_put(index, masked_product_sum(weights[index], values[index], keep[index]))


# ---- scratch memory ----
# Reusable scratch memory for the temporaries of the chunked kernels.
#
# On CPU a freshly allocated large tensor is backed by new pages that the kernel maps and zeroes on
# first touch; for these memory-bound kernels that page-fault cost is as large as the arithmetic.
# Keeping named buffers alive across blocks, layers and steps removes it, the way a GPU caching
# allocator does. Buffers handed out are overwritten by the next use of the same name, so they must
# never escape an op (outputs and saved tensors are ordinary allocations).
class Workspace:
    """Named, growing scratch buffers: ``ws("scores", shape, like)`` returns a tensor of that shape
    with ``like``'s dtype and device, reusing the memory of the last call with the same name."""

    def __init__(self):
        self._buffers: Dict[Tuple[str, torch.dtype], torch.Tensor] = {}

    def __call__(self, name: str, shape: Sequence[int], like: torch.Tensor) -> torch.Tensor:
        if like.device.type != "cpu":  # accelerators have caching allocators of their own
            return like.new_empty(shape)
        numel = math.prod(shape)
        key = (name, like.dtype)
        buffer = self._buffers.get(key)
        if buffer is None or buffer.numel() < numel:
            buffer = self._buffers[key] = like.new_empty(numel)
        return buffer[:numel].view(shape)

    def nbytes(self) -> int:
        return sum(b.numel() * b.element_size() for b in self._buffers.values())

    def clear(self) -> None:
        self._buffers.clear()


_local = threading.local()


def default_workspace() -> Workspace:
    """The calling thread's workspace."""
    if not hasattr(_local, "workspace"):
        _local.workspace = Workspace()
    return _local.workspace
