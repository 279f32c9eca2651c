"""flash-linear-attention (the optional ``fla-core`` package), the peer the self-check and the
benchmarks time ours against: its ``chunk_abc`` and ``chunk_gsa`` handed the problem that our
``causal_abc`` and ``causal_gsa`` solve. Every caller builds fla's inputs here, so that the layout
and the meaning of fla's arguments are decided once.

Layout. Ours is [B, H, N, *] (heads before time). fla-core takes [B, T, H, *] (time before heads;
``chunk_abc`` transposes to heads-first itself). Handed ours unchanged it would solve another
problem: B x N sequences of H tokens each.

What fla's arguments are, read from fla-core 0.6.0 (``fla/ops/abc``, ``fla/ops/gsa``) and held by
``tests/ops/test_fla_peer.py``:

- ``chunk_abc(q, k, v, s)``: ``s`` [B, T, H, n] are the slot logits before exp, our
  ``phi_logits``. fla normalises them by their prefix log-sum-exp z_t = logcumsumexp(s)_t, so row
  t's memories are sum_{i<=t} exp(s_i - z_t) k_i (likewise v): our prefix-normalised K~_t, V~_t.
  The read is softmax(d ** -0.5 K~_t q_t) over the slots, fixed: chunk_abc takes no scale.
- ``chunk_gsa(q, k, v, s, g)``: ``g`` [B, T, H, n] are the log forget gates, our ``log_gates``,
  and ``s`` the write weights, 1 - exp(g) for gated slot attention (fla derives them itself only
  when g is None, with its own gate). Its scale defaults to d ** -0.5, as ours.

The helper hands fla the slot logits and the write weights in k's dtype (as fla's own gate makes
them), the log gates as given; fla's outputs are [B, T, H, dv] in q's dtype.
"""

import importlib
import importlib.metadata
from typing import Callable, Optional, Tuple

import torch

FLA_LAYOUT = "[B, T, H, *]"  # fla-core's layout: time before heads
OUR_LAYOUT = "[B, H, N, *]"
KINDS = ("abc", "gsa")  # ours: causal_abc, causal_gsa; fla's: chunk_abc, chunk_gsa


def fla_version() -> Optional[str]:
    """The installed fla-core's version (None when flash-linear-attention is not installed)."""
    for distribution in ("fla-core", "flash-linear-attention"):
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def fla_record() -> dict:
    """What a result file records about the peer: fla-core's version and the layout it was called in."""
    return {"fla_version": fla_version(), "fla_layout": FLA_LAYOUT}


def fla_op(kind: str) -> Callable:
    """fla's ``chunk_abc`` or ``chunk_gsa`` (``kind``: "abc" or "gsa"); ImportError (or what fla
    raises on import) where fla-core cannot be imported."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    return getattr(importlib.import_module(f"fla.ops.{kind}"), f"chunk_{kind}")


def to_fla_layout(*tensors: torch.Tensor) -> Tuple[torch.Tensor, ...]:
    """Ours [B, H, N, *] as fla's [B, T, H, *], contiguous (built before a timing, not inside it)."""
    return tuple(t.transpose(1, 2).contiguous() for t in tensors)


def to_our_layout(out: torch.Tensor) -> torch.Tensor:
    """fla's output [B, T, H, dv] as ours [B, H, N, dv] (a view)."""
    return out.transpose(1, 2)


def fla_attention(kind: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, control: torch.Tensor,
                  op: Optional[Callable] = None) -> torch.Tensor:
    """fla's op on inputs already in fla's layout: q, k [B, T, H, d], v [B, T, H, dv] and
    ``control`` [B, T, H, n], our op's last argument (ABC: the slot logits; GSA: the log gates
    g <= 0). Returns fla's output [B, T, H, dv]. ``op``: ``fla_op(kind)`` unless given."""
    op = op or fla_op(kind)
    if kind == "abc":
        return op(q, k, v, control.to(k.dtype))[0]
    write = (-torch.expm1(control.float())).to(k.dtype)  # 1 - a, exact where a is close to 1
    return op(q, k, v, write, control)[0]


def fla_as_ours(kind: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, control: torch.Tensor,
                op: Optional[Callable] = None) -> torch.Tensor:
    """fla's op on our op's arguments, in our layout: ``causal_abc(q, k, v, phi_logits)`` (kind
    "abc") or ``causal_gsa(q, k, v, log_gates)`` ("gsa") at their default scale, [B, H, N, dv]."""
    return to_our_layout(fla_attention(kind, *to_fla_layout(q, k, v, control), op=op))
