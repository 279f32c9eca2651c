"""The control projection W_phi of ABC_MLP, shared by every layer of one attention position."""

import logging
from typing import NamedTuple, Tuple

import torch.nn as nn

logger = logging.getLogger(__name__)


class PhiProjection(nn.Linear):
    """phi logits l = W_phi x, before exp (paper Eq. 12): ``in_dim -> num_heads * memory_size``.

    No bias, as in the paper. One instance is created per attention position (decoder self
    attention, encoder self attention, cross attention) and registered once on the model; the
    layers hold it in a plain list so it is neither registered nor counted again per layer.

    Input [..., in_dim]; output [..., num_heads * memory_size], head-major (head h owns columns
    h * memory_size ... (h + 1) * memory_size - 1).
    """

    def __init__(self, in_dim: int, num_heads: int, memory_size: int):
        if memory_size < 1:
            raise ValueError(f"memory_size must be a positive number of slots, got {memory_size}")
        super().__init__(in_dim, num_heads * memory_size, bias=False)
        self.num_heads = num_heads
        self.memory_size = memory_size
        nn.init.xavier_uniform_(self.weight)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, num_heads={self.num_heads}, memory_size={self.memory_size}"


class ABCAttentionSpec(NamedTuple):
    """What a layer needs to build one ABC attention: its slot count and the shared W_phi."""

    memory_size: int
    phi: PhiProjection


def phi_parameter_overhead(model: nn.Module) -> Tuple[int, int, float]:
    """Parameters ABC adds to ``model``: (W_phi parameters, all parameters, fraction).

    The fraction is W_phi's size relative to the rest of the model, i.e. the growth over the same
    architecture with softmax attention (the paper reports < 1%). Shared tensors count once.
    """
    phi_params = {
        id(p): p.numel()
        for module in model.modules()
        if isinstance(module, PhiProjection)
        for p in module.parameters()
    }
    total = sum(p.numel() for p in model.parameters())
    extra = sum(phi_params.values())
    base = total - extra
    return extra, total, (extra / base if base > 0 else float("inf"))


def log_phi_parameter_overhead(model: nn.Module) -> float:
    """Log the W_phi overhead of a freshly built model; returns the fraction."""
    extra, total, fraction = phi_parameter_overhead(model)
    if extra:
        logger.info(
            "ABC W_phi adds %d parameters to %d others (+%.3f%%); total %d",
            extra, total - extra, 100.0 * fraction, total,
        )
    return fraction
