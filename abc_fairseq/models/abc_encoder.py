"""fairseq's TransformerEncoder with bidirectional ABC self attention where the config asks for
it: the encoder of ``abc_transformer`` and the sentence encoder of ``abc_roberta``."""

from fairseq.models.transformer import TransformerConfig, TransformerEncoder

from ..modules import ABCTransformerEncoderLayer
from .abc_options import ENCODER_SELF
from .attention_specs import abc_attention_spec
from .build_helpers import wrap_layer


class ABCTransformerEncoder(TransformerEncoder):
    """TransformerEncoder whose self attention is the strategy of ``--encoder-attn`` with
    ``--encoder-memory`` slots (``abc``: the paper's "all" setting), fairseq's softmax attention
    when ``--encoder-attn softmax``.

    The options are read from ``self.args`` (the model's args, set by ``TransformerEncoder``
    before any layer is built). The module the strategy ties across layers (W_phi for ABC:
    ``self_attn_phi``, ``embed_dim -> heads x n``) is registered once on this encoder and shared
    by all its layers (one per layer, ``self_attn_phi_per_layer``, with ``--untie-phi``). Padding
    (fairseq's left-padded sources) is never written to the memories. With softmax, the layers are
    fairseq's own and the encoder is fairseq's encoder, parameter for parameter.

    Input src_tokens [B, S]; output as fairseq's encoder (``encoder_out`` [S, B, C], ...).
    """

    def build_encoder_layer(self, args):
        cfg = TransformerConfig.from_namespace(args)
        spec = abc_attention_spec(self, self.args, ENCODER_SELF, cfg.encoder.embed_dim, cfg.encoder.attention_heads)
        if spec is None:
            return super().build_encoder_layer(cfg)
        return wrap_layer(ABCTransformerEncoderLayer(cfg, self_attn=spec, return_fc=self.return_fc), cfg)
