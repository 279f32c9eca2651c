"""From a model's options to the built spec its layers share: one ``ABCAttentionSpec`` per
attention position and owner (encoder or decoder), whose shared module (W_phi, the Linformer
matrix) the owner registers once."""

from typing import Optional

import torch.nn as nn

from ..strategies import ABCAttentionSpec
from .abc_options import AttentionPosition, read_attention


def abc_attention_spec(owner: nn.Module, cfg, position: AttentionPosition, in_dim: int,
                       num_heads: int) -> Optional[ABCAttentionSpec]:
    """The spec ``owner``'s layers build ``position``'s attention from, or None when it is softmax.

    Created once per owner and position (later layers get the same spec): the strategy is resolved
    and validated, and its shared module created and registered on ``owner`` as
    ``position.phi_attr``. ``in_dim`` is the size of the key input (the encoder's embed dim for
    cross attention).
    """
    specs = owner.__dict__.setdefault("_abc_specs", {})  # a plain dict: not a submodule
    if position.name not in specs:
        found = read_attention(cfg, position)
        spec = None
        if found is not None:
            spec = ABCAttentionSpec.create(found.strategy, found.memory_size, in_dim, num_heads, found.options,
                                           shared=owner._modules.get(position.phi_attr), mode=position.mode)
            if spec.shared is not None and position.phi_attr not in owner._modules:
                owner.add_module(position.phi_attr, spec.shared)
        specs[position.name] = spec
    return specs[position.name]
