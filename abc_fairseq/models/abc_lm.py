"""``abc_lm``: fairseq's transformer language model with ABC causal self attention."""

import ast
from dataclasses import dataclass
from typing import Optional

from fairseq import options
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer_lm import (
    DEFAULT_MAX_TARGET_POSITIONS,
    TransformerLanguageModel,
    TransformerLanguageModelConfig,
    base_lm_architecture,
)
from fairseq.modules import AdaptiveInput, CharacterTokenEmbedder
from fairseq.utils import safe_getattr

from ..modules import log_phi_parameter_overhead
from .abc_decoder import ABCTransformerDecoder
from .abc_options import (
    DECODER_SELF,
    AttentionChoice,
    abc_memory_size,
    attn_field,
    compressive_ratio_field,
    harden_memory_flags,
    linformer_max_positions_field,
    memory_field,
    set_abc_defaults,
)


@dataclass
class ABCLanguageModelConfig(TransformerLanguageModelConfig):
    decoder_self_attn: AttentionChoice = attn_field(DECODER_SELF)
    decoder_self_memory: int = memory_field(DECODER_SELF)
    linformer_max_positions: Optional[int] = linformer_max_positions_field()
    compressive_ratio: int = compressive_ratio_field()


@register_model("abc_lm", dataclass=ABCLanguageModelConfig)
class ABCLanguageModel(TransformerLanguageModel):
    """Decoder-only LM: ``transformer_lm`` whose self attention is ABC_MLP with
    ``--decoder-self-memory`` slots and one W_phi shared by all layers, or any other strategy
    named by ``--decoder-self-attn`` (docs/strategies.md).

    ``--arch abc_lm`` takes the config's defaults, which are transformer_lm's (as for
    ``--arch transformer_lm``) plus ``--decoder-self-attn abc --decoder-self-memory 64``.

    ``--decoder-self-attn softmax`` gives fairseq's softmax decoder unchanged (same layers, same
    parameter names), the baseline for comparisons.
    """

    @classmethod
    def hub_models(cls):
        return {}  # the transformer_lm downloads are softmax models

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        harden_memory_flags(parser, [DECODER_SELF])

    @classmethod
    def build_model(cls, args, task):
        abc_memory_size(args, DECODER_SELF)  # fail early, naming the flag
        if args.decoder_layers_to_keep:
            args.decoder_layers = len(args.decoder_layers_to_keep.split(","))
        if safe_getattr(args, "max_target_positions", None) is None:
            args.max_target_positions = safe_getattr(args, "tokens_per_sample", DEFAULT_MAX_TARGET_POSITIONS)
        embed_tokens = cls.build_input_embedding(args, task.source_dictionary)
        decoder = ABCTransformerDecoder(args, task.target_dictionary, embed_tokens, no_encoder_attn=True)
        model = cls(decoder)
        log_phi_parameter_overhead(model)
        return model

    @classmethod
    def build_input_embedding(cls, args, dictionary):
        """Token embedding as transformer_lm chooses it: characters, adaptive input or a table."""
        if args.character_embeddings:
            return CharacterTokenEmbedder(
                dictionary,
                ast.literal_eval(args.character_filters),
                args.character_embedding_dim,
                args.decoder_embed_dim,
                args.char_embedder_highway_layers,
            )
        if args.tie_adaptive_weights:
            mismatch = [
                name for name, ok in (
                    ("--adaptive-input", args.adaptive_input),
                    ("--adaptive-input-factor == --adaptive-softmax-factor",
                     args.adaptive_input_factor == args.adaptive_softmax_factor),
                    ("--adaptive-input-cutoff == --adaptive-softmax-cutoff",
                     args.adaptive_input_cutoff == args.adaptive_softmax_cutoff),
                    ("--decoder-input-dim == --decoder-output-dim",
                     args.decoder_input_dim == args.decoder_output_dim),
                ) if not ok
            ]
            if mismatch:
                raise ValueError(f"--tie-adaptive-weights requires {', '.join(mismatch)}")
        if args.adaptive_input:
            return AdaptiveInput(
                len(dictionary),
                dictionary.pad(),
                args.decoder_input_dim,
                args.adaptive_input_factor,
                args.decoder_embed_dim,
                options.eval_str_list(args.adaptive_input_cutoff, type=int),
                args.quant_noise_pq,
                args.quant_noise_pq_block_size,
            )
        return cls.build_embedding(args, dictionary, args.decoder_input_dim)


def abc_lm_base(args):
    """Defaults shared by the named abc_lm architectures: those of fairseq's named transformer_lm
    architectures (pre-norm), plus ABC self attention with 64 slots.

    ``--arch abc_lm`` itself is the model's dataclass defaults, like ``--arch transformer_lm``.
    """
    base_lm_architecture(args)
    set_abc_defaults(args, DECODER_SELF)


@register_model_architecture("abc_lm", "abc_lm_small")
def abc_lm_small(args):
    """A CPU-sized LM for quick starts and tests: 4 layers, dim 256, 4 heads, FFN 1024, tied
    input/output embeddings, 64 slots per head (head dim 64)."""
    args.decoder_embed_dim = safe_getattr(args, "decoder_embed_dim", 256)
    args.decoder_ffn_embed_dim = safe_getattr(args, "decoder_ffn_embed_dim", 1024)
    args.decoder_layers = safe_getattr(args, "decoder_layers", 4)
    args.decoder_attention_heads = safe_getattr(args, "decoder_attention_heads", 4)
    args.share_decoder_input_output_embed = safe_getattr(args, "share_decoder_input_output_embed", True)
    abc_lm_base(args)
