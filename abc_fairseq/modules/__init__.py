"""fairseq-facing building blocks: the ABC attention module, its shared W_phi, ABC layers."""

from .abc_attention import ABCMultiheadAttention
from .abc_layers import ABCTransformerDecoderLayer, ABCTransformerEncoderLayer
from .masks import PAD_LOGIT, is_future_mask
from .phi_projection import (
    ABCAttentionSpec,
    PhiProjection,
    log_phi_parameter_overhead,
    phi_parameter_overhead,
)

__all__ = [
    "ABCAttentionSpec",
    "ABCMultiheadAttention",
    "ABCTransformerDecoderLayer",
    "ABCTransformerEncoderLayer",
    "PAD_LOGIT",
    "PhiProjection",
    "is_future_mask",
    "log_phi_parameter_overhead",
    "phi_parameter_overhead",
]
