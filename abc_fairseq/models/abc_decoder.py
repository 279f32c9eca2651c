"""fairseq's TransformerDecoder with ABC attention where the config asks for it."""

from fairseq.models.transformer import TransformerConfig, TransformerDecoder

from ..modules import ABCTransformerDecoderLayer
from .abc_options import DECODER_CROSS, DECODER_SELF
from .attention_specs import abc_attention_spec
from .build_helpers import wrap_layer


class ABCTransformerDecoder(TransformerDecoder):
    """TransformerDecoder whose self attention (``--decoder-self-attn``) and cross attention
    (``--decoder-cross-attn``) may be bounded-memory attention (any registered strategy).

    The module a strategy ties across layers (W_phi, a ``PhiProjection``, for the ABC_MLP family;
    the Linformer matrix) is registered once on this decoder (``self_attn_phi``,
    ``encoder_attn_phi``) and shared by all its layers (one per layer with ``--untie-phi``:
    ``self_attn_phi_per_layer``, ...). When every position is
    softmax, the layers are fairseq's own and the decoder is fairseq's decoder, parameter for
    parameter.
    """

    def build_decoder_layer(self, cfg, no_encoder_attn=False):
        cfg = TransformerConfig.from_namespace(cfg)
        # The options are read from the original args: TransformerConfig.from_namespace does not
        # carry unknown keys over when args is an omegaconf DictConfig.
        heads = cfg.decoder.attention_heads
        self_attn = abc_attention_spec(self, self.args, DECODER_SELF, cfg.decoder.embed_dim, heads)
        encoder_attn = None
        if not no_encoder_attn:
            encoder_attn = abc_attention_spec(self, self.args, DECODER_CROSS, cfg.encoder.embed_dim, heads)
        if self_attn is None and encoder_attn is None:
            return super().build_decoder_layer(cfg, no_encoder_attn)
        layer = ABCTransformerDecoderLayer(cfg, self_attn=self_attn, encoder_attn=encoder_attn,
                                           no_encoder_attn=no_encoder_attn)
        return wrap_layer(layer, cfg)
