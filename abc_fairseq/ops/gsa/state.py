"""The constant-size decoding state of causal gated slot attention (GSA)."""

from typing import NamedTuple

import torch


class GSAState(NamedTuple):
    """Memory of a prefix x_1..x_t, per head; every field has the batch dimension first.

    key_memory:   [B, H, n, d]   K~_t = diag(a_t) K~_{t-1} + (1 - a_t) (x) k_t
    value_memory: [B, H, n, dv]  V~_t = diag(a_t) V~_{t-1} + (1 - a_t) (x) v_t

    Both start at zero. The gates are in (0, 1], so the memories stay convex combinations of the
    keys and values written (never larger than the largest). float32 (float64 for float64 inputs).
    """

    key_memory: torch.Tensor
    value_memory: torch.Tensor

    @classmethod
    def empty(cls, batch: int, heads: int, slots: int, head_dim: int, value_dim: int,
              device=None, dtype=torch.float32) -> "GSAState":
        return cls(torch.zeros(batch, heads, slots, head_dim, device=device, dtype=dtype),
                   torch.zeros(batch, heads, slots, value_dim, device=device, dtype=dtype))

    def index_select(self, order: torch.Tensor) -> "GSAState":
        """Reorder (or repeat) along the batch dimension, e.g. for beam search."""
        return GSAState(*(field.index_select(0, order) for field in self))

    def check(self, B: int, H: int, n: int, d: int, dv: int, name: str = "state") -> None:
        """ValueError naming ``name`` unless the fields have shapes [B, H, n, d] and [B, H, n, dv]."""
        expected = ((B, H, n, d), (B, H, n, dv))
        got = tuple(tuple(field.shape) for field in self)
        if got != expected:
            raise ValueError(f"{name} does not match the inputs: got shapes {list(got)}, expected {list(expected)}")
