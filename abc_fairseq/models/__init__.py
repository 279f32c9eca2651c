"""fairseq models with ABC attention, registered on import."""

from . import abc_lm  # noqa: F401 (registers abc_lm and its architectures)
from . import abc_roberta  # noqa: F401 (registers abc_roberta and its architectures)
from . import abc_lm_presets  # noqa: F401 (registers the WikiText-103 abc_lm architectures)
from . import abc_transformer  # noqa: F401 (registers abc_transformer and its architectures)
from .abc_decoder import ABCTransformerDecoder, shared_phi, wrap_layer
from .abc_encoder import ABCTransformerEncoder
from .abc_lm import ABCLanguageModel, ABCLanguageModelConfig
from .abc_options import (
    ATTENTION_CHOICES,
    DECODER_CROSS,
    DECODER_SELF,
    ENCODER_SELF,
    AttentionChoice,
    AttentionPosition,
    abc_attention_spec,
    abc_memory_size,
    add_abc_args,
    attention_strategy,
    attn_field,
    compressive_ratio_field,
    harden_memory_flags,
    linformer_max_positions_field,
    memory_field,
    set_abc_defaults,
    strategy_options,
)
from .abc_transformer import MT_POSITIONS, ABCTransformerModel

__all__ = [
    "ATTENTION_CHOICES",
    "ABCLanguageModel",
    "ABCLanguageModelConfig",
    "ABCTransformerDecoder",
    "ABCTransformerEncoder",
    "ABCTransformerModel",
    "AttentionChoice",
    "AttentionPosition",
    "DECODER_CROSS",
    "DECODER_SELF",
    "ENCODER_SELF",
    "MT_POSITIONS",
    "abc_attention_spec",
    "abc_memory_size",
    "add_abc_args",
    "attention_strategy",
    "attn_field",
    "compressive_ratio_field",
    "harden_memory_flags",
    "linformer_max_positions_field",
    "memory_field",
    "set_abc_defaults",
    "strategy_options",
    "shared_phi",
    "wrap_layer",
]
