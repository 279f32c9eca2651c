"""W_phi, the learned control projection of ABC_MLP, tied across the layers of one position, and
what the strategies controlled by such a projection (ABC_MLP, GSA) share."""

import torch
import torch.nn as nn

from .base import ControlModule, StrategyOptions


class SlotProjection(nn.Linear, ControlModule):
    """One logit per head and slot from the control input: ``in_dim -> num_heads * memory_size``, no
    bias, head-major (head h owns columns h * memory_size ... (h + 1) * memory_size - 1), Xavier-uniform
    initialised. The base of W_phi and of GSA's gate projection."""

    def __init__(self, in_dim: int, num_heads: int, memory_size: int):
        super().__init__(in_dim, num_heads * memory_size, bias=False)
        self.num_heads = num_heads
        self.memory_size = memory_size
        nn.init.xavier_uniform_(self.weight)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, num_heads={self.num_heads}, memory_size={self.memory_size}"


class PhiProjection(SlotProjection):
    """phi logits l = W_phi x, before the activation (paper Eq. 12): ``in_dim -> num_heads * memory_size``.

    No bias, as in the paper. One instance is created per attention position (decoder self
    attention, encoder self attention, cross attention) and registered once on the model; the
    layers hold it in a plain list so it is neither registered nor counted again per layer.

    Input [..., in_dim]; output [..., num_heads * memory_size], head-major (head h owns columns
    h * memory_size ... (h + 1) * memory_size - 1).
    """


class SlotControl:
    """Mixin of the strategies whose ``shared`` module is a SlotProjection of the control input
    (``projection``: the class they build): it builds and checks that module and gives the
    per-head, per-slot logits. Listed before ``Strategy`` in the bases."""

    projection = SlotProjection
    uses_control_input = True

    @classmethod
    def build_shared(cls, in_dim: int, num_heads: int, memory_size: int,
                     options: StrategyOptions) -> nn.Module:
        cls.validate(memory_size, options)
        return cls.projection(in_dim, num_heads, memory_size)

    @classmethod
    def check_shared(cls, shared, in_dim: int, num_heads: int, memory_size: int) -> None:
        expected = (in_dim, num_heads * memory_size)
        if not isinstance(shared, nn.Linear) or (shared.in_features, shared.out_features) != expected:
            got = (getattr(shared, "in_features", None), getattr(shared, "out_features", None))
            raise ValueError(
                f"phi must map the key input to num_heads * memory_size logits: expected "
                f"(in, out) = {expected}, got {got}")

    def slot_logits(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, N, C] -> the projection's logits [B, H, N, n] in x's dtype (a view: the ops read
        half-precision logits and compute in fp32, so a cast here would be one more op and one more
        fp32 tensor per layer; strategies that compute on the logits cast them)."""
        source = x.transpose(0, 1)
        if source.is_contiguous():  # fairseq's [N, B, C] activations: project them without a copy
            logits = self.shared(source).transpose(0, 1)
        else:
            logits = self.shared(x)
        return logits.unflatten(-1, (self.num_heads, self.memory_size)).permute(0, 2, 1, 3)
