"""``abc_transformer``: fairseq's encoder-decoder transformer with ABC attention (translation).

Three attention positions, each chosen independently on the command line (``abc`` is ABC_MLP,
``softmax`` fairseq's attention; other values are the strategies of ``abc_fairseq.strategies``):

- decoder causal self attention: ``--decoder-self-attn abc --decoder-self-memory N``
- encoder-decoder (cross) attention: ``--decoder-cross-attn abc --decoder-cross-memory N``
- encoder self attention: ``--encoder-attn abc --encoder-memory N``

Named architectures (the paper's Table 10; values given on the command line win):

- ``abc_transformer`` / ``abc_transformer_wmt_en_de``: fairseq's base ``transformer`` (6+6 layers,
  dim 512, 8 heads, FFN 2048, dropout 0.1), ABC cross attention with 32 slots and causal self
  attention with 8, softmax encoder (``--encoder-attn abc`` gives the paper's "MLP-exp-all"
  model, 32 encoder slots).
- ``abc_transformer_iwslt_doc``: 6+6 layers, dim 512, 8 heads, FFN 1024, dropout 0.3, cross 128
  and causal 64 slots (encoder 128 when ABC).
- ``abc_transformer_tiny``: 2+2 layers, dim 128, 4 heads, FFN 256, cross 16 / causal 8 (encoder 16),
  for tests and CI.

Each ABC position has one W_phi shared by all its layers and registered once: the encoder's
``self_attn_phi`` (encoder self attention), the decoder's ``self_attn_phi`` and
``encoder_attn_phi``. The overhead is logged when the model is built. With all three positions
softmax, the model is fairseq's ``transformer``: same modules, same parameter names, same outputs.
"""

from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerModel, base_architecture
from fairseq.utils import safe_getattr

from ..modules import log_phi_parameter_overhead
from .abc_decoder import ABCTransformerDecoder
from .abc_encoder import ABCTransformerEncoder
from .abc_options import DECODER_CROSS, DECODER_SELF, ENCODER_SELF, add_abc_args, set_abc_defaults
from .build_helpers import NoHubModels, as_namespace

# Attention positions of an encoder-decoder model, in the order of their flags' help texts.
MT_POSITIONS = (ENCODER_SELF, DECODER_SELF, DECODER_CROSS)


@register_model("abc_transformer")
class ABCTransformerModel(NoHubModels, TransformerModel):
    """fairseq's ``transformer`` whose encoder self attention, decoder self attention and cross
    attention may each be ABC_MLP (see the module docstring for flags and architectures).

    Forward and generation are fairseq's: ``forward(src_tokens [B, S], src_lengths [B],
    prev_output_tokens [B, T]) -> (logits [B, T, V], extra)``. ABC attention returns no
    attention weights, so ``extra["attn"]`` is ``[None]`` when the cross attention is ABC
    (alignment printing is unavailable there). In incremental decoding the cross attention builds
    its bounded memory from the encoder output on the first step and caches it, once per
    sentence in beam search (``set_beam_size``, which ``SequenceGenerator`` calls); it is
    reordered only when sentences leave the batch.
    """

    def set_beam_size(self, beam_size: int) -> None:
        """Tell the decoder's attention modules the beam (fairseq's generator calls this when
        the model has it, as BART does; the base transformer lacks it)."""
        self.decoder.set_beam_size(beam_size)

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        add_abc_args(parser, MT_POSITIONS)

    @classmethod
    def build_model(cls, args, task):
        args = as_namespace(args)
        abc_transformer(args)  # fills what an older or hand-made config lacks, like fairseq does
        model = super().build_model(args, task)
        log_phi_parameter_overhead(model)
        return model

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return ABCTransformerEncoder(args, src_dict, embed_tokens)

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        return ABCTransformerDecoder(args, tgt_dict, embed_tokens,
                                     no_encoder_attn=safe_getattr(args, "no_cross_attention", False))


def _default_dims(args, embed: int, ffn: int, heads: int, layers: int) -> None:
    """Encoder and decoder sizes not given on the command line."""
    for side in ("encoder", "decoder"):
        for name, value in (("embed_dim", embed), ("ffn_embed_dim", ffn), ("attention_heads", heads),
                            ("layers", layers)):
            setattr(args, f"{side}_{name}", safe_getattr(args, f"{side}_{name}", value))


def _abc_defaults(args, cross: int, causal: int, encoder: int) -> None:
    set_abc_defaults(args, DECODER_CROSS, "abc", cross)
    set_abc_defaults(args, DECODER_SELF, "abc", causal)
    set_abc_defaults(args, ENCODER_SELF, "softmax", encoder)


@register_model_architecture("abc_transformer", "abc_transformer")
def abc_transformer(args):
    """fairseq's base transformer; ABC cross (32 slots) and causal (8) attention, softmax encoder
    (32 slots if ``--encoder-attn abc``): the paper's WMT14 EN-DE model."""
    _abc_defaults(args, cross=32, causal=8, encoder=32)
    base_architecture(args)


@register_model_architecture("abc_transformer", "abc_transformer_wmt_en_de")
def abc_transformer_wmt_en_de(args):
    """The paper's WMT14 EN-DE setting (Table 10): base transformer, FFN 2048, dropout 0.1,
    cross 32 / causal 8 slots."""
    args.encoder_ffn_embed_dim = safe_getattr(args, "encoder_ffn_embed_dim", 2048)
    args.dropout = safe_getattr(args, "dropout", 0.1)
    abc_transformer(args)


@register_model_architecture("abc_transformer", "abc_transformer_wmt_en_de_gsa")
def abc_transformer_wmt_en_de_gsa(args):
    """``abc_transformer_wmt_en_de`` with gated slot attention (8 slots) in the decoder's causal
    self attention, ABC cross attention (32): beyond the paper."""
    set_abc_defaults(args, DECODER_SELF, "gsa", 8)
    abc_transformer_wmt_en_de(args)


@register_model_architecture("abc_transformer", "abc_transformer_wmt_en_de_gsa_softmax_cross")
def abc_transformer_wmt_en_de_gsa_softmax_cross(args):
    """The WMT14 EN-DE base transformer with softmax cross attention and gated slot attention (8
    slots) in the decoder's causal self attention: beyond the paper."""
    set_abc_defaults(args, DECODER_CROSS, "softmax", 32)
    abc_transformer_wmt_en_de_gsa(args)


@register_model_architecture("abc_transformer", "abc_transformer_iwslt_doc")
def abc_transformer_iwslt_doc(args):
    """The paper's IWSLT14 ES-EN document-level setting (Table 10): 6+6 layers, dim 512, 8 heads,
    FFN 1024, dropout 0.3, cross 128 / causal 64 slots (encoder 128 if ABC)."""
    _default_dims(args, embed=512, ffn=1024, heads=8, layers=6)
    args.dropout = safe_getattr(args, "dropout", 0.3)
    _abc_defaults(args, cross=128, causal=64, encoder=128)
    abc_transformer(args)


@register_model_architecture("abc_transformer", "abc_transformer_tiny")
def abc_transformer_tiny(args):
    """A CPU-sized model for tests and CI: 2+2 layers, dim 128, 4 heads, FFN 256, cross 16 /
    causal 8 slots (encoder 16 if ABC)."""
    _default_dims(args, embed=128, ffn=256, heads=4, layers=2)
    _abc_defaults(args, cross=16, causal=8, encoder=16)
    abc_transformer(args)
