"""ABCMultiheadAttention: ABC_MLP as a drop-in for fairseq's MultiheadAttention."""

import logging
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor

from fairseq.incremental_decoding_utils import with_incremental_state
from fairseq.modules.quant_noise import quant_noise

from ..ops import ABCState, abc, abc_memory, abc_read, causal_abc, causal_abc_step
from .masks import FutureMaskValidator, mask_padding_logits
from .phi_projection import PhiProjection

logger = logging.getLogger(__name__)

IncrementalState = Dict[str, Dict[str, Optional[Tensor]]]

_warned_dropout = False


def _warn_dropout_once(dropout: float) -> None:
    global _warned_dropout
    if dropout > 0 and not _warned_dropout:
        _warned_dropout = True
        logger.warning(
            "attention_dropout=%g is not applied by ABC attention (see ABCMultiheadAttention); "
            "softmax attention layers of the same model still use it", dropout,
        )


@with_incremental_state
class ABCMultiheadAttention(nn.Module):
    """Multi-head ABC_MLP attention (Peng et al., Eq. 12) with fairseq's MultiheadAttention API.

    Each head writes its keys and values into ``memory_size`` slots with control weights
    phi = exp(W_phi x) normalised over positions, then reads the slots with an n-way softmax:
    out_t = V~^T softmax(scale * K~ q_t). Three modes, fixed at construction:

    - causal self attention (``self_attention=True, causal=True``; decoder): row t reads the memory
      of its prefix. Whole sequences go through the chunked ``causal_abc``; with an incremental
      state, one token at a time goes through ``causal_abc_step`` on a constant-size ``ABCState``.
    - bidirectional self attention (``self_attention=True``; encoder): one memory per sequence.
    - cross attention (``encoder_decoder_attention=True``): the memory K~, V~ is built from the
      encoder output once and, with ``static_kv``, cached in the incremental state.

    Padding (``key_padding_mask``, True at padding, left or right) is never written to memory.

    W_phi (``phi``) is a ``PhiProjection`` shared by all layers of one attention position: it is
    kept in a plain list so that the owning model registers it once.

    Differences from MultiheadAttention, by design:

    - ``attn_mask``: ABC has no per-key scores to mask. In causal mode the standard future mask
      fairseq passes is checked and otherwise ignored (causality is built in); any other mask, or
      a mask in the other modes, raises.
    - attention dropout: the slot-read probabilities live inside the fused causal op, so there is
      no tensor to drop out; ``dropout`` is accepted for signature compatibility and NOT applied
      in any mode (one warning is logged when it is > 0). Residual and FFN dropout are unaffected.
    - no attention weights are returned (``(out, None)``); ``before_softmax`` is unsupported;
      ``add_bias_kv``, ``add_zero_attn``, xFormers and cross-self-attention are rejected.

    Tensors are Time x Batch x Channel as in fairseq. Parameters keep fairseq's names
    (``q_proj, k_proj, v_proj, out_proj``) so softmax checkpoints map onto ABC layers.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        kdim: Optional[int] = None,
        vdim: Optional[int] = None,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        self_attention: bool = False,
        encoder_decoder_attention: bool = False,
        dictionary=None,
        q_noise: float = 0.0,
        qn_block_size: int = 8,
        xformers_att_config: Optional[str] = None,
        xformers_blocksparse_layout=None,
        xformers_blocksparse_blocksize: Optional[int] = 16,
        *,
        memory_size: int,
        phi: PhiProjection,
        causal: bool = False,
    ):
        super().__init__()
        if self_attention == encoder_decoder_attention:
            raise ValueError(
                "ABC attention must be either self attention or encoder-decoder attention "
                f"(got self_attention={self_attention}, encoder_decoder_attention="
                f"{encoder_decoder_attention}); --cross-self-attention is not supported with ABC"
            )
        if causal and not self_attention:
            raise ValueError("causal ABC is only defined for self attention")
        if add_bias_kv or add_zero_attn:
            raise ValueError("ABC attention does not support add_bias_kv / add_zero_attn")
        if xformers_att_config is not None:
            raise ValueError("ABC attention does not run through xFormers: drop the xformers attention config")
        if embed_dim % num_heads != 0:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        if memory_size < 1:
            raise ValueError(f"memory_size must be a positive number of slots, got {memory_size}")

        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.qkv_same_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if self_attention and not self.qkv_same_dim:
            raise ValueError("self attention requires query, key and value of the same size")
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.memory_size = memory_size
        self.self_attention = self_attention
        self.encoder_decoder_attention = encoder_decoder_attention
        self.causal = causal
        self.dropout = dropout  # not applied: see the class docstring
        _warn_dropout_once(dropout)

        expected = (self.kdim, num_heads * memory_size)
        if not isinstance(phi, nn.Linear) or (phi.in_features, phi.out_features) != expected:
            got = (getattr(phi, "in_features", None), getattr(phi, "out_features", None))
            raise ValueError(
                f"phi must map the key input to num_heads * memory_size logits: expected "
                f"(in, out) = {expected}, got {got}"
            )
        # A plain list: the shared projection is registered on the model, not on every layer.
        self._phi: List[PhiProjection] = [phi]

        self.k_proj = quant_noise(nn.Linear(self.kdim, embed_dim, bias=bias), q_noise, qn_block_size)
        self.v_proj = quant_noise(nn.Linear(self.vdim, embed_dim, bias=bias), q_noise, qn_block_size)
        self.q_proj = quant_noise(nn.Linear(embed_dim, embed_dim, bias=bias), q_noise, qn_block_size)
        self.out_proj = quant_noise(nn.Linear(embed_dim, embed_dim, bias=bias), q_noise, qn_block_size)
        self.reset_parameters()

        self.beam_size = 1
        self.onnx_trace = False
        self._future_mask_ok = FutureMaskValidator()

    @property
    def phi(self) -> PhiProjection:
        return self._phi[0]

    def reset_parameters(self):
        # Same initialisation as fairseq's MultiheadAttention, so both attentions start alike.
        gain = 2 ** -0.5 if self.qkv_same_dim else 1.0
        for proj in (self.k_proj, self.v_proj, self.q_proj):
            nn.init.xavier_uniform_(proj.weight, gain=gain)
        nn.init.xavier_uniform_(self.out_proj.weight)
        if self.out_proj.bias is not None:
            nn.init.constant_(self.out_proj.bias, 0.0)

    def extra_repr(self) -> str:
        mode = ("causal" if self.causal else "bidirectional") if self.self_attention else "cross"
        return f"mode={mode}, num_heads={self.num_heads}, memory_size={self.memory_size}"

    # ----------------------------------------------------------------- projections
    def _heads(self, x: Tensor, proj: nn.Module) -> Tensor:
        """[T, B, C_in] -> [B, H, T, head_dim]."""
        T, B, _ = x.shape
        return proj(x).view(T, B, self.num_heads, self.head_dim).permute(1, 2, 0, 3)

    def _phi_logits(self, x: Tensor) -> Tensor:
        """[T, B, kdim] -> [B, H, T, memory_size]."""
        T, B, _ = x.shape
        return self.phi(x).view(T, B, self.num_heads, self.memory_size).permute(1, 2, 0, 3)

    # ----------------------------------------------------------------- forward
    def forward(
        self,
        query: Tensor,
        key: Optional[Tensor],
        value: Optional[Tensor],
        key_padding_mask: Optional[Tensor] = None,
        incremental_state: Optional[IncrementalState] = None,
        need_weights: bool = True,
        static_kv: bool = False,
        attn_mask: Optional[Tensor] = None,
        before_softmax: bool = False,
        need_head_weights: bool = False,
    ) -> Tuple[Tensor, Optional[Tensor]]:
        """query: [T, B, C]; key, value: [S, B, kdim / vdim] (S = T for self attention);
        key_padding_mask: [B, S], True (or 1) at padding; attn_mask: see the class docstring.

        Returns (out [T, B, C], None): ABC has no [T, S] attention weights to return.
        """
        if before_softmax:
            raise NotImplementedError("ABC attention has no pre-softmax [T, S] scores (before_softmax)")
        T, B, C = query.shape
        if C != self.embed_dim:
            raise ValueError(f"query has {C} channels, expected embed_dim={self.embed_dim}")
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.to(torch.bool)

        if self.encoder_decoder_attention:
            if attn_mask is not None:
                raise ValueError("ABC cross attention cannot apply attn_mask")
            out = self._cross(query, key, value, key_padding_mask, incremental_state, static_kv)
        else:
            key = query if key is None else key
            value = key if value is None else value
            if key.shape[0] != T:
                raise ValueError(
                    f"ABC self attention needs keys for the query positions only: query length {T}, "
                    f"key length {key.shape[0]} (--cross-self-attention is not supported)"
                )
            if self.causal:
                if attn_mask is not None:
                    self._future_mask_ok(attn_mask, T)
                out = self._causal(query, key, value, key_padding_mask, incremental_state)
            else:
                if attn_mask is not None:
                    raise ValueError("ABC bidirectional self attention cannot apply attn_mask")
                if incremental_state is not None:
                    raise ValueError("bidirectional ABC self attention has no incremental mode")
                out = abc(self._heads(query, self.q_proj), self._heads(key, self.k_proj),
                          self._heads(value, self.v_proj), self._phi_logits(key),
                          key_padding_mask=key_padding_mask, scale=self.scaling)

        out = out.permute(2, 0, 1, 3).reshape(T, B, self.embed_dim)  # [B, H, T, d] -> [T, B, C]
        return self.out_proj(out), None

    def _causal(self, query, key, value, key_padding_mask, incremental_state) -> Tensor:
        """Returns [B, H, T, head_dim]; advances the ABCState in ``incremental_state``."""
        q = self._heads(query, self.q_proj)
        k = self._heads(key, self.k_proj)
        v = self._heads(value, self.v_proj)
        logits = mask_padding_logits(self._phi_logits(key), key_padding_mask)
        if incremental_state is None:
            return causal_abc(q, k, v, logits, scale=self.scaling)
        buffer = self._get_input_buffer(incremental_state)
        state = self._load_state(buffer)
        if q.shape[2] == 1:
            out, state = causal_abc_step(q, k, v, logits, state, scale=self.scaling)
        else:  # several new tokens at once: continue the chunked op from the saved memory
            out, state = causal_abc(q, k, v, logits, scale=self.scaling, initial_state=state,
                                    return_state=True)
        buffer.update(state._asdict())
        self._set_input_buffer(incremental_state, buffer)
        return out

    def _cross(self, query, key, value, key_padding_mask, incremental_state, static_kv) -> Tensor:
        """Returns [B, H, T, head_dim]; builds (or reuses) the memory of the encoder output."""
        buffer = self._get_input_buffer(incremental_state) if incremental_state is not None else {}
        cache = incremental_state is not None and static_kv
        if cache and buffer.get("key_memory") is not None:
            memory = (buffer["key_memory"], buffer["value_memory"])
        else:
            if key is None:
                raise ValueError("ABC cross attention needs the encoder output as key on its first call")
            value = key if value is None else value
            memory = abc_memory(self._heads(key, self.k_proj), self._heads(value, self.v_proj),
                                self._phi_logits(key), key_padding_mask)
            if cache:
                buffer["key_memory"], buffer["value_memory"] = memory
                self._set_input_buffer(incremental_state, buffer)
        return abc_read(self._heads(query, self.q_proj), memory[0], memory[1], scale=self.scaling)

    # ----------------------------------------------------------------- incremental state
    @staticmethod
    def _load_state(buffer: Dict[str, Optional[Tensor]]) -> Optional[ABCState]:
        if buffer.get("log_normalizer") is None:
            return None
        return ABCState(buffer["key_memory"], buffer["value_memory"], buffer["log_normalizer"])

    def _get_input_buffer(self, incremental_state: Optional[IncrementalState]) -> Dict[str, Optional[Tensor]]:
        """The per-module state: ABCState fields (causal) or the cross-attention memory
        (``key_memory`` / ``value_memory``), each with the batch (x beam) dimension first."""
        result = self.get_incremental_state(incremental_state, "attn_state")
        return result if result is not None else {}

    def _set_input_buffer(self, incremental_state: Optional[IncrementalState],
                          buffer: Dict[str, Optional[Tensor]]):
        return self.set_incremental_state(incremental_state, "attn_state", buffer)

    @torch.jit.export
    def reorder_incremental_state(self, incremental_state: Optional[IncrementalState], new_order: Tensor):
        """Reorder (beam search) or shrink (finished sentences) the batch dimension of the state."""
        buffer = self._get_input_buffer(incremental_state)
        if not buffer:
            return incremental_state
        state = self._load_state(buffer)
        if state is not None:
            buffer.update(state.index_select(new_order)._asdict())
        for name in ("key_memory", "value_memory"):  # cross attention memory, if that is what we hold
            if state is None and buffer.get(name) is not None:
                buffer[name] = buffer[name].index_select(0, new_order)
        return self._set_input_buffer(incremental_state, buffer)

    def set_beam_size(self, beam_size: int):
        """Kept for API compatibility: the cached memories are already expanded to batch x beam."""
        self.beam_size = beam_size

    def prepare_for_onnx_export_(self):
        self.onnx_trace = True
