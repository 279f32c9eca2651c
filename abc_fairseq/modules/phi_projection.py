"""The control modules of ABC attention as layers see them: W_phi (``PhiProjection``), the spec a
layer builds its attention from, and the parameter overhead over softmax attention."""

import logging
from typing import NamedTuple, Optional, Tuple

import torch.nn as nn

from ..strategies import ControlModule, PhiProjection, StrategyOptions

logger = logging.getLogger(__name__)

__all__ = ["ABCAttentionSpec", "PhiProjection", "log_phi_parameter_overhead", "phi_parameter_overhead"]


class ABCAttentionSpec(NamedTuple):
    """What a layer needs to build one bounded-memory attention.

    memory_size: slots n (window length, feature size for kernels: see the strategy).
    phi: the module tied across the layers of this attention position (W_phi for the ABC_MLP
        family, the Linformer matrix for ``linformer``), or None for strategies that tie nothing.
    strategy: a name registered in ``abc_fairseq.strategies`` (default: ``abc``, ABC_MLP).
    options: further settings (``StrategyOptions``), or None for the defaults.
    """

    memory_size: int
    phi: Optional[nn.Module]
    strategy: str = "abc"
    options: Optional[StrategyOptions] = None


def phi_parameter_overhead(model: nn.Module) -> Tuple[int, int, float]:
    """Parameters bounded-memory control adds to ``model``: (control parameters, all parameters,
    fraction). Control parameters are those of W_phi and of every other strategy module (shared or
    per layer; ``ControlModule``); the fraction is their size relative to the rest of the model, the
    growth over the same architecture with softmax attention. Shared tensors count once."""
    control = {
        id(p): p.numel()
        for module in model.modules()
        if isinstance(module, ControlModule)
        for p in module.parameters()
    }
    total = sum(p.numel() for p in model.parameters())
    extra = sum(control.values())
    base = total - extra
    return extra, total, (extra / base if base > 0 else float("inf"))


def log_phi_parameter_overhead(model: nn.Module) -> float:
    """Log the control-parameter overhead of a freshly built model; returns the fraction."""
    extra, total, fraction = phi_parameter_overhead(model)
    if extra:
        only_phi = all(isinstance(m, PhiProjection) for m in model.modules()
                       if isinstance(m, ControlModule) and any(True for _ in m.parameters()))
        what = "ABC W_phi" if only_phi else "bounded-memory control"
        logger.info("%s adds %d parameters to %d others (+%.3f%%); total %d",
                    what, extra, total - extra, 100.0 * fraction, total)
    return fraction
