"""W_phi, the learned control projection of ABC_MLP, tied across the layers of one position."""

import torch.nn as nn

from .base import ControlModule


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
