"""From a model's options to the specs its layers build their attention from: one
``ABCAttentionSpec`` per attention position and owner (encoder or decoder), whose shared module
(W_phi, the Linformer matrix) the owner registers once; with ``--untie-phi``, one spec and one
module per layer."""

import dataclasses
from typing import Optional

import torch.nn as nn

from ..strategies import ABCAttentionSpec
from .abc_options import AttentionPosition, read_attention


def per_layer_attr(position: AttentionPosition) -> str:
    """The owner's ``nn.ModuleList`` of per-layer shared modules under ``--untie-phi``."""
    return f"{position.phi_attr}_per_layer"


def abc_attention_spec(owner: nn.Module, cfg, position: AttentionPosition, in_dim: int,
                       num_heads: int) -> Optional[ABCAttentionSpec]:
    """The spec ``owner``'s next layer builds ``position``'s attention from, or None when it is
    softmax.

    The options are read and validated once per owner and position. Tied (the paper's model),
    every layer gets the same spec, whose shared module is registered on ``owner`` as
    ``position.phi_attr``; untied, each call (one per layer, in layer order) gets a spec with a
    new shared module, appended to ``owner``'s ``per_layer_attr(position)`` list. ``in_dim`` is
    the size of the key input (the encoder's embed dim for cross attention).
    """
    specs = owner.__dict__.setdefault("_abc_specs", {})  # a plain dict: not a submodule
    if position.name in specs:
        spec, per_layer = specs[position.name], owner._modules.get(per_layer_attr(position))
        if per_layer is None:  # tied, softmax or nothing to tie: every layer shares the spec
            return spec
        # A later layer of an untied position: the validated spec with a fresh module of its own.
        shared = spec.strategy.build_shared(spec.in_dim, spec.num_heads, spec.memory_size, spec.options)
        per_layer.append(shared)
        return dataclasses.replace(spec, shared=shared)
    found = read_attention(cfg, position)
    spec = None
    if found is not None:
        shared = None if found.untied else owner._modules.get(position.phi_attr)
        spec = ABCAttentionSpec.create(found.strategy, found.memory_size, in_dim, num_heads, found.options,
                                       shared=shared, mode=position.mode, backend=found.backend)
        if spec.shared is not None and found.untied:
            owner.add_module(per_layer_attr(position), nn.ModuleList([spec.shared]))
        elif spec.shared is not None and position.phi_attr not in owner._modules:
            owner.add_module(position.phi_attr, spec.shared)
    specs[position.name] = spec
    return spec
