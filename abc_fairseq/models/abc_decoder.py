"""fairseq's TransformerDecoder with ABC attention where the config asks for it."""

from typing import Optional

from fairseq.distributed import fsdp_wrap
from fairseq.models.transformer import TransformerConfig, TransformerDecoder
from fairseq.modules.checkpoint_activations import checkpoint_wrapper

from ..modules import ABCAttentionSpec, ABCTransformerDecoderLayer, PhiProjection
from .abc_options import DECODER_CROSS, DECODER_SELF, AttentionPosition, abc_attention_spec


def wrap_layer(layer, cfg):
    """Activation checkpointing and FSDP wrapping, as fairseq applies them to its own layers."""
    checkpoint = cfg.checkpoint_activations
    if checkpoint:
        layer = checkpoint_wrapper(layer, offload_to_cpu=cfg.offload_activations)
    # A checkpointed layer is always wrapped, whatever its size (fairseq's rule).
    return fsdp_wrap(layer, min_num_params=0 if checkpoint else cfg.min_params_to_wrap)


def shared_phi(owner, position: AttentionPosition, in_dim: int, num_heads: int,
               memory_size: int) -> PhiProjection:
    """The W_phi of ``position``, created and registered on ``owner`` (an encoder or decoder)
    the first time a layer asks for it; every later layer gets the same module. (ABC_MLP only:
    ``abc_attention_spec`` builds the spec of any strategy.)"""
    phi = owner._modules.get(position.phi_attr)
    if phi is None:
        phi = PhiProjection(in_dim, num_heads, memory_size)
        owner.add_module(position.phi_attr, phi)
    return phi


class ABCTransformerDecoder(TransformerDecoder):
    """TransformerDecoder whose self attention (``--decoder-self-attn``) and cross attention
    (``--decoder-cross-attn``) may be bounded-memory attention (any registered strategy).

    The module a strategy ties across layers (W_phi, a ``PhiProjection``, for the ABC_MLP family;
    the Linformer matrix) is registered once on this decoder (``self_attn_phi``,
    ``encoder_attn_phi``) and shared by all its layers. When every position is
    softmax, the layers are fairseq's own and the decoder is fairseq's decoder, parameter for
    parameter.
    """

    def build_decoder_layer(self, cfg, no_encoder_attn=False):
        cfg = TransformerConfig.from_namespace(cfg)
        # The options are read from the original args: TransformerConfig.from_namespace does not
        # carry unknown keys over when args is an omegaconf DictConfig.
        self_attn = self._abc_spec(DECODER_SELF, cfg.decoder.embed_dim, cfg.decoder.attention_heads)
        encoder_attn = None
        if not no_encoder_attn:
            encoder_attn = self._abc_spec(DECODER_CROSS, cfg.encoder.embed_dim,
                                          cfg.decoder.attention_heads)
        if self_attn is None and encoder_attn is None:
            return super().build_decoder_layer(cfg, no_encoder_attn)
        layer = ABCTransformerDecoderLayer(cfg, self_attn=self_attn, encoder_attn=encoder_attn,
                                           no_encoder_attn=no_encoder_attn)
        return wrap_layer(layer, cfg)

    def _abc_spec(self, position: AttentionPosition, in_dim: int, num_heads: int) -> Optional[ABCAttentionSpec]:
        return abc_attention_spec(self, self.args, position, in_dim, num_heads)
