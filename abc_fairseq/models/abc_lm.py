"""``abc_lm``: fairseq's transformer language model with ABC causal self attention."""

import ast
from dataclasses import dataclass

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
    BackendChoice,
    attn_field,
    backend_field,
    harden_abc_flags,
    memory_field,
    set_abc_defaults,
    untie_field,
    with_setting_fields,
)
from .build_helpers import NoHubModels


@dataclass
class _ABCLanguageModelOptions(TransformerLanguageModelConfig):
    decoder_self_attn: str = attn_field(DECODER_SELF)  # choices: the registry's, at parsing
    decoder_self_memory: int = memory_field(DECODER_SELF)
    untie_phi: bool = untie_field()
    abc_backend: BackendChoice = backend_field()


# Plus one field per strategy setting (--linformer-max-positions, --compressive-ratio, ...).
ABCLanguageModelConfig = with_setting_fields("ABCLanguageModelConfig", _ABCLanguageModelOptions)


@register_model("abc_lm", dataclass=ABCLanguageModelConfig)
class ABCLanguageModel(NoHubModels, TransformerLanguageModel):
    """Decoder-only LM: ``transformer_lm`` whose self attention is ABC_MLP with
    ``--decoder-self-memory`` slots and one W_phi shared by all layers, or any other strategy
    named by ``--decoder-self-attn`` (docs/strategies.md).

    ``--arch abc_lm`` takes the config's defaults, which are transformer_lm's (as for
    ``--arch transformer_lm``) plus ``--decoder-self-attn abc --decoder-self-memory 64``.

    ``--decoder-self-attn softmax`` gives fairseq's softmax decoder unchanged (same layers, same
    parameter names), the baseline for comparisons.
    """

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        harden_abc_flags(parser, [DECODER_SELF])

    @classmethod
    def build_model(cls, args, task):
        if args.decoder_layers_to_keep:
            args.decoder_layers = len(args.decoder_layers_to_keep.split(","))
        if safe_getattr(args, "max_target_positions", None) is None:
            args.max_target_positions = safe_getattr(args, "tokens_per_sample", DEFAULT_MAX_TARGET_POSITIONS)
        embed_tokens = cls.build_input_embedding(args, task.source_dictionary)
        decoder = ABCTransformerDecoder(args, task.target_dictionary, embed_tokens, no_encoder_attn=True)
        model = cls(decoder)
        log_phi_parameter_overhead(model)
        return model

    def prepare_for_inference_(self, cfg):
        """fairseq-eval-lm calls this with its whole config before reading any data, after taking
        ``--context-window`` off ``--tokens-per-sample``: refuse a window that leaves no token to
        score (fairseq would fail later with a ZeroDivisionError)."""
        check_context_window(cfg)
        super().prepare_for_inference_(cfg)

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


def check_context_window(cfg) -> None:
    """ValueError naming both flags when fairseq-eval-lm's ``--context-window`` is not below
    ``--tokens-per-sample`` (``cfg.task.tokens_per_sample`` is already reduced by the window)."""
    window = safe_getattr(safe_getattr(cfg, "eval_lm", None), "context_window", 0) or 0
    remaining = safe_getattr(safe_getattr(cfg, "task", None), "tokens_per_sample", None)
    if window > 0 and remaining is not None and remaining < 1:
        raise ValueError(
            f"--context-window ({window}) must be smaller than --tokens-per-sample ({remaining + window}): "
            f"each block scores --tokens-per-sample minus --context-window tokens")


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
