"""Named ``abc_lm`` architectures for WikiText-103 (the paper's Table 2 and Table 9).

The base is the adaptive-input transformer LM of Baevski & Auli (2019), as fairseq's
``transformer_lm_wiki103`` defines it: 16 pre-norm layers, dim 1024, 8 heads, FFN 4096, adaptive
input and adaptive softmax with cutoffs 20000,60000 and tied adaptive weights/projections,
dropout 0.3 (attention and activation dropout 0.1, adaptive softmax dropout 0.2), no final layer
norm. Segments of 512 tokens are the task's business (``--tokens-per-sample 512``).

The values are spelled out here rather than inherited from fairseq's architecture function so that
the preset reads as the paper's table; every one can still be overridden by its flag. The
attention choice follows ``abc_lm_base``: ABC with ``--decoder-self-memory`` slots unless
``--decoder-self-attn`` says otherwise, so the Table 2 rows are these presets with different flags.
Each experiment (its preset and flags) is defined once, in ``scripts/lm/rows.tsv``; the Hydra
configs ``configs/lm/<row>.yaml`` are generated from that row and the preset's values by
``scripts/lm/make_configs.py`` (``--check`` in the tests).
"""

from fairseq.models import register_model_architecture
from fairseq.utils import safe_getattr

from .abc_lm import abc_lm_base
from .abc_options import DECODER_SELF, set_abc_defaults

WIKI103_CUTOFFS = "20000,60000"


def _default(args, name, value):
    setattr(args, name, safe_getattr(args, name, value))


def _adaptive_input_lm(args):
    """Baevski & Auli's WikiText-103 model, sizes and regularisation (see the module docstring)."""
    for name, value in (
        ("decoder_layers", 16),
        ("decoder_embed_dim", 1024),
        ("decoder_ffn_embed_dim", 4096),
        ("decoder_attention_heads", 8),
        ("decoder_normalize_before", True),
        ("no_decoder_final_norm", True),
        ("dropout", 0.3),
        ("attention_dropout", 0.1),
        ("activation_dropout", 0.1),
        ("adaptive_input", True),
        ("adaptive_input_cutoff", WIKI103_CUTOFFS),
        ("adaptive_softmax_cutoff", WIKI103_CUTOFFS),
        ("adaptive_softmax_dropout", 0.2),
        ("tie_adaptive_weights", True),
        ("tie_adaptive_proj", True),
    ):
        _default(args, name, value)
    # Input/output dims follow the width (base_lm_architecture would do the same, but the
    # adaptive-weight tying check in build_model needs them equal before it runs).
    _default(args, "decoder_input_dim", args.decoder_embed_dim)
    _default(args, "decoder_output_dim", args.decoder_embed_dim)


@register_model_architecture("abc_lm", "abc_lm_wiki103")
def abc_lm_wiki103(args):
    """Baevski & Auli's 16-layer adaptive-input LM with ABC self attention, n = 64."""
    _adaptive_input_lm(args)
    abc_lm_base(args)


@register_model_architecture("abc_lm", "abc_lm_wiki103_n32")
def abc_lm_wiki103_n32(args):
    """``abc_lm_wiki103`` with n = 32 memory slots."""
    set_abc_defaults(args, DECODER_SELF, memory=32)
    abc_lm_wiki103(args)


@register_model_architecture("abc_lm", "abc_lm_wiki103_32l")
def abc_lm_wiki103_32l(args):
    """The 32-layer setting of Kasai et al. (2021): 32 layers, layer dropout 0.2, n = 64."""
    _default(args, "decoder_layers", 32)
    _default(args, "decoder_layerdrop", 0.2)
    abc_lm_wiki103(args)


@register_model_architecture("abc_lm", "abc_lm_wiki103_gsa")
def abc_lm_wiki103_gsa(args):
    """``abc_lm_wiki103`` with gated slot attention (Zhang et al., 2024) at n = 64: the table's
    ``gsa_n64`` row, beyond the paper."""
    set_abc_defaults(args, DECODER_SELF, "gsa", 64)
    abc_lm_wiki103(args)
