"""The constant-size decoding state of causal ABC."""

from typing import NamedTuple

import torch


class ABCState(NamedTuple):
    """Memory of a prefix x_1..x_t, per head; every field has the batch dimension first.

    key_memory:     [B, H, n, d]  K~_t = sum_{i<=t} exp(l_i - g_t) (x) k_i
    value_memory:   [B, H, n, d]  V~_t = sum_{i<=t} exp(l_i - g_t) (x) v_i
    log_normalizer: [B, H, n]     g_t = log sum_{i<=t} exp(l_i)  (-inf before the first token)

    The memories are stored already divided by exp(g_t), so they stay bounded whatever the logits.
    All fields are float32 (float64 if the inputs are float64).
    """

    key_memory: torch.Tensor
    value_memory: torch.Tensor
    log_normalizer: torch.Tensor

    @classmethod
    def empty(cls, batch: int, heads: int, slots: int, head_dim: int, value_dim: int,
              device=None, dtype=torch.float32) -> "ABCState":
        return cls(
            torch.zeros(batch, heads, slots, head_dim, device=device, dtype=dtype),
            torch.zeros(batch, heads, slots, value_dim, device=device, dtype=dtype),
            torch.full((batch, heads, slots), float("-inf"), device=device, dtype=dtype),
        )

    def check(self, B: int, H: int, n: int, d: int, dv: int, name: str = "state") -> None:
        """ValueError naming ``name`` unless the fields have shapes [B, H, n, d], [B, H, n, dv] and
        [B, H, n]."""
        expected = ((B, H, n, d), (B, H, n, dv), (B, H, n))
        got = tuple(tuple(field.shape) for field in self)
        if got != expected:
            raise ValueError(f"{name} does not match the inputs: got shapes {list(got)}, expected {list(expected)}")

    def index_select(self, order: torch.Tensor) -> "ABCState":
        """Reorder (or repeat) along the batch dimension, e.g. for beam search."""
        return ABCState(*(field.index_select(0, order) for field in self))

    def nbytes(self) -> int:
        return sum(field.numel() * field.element_size() for field in self)


def check_in_place(state, dtype: torch.dtype) -> None:
    """ValueError unless every field of ``state`` (an ABCState or GSAState) can take the next state
    in place: ``dtype`` (the step's compute dtype) and no gradient history to overwrite."""
    for name, field in zip(state._fields, state):
        if field.dtype != dtype:
            raise ValueError(f"in_place: state.{name} is {field.dtype}, the step computes in {dtype}")
        if field.requires_grad:
            raise ValueError(f"in_place: state.{name} requires grad; a state advanced in place has no history")
