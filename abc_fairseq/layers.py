"""ABCAttention: bounded-memory attention as a plain PyTorch layer (no fairseq on its import path).

Batch-first tensors ([B, T, C]), one of three modes fixed at construction, any registered
strategy (built from an ``ABCAttentionSpec``), a padding mask (True at padding) and explicit,
constant-size state objects for decoding. fairseq's ``ABCMultiheadAttention`` is an adapter over
this layer (its [T, B, C] layout, incremental state and beam search); the math runs here.

Example (a causal layer with ABC_MLP, 8 slots; ``spec.shared`` holds W_phi)::

    spec = ABCAttentionSpec.create("abc", memory_size=8, in_dim=64, num_heads=4, mode="causal")
    attn = ABCAttention(64, 4, spec, mode="causal")
    y = attn(x)                                   # x [B, T, 64] -> y [B, T, 64]
    state = None
    for t in range(T):                            # decoding, O(1) memory per token
        y_t, state = attn.step(x[:, t:t + 1], state)
"""

import logging
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor

from .fused_projection import FusedProjections
from .strategies import MODES, ABCAttentionSpec

logger = logging.getLogger(__name__)

_warned_dropout = False


def _warn_dropout_once(dropout: float, strategy: str) -> None:
    global _warned_dropout
    if dropout > 0 and not _warned_dropout:
        _warned_dropout = True
        logger.warning("attention dropout %g is not applied by %s attention (a kernel attention: it computes no "
                       "probabilities to drop, see docs/strategies.md)", dropout, strategy)


def _reorder(tensors: Dict[str, Tensor], order: Tensor) -> Dict[str, Tensor]:
    return {name: tensor.index_select(0, order) for name, tensor in tensors.items()}


def gather_rows_(tensors: Dict[str, Tensor], order: Tensor) -> Dict[str, Tensor]:
    """Rows ``order`` of every tensor (batch first), written over the first ``len(order)`` rows of
    its own storage and returned as views of it: the addresses stay. The rows pass through one
    transient gather (``index_select`` cannot write over its input: beams repeat and swap rows).
    An order longer than the batch (rows repeated into a larger batch) and a tensor that is not
    contiguous (an expanded view cannot be written) get new tensors."""
    gathered = {}
    for name, tensor in tensors.items():
        rows = tensor.index_select(0, order)
        fits = rows.shape[0] <= tensor.shape[0] and tensor.is_contiguous()
        gathered[name] = tensor[:rows.shape[0]].copy_(rows) if fits else rows
    return gathered


def settle_(previous: Optional[Dict[str, Tensor]], following: Dict[str, Tensor]) -> Dict[str, Tensor]:
    """The strategy's next state kept at the previous state's addresses: a tensor advanced in place
    (the same tensor) stays; a new one of the same shape, dtype and device is copied into the
    previous storage; anything else (a state that changed shape, one that shares storage with the
    previous, a previous tensor that is not contiguous, e.g. expanded) is taken as it is."""
    if not previous:
        return dict(following)
    settled = {}
    for name, tensor in following.items():
        old = previous.get(name)
        fits = (old is not None and old is not tensor and old.shape == tensor.shape and old.dtype == tensor.dtype
                and old.device == tensor.device and old.is_contiguous()  # not an expanded view
                and old.untyped_storage().data_ptr() != tensor.untyped_storage().data_ptr())
        settled[name] = old.copy_(tensor) if fits else tensor
    return settled


@dataclass
class DecodingState:
    """The causal state after the tokens seen so far: the strategy's tensors, batch first, of a
    size that does not grow with the number of tokens (ABC_MLP: S_k, S_v [B, H, n, d] and the
    log normaliser [B, H, n]).

    The state lives at fixed addresses: ``ABCAttention.step`` advances it in place (the strategy's
    in-place step, or its result copied back into the same storage) and returns it, so a state
    passed to ``step`` is consumed (``clone()`` one to branch). ``order`` is a pending beam
    reorder: the rows of ``tensors`` the next step continues, gathered by that step into the same
    storage (``gather_rows_``), so that a reorder copies nothing by itself."""

    tensors: Dict[str, Tensor]
    order: Optional[Tensor] = None

    def reorder(self, order: Tensor) -> "DecodingState":
        """The state of the rows ``order`` (beam search: reorder, repeat or drop rows): the index
        is recorded (composed with a pending one), the tensors are shared and gathered by the next
        step. ``order`` is copied, so that the caller may edit it afterwards."""
        order = order.clone() if self.order is None else self.order.index_select(0, order)
        return DecodingState(self.tensors, order)

    def gathered(self) -> Dict[str, Tensor]:
        """The tensors with the pending order applied in their own storage (``gather_rows_``)."""
        return self.tensors if self.order is None else gather_rows_(self.tensors, self.order)

    def clone(self) -> "DecodingState":
        """An independent copy (new storage) of the state, its pending order applied."""
        if self.order is not None:
            return DecodingState(_reorder(self.tensors, self.order))  # index_select copies
        return DecodingState({name: tensor.clone() for name, tensor in self.tensors.items()})

    def numel(self) -> int:
        return sum(tensor.numel() for tensor in self.tensors.values())


@dataclass
class CrossMemory:
    """The memory written from a key sequence (cross attention, or bidirectional self attention),
    batch first ([B, H, n, d] and what the strategy keeps beside), read by any number of queries."""

    tensors: Dict[str, Tensor]

    def reorder(self, order: Tensor) -> "CrossMemory":
        return CrossMemory(_reorder(self.tensors, order))

    def numel(self) -> int:
        return sum(tensor.numel() for tensor in self.tensors.values())


class ABCAttention(nn.Module):
    """Multi-head bounded-memory attention on batch-first tensors.

    embed_dim, num_heads: model width C and heads H (head size d = C / H).
    spec: an ``ABCAttentionSpec`` (strategy, memory size n, settings, the module ``spec.shared``
        tied across the layers that share the spec: W_phi for the ABC_MLP family, or None).
        ``spec.in_dim`` must be ``kdim`` and ``spec.num_heads`` ``num_heads``. The shared module
        is held in a plain list (not registered here): register it once on the model that owns
        it, or pass ``register_shared=True`` when this layer is its only owner.
    mode: "causal" (row t reads the memory of its prefix), "encoder" (bidirectional self
        attention) or "cross" (queries read the memory of another sequence).
    kdim, vdim: key / value input sizes (cross attention only; default embed_dim).
    dropout: attention dropout over the memory slots, training only (strategies that compute no
        slot probabilities apply none and say so once).
    stack_projections: self attention keeps q, k, v's weights in one storage (three views), so
        that with gradients off one input is projected by one product (``FusedProjections``):
        fairseq's adapter turns it on; off by default, since a checkpoint writer that refuses
        tensors sharing storage (safetensors) would refuse these.

    Parameters: ``q_proj, k_proj, v_proj, out_proj`` (nn.Linear) and ``strategy`` (the strategy's
    per-layer parameters, if any), initialised as fairseq's MultiheadAttention.
    """

    _fused: Optional[FusedProjections] = None  # (a layer pickled before it existed has none)

    def __init__(self, embed_dim: int, num_heads: int, spec: ABCAttentionSpec, mode: str = "causal",
                 kdim: Optional[int] = None, vdim: Optional[int] = None, dropout: float = 0.0, bias: bool = True,
                 register_shared: bool = False, stack_projections: bool = False):
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if embed_dim % num_heads != 0:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.qkv_same_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if mode != "cross" and not self.qkv_same_dim:
            raise ValueError("self attention requires query, key and value of the same size")
        if (spec.in_dim, spec.num_heads) != (self.kdim, num_heads):
            raise ValueError(f"the spec of {spec.name} (its phi / shared module) was built for key inputs of "
                             f"{spec.in_dim} and {spec.num_heads} heads; this attention has {self.kdim} and "
                             f"{num_heads}")
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.memory_size = spec.memory_size
        self.dropout = dropout
        self.strategy_spec = spec  # a plain attribute: the shared module belongs to its owner
        self.strategy = spec.build(self.head_dim, mode, scale=self.scaling, dropout=dropout)
        if not self.strategy.applies_dropout():
            self._warn_dropout(dropout)
        self.k_proj = nn.Linear(self.kdim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(self.vdim, embed_dim, bias=bias)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.reset_parameters()
        self._fused = FusedProjections() if stack_projections and mode != "cross" else None
        self._tile_projections()
        if register_shared and spec.shared is not None:
            self.shared = spec.shared

    @property
    def mode(self) -> str:
        return self.strategy.mode

    @property
    def phi(self) -> Optional[nn.Module]:
        """The shared control module (W_phi, the Linformer matrix) or None."""
        return self.strategy.shared

    def _warn_dropout(self, dropout: float) -> None:
        _warn_dropout_once(dropout, self.strategy.name)

    def _tile_projections(self) -> None:
        """Self attention's q, k, v weights in one storage, for one product where gradients are off
        (``self_heads``)."""
        if self._fused is not None:
            self._fused.tile_((self.q_proj, self.k_proj, self.v_proj))

    def _apply(self, fn, *args, **kwargs):
        # .to() / .half() / .cuda() give every parameter storage of its own: tile them again.
        super()._apply(fn, *args, **kwargs)
        self._tile_projections()
        return self

    def reset_parameters(self):
        # fairseq MultiheadAttention's initialisation, so both attentions start alike.
        gain = 2 ** -0.5 if self.qkv_same_dim else 1.0
        for proj in (self.k_proj, self.v_proj, self.q_proj):
            nn.init.xavier_uniform_(proj.weight, gain=gain)
        nn.init.xavier_uniform_(self.out_proj.weight)
        if self.out_proj.bias is not None:
            nn.init.constant_(self.out_proj.bias, 0.0)

    def extra_repr(self) -> str:
        return (f"mode={self.mode}, strategy={self.strategy.name}, num_heads={self.num_heads}, "
                f"memory_size={self.memory_size}")

    # ------------------------------------------------------------- the public, batch-first API
    def forward(self, query: Tensor, key: Optional[Tensor] = None, value: Optional[Tensor] = None,
                padding_mask: Optional[Tensor] = None) -> Tensor:
        """query [B, T, C] -> [B, T, C]. Self attention (causal, encoder): key and value default
        to the query. Cross: key [B, S, kdim] (value [B, S, vdim], default the key) is required.
        padding_mask: [B, S] bool, True at padding (left or right), never written to memory."""
        valid = self._valid(padding_mask)
        if self.mode == "cross":
            if key is None:
                raise ValueError("cross attention needs the key sequence")
            memory = self.memory_of(key, value, valid)  # written first: k, v are freed before q exists
            out = self.read_heads(self.heads(query, self.q_proj), memory)
        else:
            key = query if key is None else key
            value = key if value is None else value
            if key.shape[1] != query.shape[1]:
                raise ValueError(f"self attention needs keys for the query positions only: query length "
                                 f"{query.shape[1]}, key length {key.shape[1]}")
            if self.mode == "causal":
                out = self.causal_heads(query, key, value, valid)
            else:
                out = self.encode_heads(query, key, value, valid)
        return self.output(out)

    def step(self, query: Tensor, state=None, padding_mask: Optional[Tensor] = None):
        """Decoding. Causal: query [B, T_new, C] (usually T_new = 1) after ``state`` (a
        ``DecodingState``, None at the start) -> (out [B, T_new, C], the state advanced in place:
        the same storage, see ``DecodingState``); the outputs equal ``forward`` on the whole
        sequence. Cross: ``state`` is the ``CrossMemory`` of ``memory(key)``, returned unchanged.
        Encoder: no decoding form."""
        if self.mode == "cross":
            if not isinstance(state, CrossMemory):
                raise ValueError("cross attention decodes against a CrossMemory: pass state=layer.memory(key)")
            return self.read(query, state), state
        if self.mode != "causal":
            raise ValueError("bidirectional self attention has no decoding step")
        if state is not None and not isinstance(state, DecodingState):
            raise TypeError(f"state must be a DecodingState or None, got {type(state).__name__}")
        out, state = self.extend_state(query, query, query, self._valid(padding_mask), state)
        return self.output(out), state

    def memory(self, key: Tensor, value: Optional[Tensor] = None, padding_mask: Optional[Tensor] = None) -> CrossMemory:
        """The memory of key [B, S, kdim] (value [B, S, vdim], default the key), for ``read``."""
        if self.mode == "causal":
            raise ValueError("causal attention has no whole-sequence memory: use step()")
        return CrossMemory(self.memory_of(key, value, self._valid(padding_mask)))

    def read(self, query: Tensor, memory: CrossMemory) -> Tensor:
        """query [B, T, C] reads ``memory`` -> [B, T, C]."""
        return self.output(self.read_heads(self.heads(query, self.q_proj), memory.tensors))

    # ------------------------------------------------ the math on heads (shared with the adapter)
    @staticmethod
    def _valid(padding_mask: Optional[Tensor]) -> Optional[Tensor]:
        """A padding mask [B, S] (True or 1 at padding) -> valid [B, S] bool (True at real tokens), or None."""
        return None if padding_mask is None else ~padding_mask.to(torch.bool)

    def heads(self, x: Tensor, proj: nn.Module) -> Tensor:
        """x [B, T, C_in] (any strides) -> [B, H, T, d]."""
        B, T, _ = x.shape
        return proj(x).reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def self_heads(self, query: Tensor, key: Tensor, value: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        """q, k, v [B, H, T, d] of self attention's inputs [B, T, C]; one product when the three are
        one tensor and gradients are off (``FusedProjections``), else one per projection."""
        projs, fuse = (self.q_proj, self.k_proj, self.v_proj), self._fused
        fused = fuse(projs, query) if fuse is not None and key is query and value is query else None
        if fused is None:
            return self.heads(query, self.q_proj), self.heads(key, self.k_proj), self.heads(value, self.v_proj)
        shape = (*query.shape[:2], self.num_heads, self.head_dim)
        q, k, v = fused
        return q.reshape(shape).transpose(1, 2), k.reshape(shape).transpose(1, 2), v.reshape(shape).transpose(1, 2)

    def output(self, out: Tensor, time_first: bool = False) -> Tensor:
        """out [B, H, T, d] -> out_proj of [B, T, C] (or of [T, B, C] with ``time_first``)."""
        B, _, T, _ = out.shape
        if time_first:
            return self.out_proj(out.permute(2, 0, 1, 3).reshape(T, B, self.embed_dim))
        return self.out_proj(out.transpose(1, 2).reshape(B, T, self.embed_dim))

    def causal_heads(self, query: Tensor, key: Tensor, value: Tensor, valid: Optional[Tensor]) -> Tensor:
        """The parallel causal form on [B, T, C] inputs -> [B, H, T, d]."""
        return self.strategy.causal(*self.self_heads(query, key, value), key, valid)

    def extend_heads(self, query: Tensor, key: Tensor, value: Tensor, valid: Optional[Tensor],
                     state: Optional[Dict[str, Tensor]]) -> Tuple[Tensor, Dict[str, Tensor]]:
        """The recurrent form: new tokens [B, T_new, C] after ``state`` -> ([B, H, T_new, d], state)."""
        out, state = self.strategy.extend(*self.self_heads(query, key, value), key, valid, state or None)
        return out, dict(state)

    def extend_state(self, query: Tensor, key: Tensor, value: Tensor, valid: Optional[Tensor],
                     state: Optional[DecodingState]) -> Tuple[Tensor, DecodingState]:
        """``extend_heads`` at fixed addresses: the pending reorder of ``state`` gathered into its
        own storage, the strategy's step, and its next state kept in that storage (``settle_``).
        No host synchronisation beyond the strategy's own. Returns ([B, H, T_new, d], the state)."""
        previous = None if state is None else state.gathered()
        out, following = self.extend_heads(query, key, value, valid, previous)
        return out, DecodingState(settle_(previous, following))

    def encode_heads(self, query: Tensor, key: Tensor, value: Tensor, valid: Optional[Tensor]) -> Tensor:
        """Bidirectional self attention -> [B, H, T, d]. For memory/read strategies the memory is
        written first, so that q, k, v and the [B, H, T, n] control weights are never alive
        together: the peak stays at softmax attention's (q, k, v and the output)."""
        if not self.strategy.encodes_through_memory():
            return self.strategy.encode(*self.self_heads(query, key, value), key, valid)
        memory = self.memory_of(key, value, valid)
        return self.read_heads(self.heads(query, self.q_proj), memory)

    def memory_of(self, key: Tensor, value: Optional[Tensor], valid: Optional[Tensor]) -> Dict[str, Tensor]:
        """The strategy's memory of key [B, S, kdim] (value default the key)."""
        value = key if value is None else value
        return self.strategy.memory(self.heads(key, self.k_proj), self.heads(value, self.v_proj), key, valid)

    def read_heads(self, q: Tensor, memory: Dict[str, Tensor]) -> Tensor:
        """q [B, H, M, d] reads the strategy's memory -> [B, H, M, d]."""
        return self.strategy.read(q, memory)
