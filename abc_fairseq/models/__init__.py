"""fairseq models with ABC attention, registered on import; the import also loads the plugin's
fairseq fixes (``abc_fairseq.plugin.install``).

- ``abc_options``: the options schema (flags, dataclass fields, defaults) and its reading.
- ``attention_specs``: options -> the ``ABCAttentionSpec`` each attention position's layers share.
- ``abc_encoder`` / ``abc_decoder``: fairseq's encoder and decoder building ABC layers from specs.
- ``abc_lm``, ``abc_transformer``, ``abc_roberta``: the registered models and architectures.
"""

from ..plugin import install
from . import (
    abc_lm,  # noqa: F401 (registers abc_lm and its architectures)
    abc_lm_presets,  # noqa: F401 (registers the WikiText-103 abc_lm architectures)
    abc_roberta,  # noqa: F401 (registers abc_roberta and its architectures)
    abc_transformer,  # noqa: F401 (registers abc_transformer and its architectures)
)
from .abc_decoder import ABCTransformerDecoder
from .abc_encoder import ABCTransformerEncoder
from .abc_lm import ABCLanguageModel, ABCLanguageModelConfig
from .abc_options import (
    ATTENTION_CHOICES,
    DECODER_CROSS,
    DECODER_SELF,
    ENCODER_SELF,
    AttentionChoice,
    AttentionPosition,
    abc_memory_size,
    add_abc_args,
    attention_strategy,
    attn_field,
    harden_abc_flags,
    memory_field,
    read_attention,
    read_backend,
    set_abc_defaults,
    strategy_options,
    with_setting_fields,
)
from .abc_transformer import MT_POSITIONS, ABCTransformerModel
from .attention_specs import abc_attention_spec
from .build_helpers import wrap_layer

install()  # the checkpoint, numpy and process-group fixes: loading the models loads the plugin

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
    "harden_abc_flags",
    "memory_field",
    "read_attention",
    "read_backend",
    "set_abc_defaults",
    "strategy_options",
    "with_setting_fields",
    "wrap_layer",
]
