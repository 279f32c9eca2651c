"""ABCMultiheadAttention: bounded-memory attention (ABC_MLP or any registered strategy) as a
drop-in for fairseq's MultiheadAttention, an adapter over the plain layer ``abc_fairseq.layers.ABCAttention``."""

import logging
from typing import Dict, Optional, Tuple

import torch
from fairseq.incremental_decoding_utils import with_incremental_state
from fairseq.modules.quant_noise import quant_noise
from torch import Tensor

from ..layers import ABCAttention, DecodingState
from ..strategies import ABCAttentionSpec
from .beam_memory import ROWS_KEY, first_of_groups, fold_queries, reorder_plan, shared_rows, unfold_outputs
from .masks import FutureMaskValidator

logger = logging.getLogger(__name__)

IncrementalState = Dict[str, Dict[str, Optional[Tensor]]]
# A causal buffer's pending beam reorder (``DecodingState.order``): the rows the next step gathers.
ORDER_KEY = "pending_order"

_warned_dropout = False


def _warn_dropout_once(dropout: float, strategy: str) -> None:
    global _warned_dropout
    if dropout > 0 and not _warned_dropout:
        _warned_dropout = True
        logger.warning(
            "attention_dropout=%g is not applied by %s attention (a kernel attention: it computes no "
            "probabilities to drop, see docs/strategies.md); softmax attention layers of the same model "
            "still use it", dropout, strategy,
        )


@with_incremental_state
class ABCMultiheadAttention(ABCAttention):
    """Multi-head bounded-memory attention with fairseq's MultiheadAttention API.

    The memory control is the ``Strategy`` that ``spec`` (an ``ABCAttentionSpec``, resolved and
    validated by the model) names, e.g. ``abc``: ABC_MLP, Peng et al. Eq. 12: each head writes its
    keys and values into ``memory_size`` slots with control weights phi = exp(W_phi x) normalised
    over positions, then reads the slots with an n-way softmax, out_t = V~^T softmax(scale * K~ q_t).
    The projections and the math are the plain layer's (``ABCAttention``, batch first); this
    adapter adds fairseq's Time x Batch layout, masks, incremental state and beam search.
    Three modes, fixed at construction:

    - causal self attention (``self_attention=True, causal=True``; decoder): row t reads the memory
      of its prefix. Whole sequences go through the strategy's parallel form; with an incremental
      state, new tokens go through its recurrent form on a constant-size state.
    - bidirectional self attention (``self_attention=True``; encoder).
    - cross attention (``encoder_decoder_attention=True``): the memory is built from the encoder
      output once and, with ``static_kv``, cached in the incremental state.

    Padding (``key_padding_mask``, True at padding, left or right) is never written to memory.

    ``phi`` is the module the strategy ties across the layers of one attention position
    (``spec.shared``: W_phi, a ``PhiProjection``, for the ABC_MLP family; the Linformer matrix;
    None when the strategy ties nothing), registered once on the owning model. Parameters the
    strategy keeps per layer (T2R's MLP, RFA's scales, ...) live in ``self.strategy``.

    Differences from MultiheadAttention, by design:

    - ``attn_mask``: a bounded memory has no per-key scores to mask. In causal mode the standard
      future mask fairseq passes is checked and otherwise ignored (causality is built in); any
      other mask, or a mask in the other modes, raises.
    - attention dropout: ``dropout`` is handed to the strategy, which applies it in training to
      the probabilities it reads its memory with (the softmax over slots, window or clusters). The
      kernel attentions (``elu``, ``rfa``, ``t2r``, ``linear``, ``gated-linear``) compute no such
      probabilities and apply none (``Strategy.applies_dropout`` is False; one warning is logged
      when it is > 0). Residual and FFN dropout are unaffected.
    - no attention weights are returned (``(out, None)``); ``before_softmax`` is unsupported;
      ``add_bias_kv``, ``add_zero_attn``, xFormers and cross-self-attention are rejected.

    Tensors are Time x Batch x Channel as in fairseq. Parameters keep fairseq's names
    (``q_proj, k_proj, v_proj, out_proj``) so softmax checkpoints map onto these layers.
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
        spec: ABCAttentionSpec,
        causal: bool = False,
    ):
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
        mode = "causal" if causal else ("encoder" if self_attention else "cross")
        super().__init__(embed_dim, num_heads, spec, mode, kdim=kdim, vdim=vdim, dropout=dropout, bias=bias,
                         stack_projections=True)
        self.self_attention = self_attention
        self.encoder_decoder_attention = encoder_decoder_attention
        self.causal = causal
        for name in ("k_proj", "v_proj", "q_proj", "out_proj"):  # the same modules unless q_noise > 0
            setattr(self, name, quant_noise(getattr(self, name), q_noise, qn_block_size))

        self.beam_size = 1
        self.onnx_trace = False
        self._future_mask_ok = FutureMaskValidator()

    def _warn_dropout(self, dropout: float) -> None:
        _warn_dropout_once(dropout, self.strategy.name)

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

        Returns (out [T, B, C], None): a bounded memory has no [T, S] attention weights to return.
        """
        if before_softmax:
            raise NotImplementedError("ABC attention has no pre-softmax [T, S] scores (before_softmax)")
        T, B, C = query.shape
        if C != self.embed_dim:
            raise ValueError(f"query has {C} channels, expected embed_dim={self.embed_dim}")
        if self.encoder_decoder_attention:
            if attn_mask is not None:
                raise ValueError("ABC cross attention cannot apply attn_mask")
            out = self._cross(query, key, value, key_padding_mask, incremental_state, static_kv)
        else:
            valid = self._valid(key_padding_mask)
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
                out = self._causal(query, key, value, valid, incremental_state)
            else:
                if attn_mask is not None:
                    raise ValueError("ABC bidirectional self attention cannot apply attn_mask")
                if incremental_state is not None:
                    raise ValueError("bidirectional ABC self attention has no incremental mode")
                out = self._encode(query, key, value, valid)

        return self.output(out, time_first=True), None

    @staticmethod
    def _batch_first(x: Tensor) -> Tensor:
        """[T, B, C] -> a [B, T, C] view, the plain layer's layout (no copy)."""
        return x.transpose(0, 1)

    @classmethod
    def _batch_first_all(cls, query: Tensor, key: Tensor, value: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        """The three inputs batch first; one tensor given for several stays one (``self_heads``
        projects it once)."""
        q = cls._batch_first(query)
        k = q if key is query else cls._batch_first(key)
        return q, k, (k if value is key else q if value is query else cls._batch_first(value))

    def _causal(self, query, key, value, valid, incremental_state) -> Tensor:
        """Returns [B, H, T, head_dim]; advances the strategy's state in ``incremental_state``."""
        query, key, value = self._batch_first_all(query, key, value)
        if incremental_state is None:
            return self.causal_heads(query, key, value, valid)
        buffer = dict(self._get_input_buffer(incremental_state))
        order = buffer.pop(ORDER_KEY, None)
        out, state = self.extend_state(query, key, value, valid, DecodingState(buffer, order) if buffer else None)
        self._set_input_buffer(incremental_state, state.tensors)
        return out

    def _encode(self, query, key, value, valid) -> Tensor:
        """Bidirectional self attention, [B, H, T, head_dim] (the layer's ``encode_heads``)."""
        return self.encode_heads(*self._batch_first_all(query, key, value), valid)

    def _cross(self, query, key, value, key_padding_mask, incremental_state, static_kv) -> Tensor:
        """Returns [B, H, T, head_dim]; builds (or reuses) the memory of the encoder output. Cached
        (incremental decoding with ``static_kv``), the memory is built once per sentence when the
        beams of a sentence share their encoder output (``beam_memory``); a decoding step that
        reads the cached memory does not look at the padding mask."""
        buffer = self._get_input_buffer(incremental_state) if incremental_state is not None else {}
        cache = incremental_state is not None and static_kv
        if cache and buffer:
            memory = dict(buffer)
            rows = int(memory.pop(ROWS_KEY, 1))
        else:
            if key is None:
                raise ValueError("ABC cross attention needs the encoder output as key on its first call")
            valid = self._valid(key_padding_mask)
            if value is not None and value is not key:
                rows = 1  # only a memory of the key alone is known to be shared
            else:
                rows = shared_rows(key, valid, self.beam_size) if cache else 1
            key, valid = first_of_groups(key, valid, rows)
            value = key if value is None or rows > 1 else value
            memory = self.memory_of(self._batch_first(key), self._batch_first(value), valid)
            if cache:
                self._set_input_buffer(incremental_state, self._with_rows(memory, rows))
        q = fold_queries(self.heads(self._batch_first(query), self.q_proj), rows)
        return unfold_outputs(self.read_heads(q, memory), rows)

    @staticmethod
    def _with_rows(memory: Dict[str, Tensor], rows: int) -> Dict[str, Optional[Tensor]]:
        """The cached memory, with its group size when it serves several rows."""
        buffer: Dict[str, Optional[Tensor]] = dict(memory)
        if rows > 1:
            buffer[ROWS_KEY] = torch.tensor(rows)
        return buffer

    # ----------------------------------------------------------------- incremental state
    def _get_input_buffer(self, incremental_state: Optional[IncrementalState]) -> Dict[str, Optional[Tensor]]:
        """The per-module state: the strategy's decoding state (causal) or the cross-attention
        memory, every tensor with the batch (x beam) dimension first."""
        result = self.get_incremental_state(incremental_state, "attn_state")
        return result if result is not None else {}

    def _set_input_buffer(self, incremental_state: Optional[IncrementalState],
                          buffer: Dict[str, Optional[Tensor]]):
        return self.set_incremental_state(incremental_state, "attn_state", buffer)

    @torch.jit.export
    def reorder_incremental_state(self, incremental_state: Optional[IncrementalState], new_order: Tensor):
        """Reorder (beam search) or shrink (finished sentences) the batch dimension of the state.
        An unchanged order copies nothing; the causal state only records the order, which its next
        step gathers into the same storage (``DecodingState``); a cross-attention memory shared by
        the beams of a sentence moves only when sentences leave the batch (see
        ``beam_memory.reorder_plan``)."""
        buffer = self._get_input_buffer(incremental_state)
        if not buffer:
            return incremental_state
        if self.causal:
            return self._set_input_buffer(incremental_state, self._reordered_causal(buffer, new_order))
        rows = int(buffer.pop(ROWS_KEY, 1))
        entries = next(tensor.shape[0] for tensor in buffer.values() if tensor is not None)
        index, rows = reorder_plan(new_order, rows, entries)
        if index is not None:
            for name, tensor in buffer.items():
                if tensor is not None:
                    buffer[name] = tensor.index_select(0, index)
        return self._set_input_buffer(incremental_state, self._with_rows(buffer, rows))

    @staticmethod
    def _reordered_causal(buffer: Dict[str, Optional[Tensor]], new_order: Tensor) -> Dict[str, Optional[Tensor]]:
        """The causal state's buffer after ``new_order``: nothing copied, the order recorded as
        ``DecodingState.order`` (composed with a pending one) for the next step to gather into the
        same storage. An unchanged order records nothing (the plan's check, shared by all layers)."""
        buffer = dict(buffer)
        pending = buffer.pop(ORDER_KEY, None)
        tensors = {name: tensor for name, tensor in buffer.items() if tensor is not None}
        entries = pending.shape[0] if pending is not None else next(iter(tensors.values())).shape[0]
        index, _ = reorder_plan(new_order, 1, entries)
        state = DecodingState(tensors, pending)
        if index is not None:
            state = state.reorder(index)
        return dict(state.tensors, **({} if state.order is None else {ORDER_KEY: state.order}))

    def set_beam_size(self, beam_size: int):
        """The beam of the coming searches: cross attention then builds one memory per sentence
        for the ``beam_size`` rows that share its encoder output (checked, see ``beam_memory``)."""
        self.beam_size = beam_size

    def prepare_for_onnx_export_(self):
        self.onnx_trace = True
