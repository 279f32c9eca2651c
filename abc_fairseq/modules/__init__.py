"""fairseq-facing building blocks: the ABC attention module, transformer layers using it, the
parameter overhead of bounded-memory control. The strategies, their spec and W_phi
(``PhiProjection``) live in ``abc_fairseq.strategies``."""

from .abc_attention import ABCMultiheadAttention
from .abc_layers import ABCTransformerDecoderLayer, ABCTransformerEncoderLayer
from .masks import is_future_mask
from .parameter_overhead import log_phi_parameter_overhead, phi_parameter_overhead

__all__ = [
    "ABCMultiheadAttention",
    "ABCTransformerDecoderLayer",
    "ABCTransformerEncoderLayer",
    "is_future_mask",
    "log_phi_parameter_overhead",
    "phi_parameter_overhead",
]
