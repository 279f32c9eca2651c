"""fairseq's TransformerEncoder with bidirectional ABC self attention where the config asks for it."""

from typing import Optional

from fairseq.models.transformer import TransformerConfig, TransformerEncoder

from ..modules import ABCAttentionSpec, ABCTransformerEncoderLayer
from .abc_decoder import wrap_layer
from .abc_options import ENCODER_SELF, abc_attention_spec


class ABCTransformerEncoder(TransformerEncoder):
    """TransformerEncoder whose self attention is ABC with ``--encoder-memory`` slots when
    ``--encoder-attn abc`` (the paper's "all" setting), fairseq's softmax attention otherwise.

    The options are read from ``self.args`` (the model's args, set by ``TransformerEncoder``
    before any layer is built). With ABC, one W_phi (``self_attn_phi``: ``embed_dim -> heads x n``)
    is registered on this encoder and shared by all its layers. Padding (fairseq's left-padded
    sources) is never written to the memories. With softmax, the layers are fairseq's own and the
    encoder is fairseq's encoder, parameter for parameter.

    Input src_tokens [B, S]; output as fairseq's encoder (``encoder_out`` [S, B, C], ...).
    """

    def build_encoder_layer(self, args):
        cfg = TransformerConfig.from_namespace(args)
        spec = self._abc_spec(cfg)
        if spec is None:
            return super().build_encoder_layer(cfg)
        layer = ABCTransformerEncoderLayer(cfg, self_attn=spec, return_fc=self.return_fc)
        return wrap_layer(layer, cfg)

    def _abc_spec(self, cfg) -> Optional[ABCAttentionSpec]:
        # Any strategy --encoder-attn names; its tied module (W_phi for abc) is registered once here.
        return abc_attention_spec(self, self.args, ENCODER_SELF, cfg.encoder.embed_dim,
                                  cfg.encoder.attention_heads)
