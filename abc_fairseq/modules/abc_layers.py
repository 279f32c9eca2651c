"""fairseq transformer layers whose attention may be ABC.

The layers only override the ``build_*_attention`` hooks of fairseq's own layers: everything
else (residuals, layer norms, FFN, dropout, incremental decoding) is fairseq's code. An attention
is bounded-memory (the strategy its spec names) when its ``ABCAttentionSpec`` is given,
fairseq's softmax MultiheadAttention otherwise.
"""

from typing import Optional

from fairseq.modules.transformer_layer import TransformerDecoderLayerBase, TransformerEncoderLayerBase

from ..strategies import ABCAttentionSpec
from .abc_attention import ABCMultiheadAttention


def _abc_attention(layer, spec: ABCAttentionSpec, embed_dim: int, num_heads: int, cfg, side, **mode):
    """ABCMultiheadAttention as fairseq's layers build MultiheadAttention: ``cfg.attention_dropout``,
    the layer's quant noise, ``side`` (cfg.encoder / cfg.decoder)'s xformers config; ``mode``: the
    mode keywords (``self_attention``, ``encoder_decoder_attention``, ``causal``, ``kdim``, ...)."""
    return ABCMultiheadAttention(embed_dim, num_heads, dropout=cfg.attention_dropout, q_noise=layer.quant_noise,
                                 qn_block_size=layer.quant_noise_block_size,
                                 xformers_att_config=side.xformers_att_config, spec=spec, **mode)


class ABCTransformerDecoderLayer(TransformerDecoderLayerBase):
    """Decoder layer with ABC causal self attention and/or ABC cross attention.

    Args:
        cfg: fairseq ``TransformerConfig``.
        self_attn: ABC spec for the (causal) self attention, or None for softmax.
        encoder_attn: ABC spec for the encoder-decoder attention, or None for softmax.
    """

    def __init__(
        self,
        cfg,
        self_attn: Optional[ABCAttentionSpec] = None,
        encoder_attn: Optional[ABCAttentionSpec] = None,
        no_encoder_attn: bool = False,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
    ):
        # The base constructor calls build_*_attention, which need the specs, so they are set
        # first, as plain (unregistered) attributes: the shared W_phi belongs to the model.
        self._abc_self_attn = self_attn
        self._abc_encoder_attn = encoder_attn
        super().__init__(cfg, no_encoder_attn=no_encoder_attn, add_bias_kv=add_bias_kv,
                         add_zero_attn=add_zero_attn)

    def build_self_attention(self, embed_dim, cfg, add_bias_kv=False, add_zero_attn=False):
        spec = self._abc_self_attn
        if spec is None:
            return super().build_self_attention(embed_dim, cfg, add_bias_kv, add_zero_attn)
        return _abc_attention(self, spec, embed_dim, cfg.decoder.attention_heads, cfg, cfg.decoder,
                              add_bias_kv=add_bias_kv, add_zero_attn=add_zero_attn,
                              self_attention=not cfg.cross_self_attention, causal=True)

    def build_encoder_attention(self, embed_dim, cfg):
        spec = self._abc_encoder_attn
        if spec is None:
            return super().build_encoder_attention(embed_dim, cfg)
        return _abc_attention(self, spec, embed_dim, cfg.decoder.attention_heads, cfg, cfg.encoder,
                              kdim=cfg.encoder.embed_dim, vdim=cfg.encoder.embed_dim, encoder_decoder_attention=True)


class ABCTransformerEncoderLayer(TransformerEncoderLayerBase):
    """Encoder layer with bidirectional ABC self attention (softmax when ``self_attn`` is None).

    fairseq 0.12.2 can route an eval-mode encoder layer loaded from a checkpoint through
    ``torch._transformer_encoder_layer_fwd``, which runs softmax attention on weights copied out
    of ``self_attn`` and never calls it. The switches it consults are pinned to False here, so
    the ABC attention always runs (later fairseq versions have no such path).
    """

    def __init__(self, cfg, self_attn: Optional[ABCAttentionSpec] = None, return_fc: bool = False):
        self._abc_self_attn = self_attn  # set before the base constructor: see the decoder layer
        super().__init__(cfg, return_fc=return_fc)

    def build_self_attention(self, embed_dim, cfg):
        spec = self._abc_self_attn
        if spec is None:
            return super().build_self_attention(embed_dim, cfg)
        return _abc_attention(self, spec, embed_dim, cfg.encoder.attention_heads, cfg, cfg.encoder,
                              self_attention=True)

    # Fast-path switches of fairseq 0.12.2's encoder layer: forced off when the attention is ABC.
    def _fast_path_switch(name):
        def get(self) -> bool:
            return self._abc_self_attn is None and bool(self.__dict__.get(name, False))

        def set_(self, value) -> None:
            self.__dict__[name] = value

        return property(get, set_)

    load_to_BT = _fast_path_switch("_load_to_BT")
    can_use_fastpath = _fast_path_switch("_can_use_fastpath")
    del _fast_path_switch
