"""The parameter overhead of bounded-memory control over softmax attention (W_phi and every other
``ControlModule``)."""

import logging
from typing import Tuple

import torch.nn as nn

from ..strategies import ControlModule, PhiProjection

logger = logging.getLogger(__name__)

__all__ = ["log_phi_parameter_overhead", "phi_parameter_overhead"]


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
