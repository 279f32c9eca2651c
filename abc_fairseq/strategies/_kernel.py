"""Kernel (linear) attention, the baselines ABC is compared with (paper §4 "Connections", Table 2b):
a feature map f replaces softmax's exp(q . k),

    out_t = sum_{i<=t} (f(q_t) . f(k_i)) v_i / sum_{i<=t} f(q_t) . f(k_i)          (normalized)
          = f(q_t)^T S_t / f(q_t)^T z_t,   S_t = sum_{i<=t} f(k_i) v_i^T,  z_t = sum_{i<=t} f(k_i)

(over all real tokens in encoder / cross attention), or the un-normalised numerator alone.
The memory is S [D x d] plus z [D]: D, the feature size, plays the part of the n slots.
Training: one chunked prefix-sum pass (``causal_linear_attention``) plus a cumulative sum of the
key features, O(N (C (D + d) + D d)) time, O(N (C + D)) memory. Decoding state: S and z per head.
Padding has f(k) = 0 and v = 0: it is never written.

Attention dropout: none. There is no softmax over slots to drop from: the weights
f(q_t) . f(k_i) / f(q_t)^T z_t are never formed (that is the point of the linear form), and dropping
entries of f(q_t) instead would be feature dropout, not the attention dropout softmax applies.
"""

from typing import ClassVar, Optional, Tuple

import torch
import torch.nn as nn

from ..ops.linear import causal_linear_attention, linear_state_update
from ._common import all_valid, compute_dtype
from .base import Memory, State, Strategy
from .reference import reference_kernel_bidirectional, reference_kernel_causal

EPS = 1e-6  # added to positive denominators (a prefix of padding only has z = 0)


def head_affine_parameters(num_heads: int, out_dim: int, in_dim: int,
                           random_bias: bool) -> Tuple[nn.Parameter, nn.Parameter]:
    """W [H, out, in] and b [H, out] of one affine map per head (a learned feature map or gate),
    initialised as nn.Linear's, uniform within 1 / sqrt(in); b starts at 0 unless ``random_bias``."""
    bound = in_dim ** -0.5
    weight = nn.Parameter(torch.empty(num_heads, out_dim, in_dim))
    bias = nn.Parameter(torch.empty(num_heads, out_dim) if random_bias else torch.zeros(num_heads, out_dim))
    nn.init.uniform_(weight, -bound, bound)
    if random_bias:
        nn.init.uniform_(bias, -bound, bound)
    return weight, bias


def head_affine(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x [B, H, N, in] -> W_h x + b_h [B, H, N, out] for every head h, in x's dtype."""
    return torch.matmul(x, weight.to(x.dtype).transpose(-1, -2)[None]) + bias.to(x.dtype)[None, :, None, :]


class KernelAttention(Strategy):
    """Subclasses define ``query_features`` and ``key_features`` (in the work dtype)."""

    normalized: ClassVar[bool] = True

    @classmethod
    def applies_dropout(cls) -> bool:
        return False  # no probabilities over slots (module docstring); the attention module warns

    def naive_features(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        """(f(q), f(k), the values written) written from the strategy's paper, for ``naive``."""
        raise NotImplementedError

    def naive(self, q, k, v, x, valid, keep=None, p=0.0):
        """sum_i (f(q) . f(k_i)) v_i (/ sum_i f(q) . f(k_i)) over the prefix or the whole sequence, token
        by token. No dropout (no probabilities over slots)."""
        assert keep is None, "kernel attentions apply no attention dropout"
        fq, fk, values = self.naive_features(q, k, v)
        if valid is not None:
            fk, values = fk * valid[:, None, :, None], values * valid[:, None, :, None]
        form = reference_kernel_causal if self.mode == "causal" else reference_kernel_bidirectional
        return form(fq, fk, values, self.normalized, self.denominator)

    def query_features(self, q: torch.Tensor) -> torch.Tensor:
        """q [B, H, M, d] -> f(q) [B, H, M, D]."""
        raise NotImplementedError

    def key_features(self, k: torch.Tensor, v: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """k, v [B, H, N, d] -> (f(k) [B, H, N, D], the values written [B, H, N, d])."""
        raise NotImplementedError

    def denominator(self, den: torch.Tensor) -> torch.Tensor:
        """f(q) . z, made safe to divide by (positive feature maps: + EPS)."""
        return den + EPS

    def _write(self, k, v, valid):
        work = compute_dtype(k.dtype)
        fk, values = self.key_features(k.to(work), v.to(work))
        if valid is not None:
            keep = valid[:, None, :, None].to(work)
            fk, values = fk * keep, values * keep
        return fk, values

    def _finish(self, fq, num, k_sum: Optional[torch.Tensor], out_dtype):
        """num [B, H, M, d]; k_sum: z broadcastable to f(q) [B, H, M, D] (None when not normalized)."""
        if self.normalized:
            num = num / self.denominator((fq * k_sum).sum(dim=-1, keepdim=True))
        return num.to(out_dtype)

    @staticmethod
    def _row(k_sum: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        return None if k_sum is None else k_sum[:, :, None]

    def causal(self, q, k, v, x, valid):
        fq = self.query_features(q.to(compute_dtype(q.dtype)))
        fk, values = self._write(k, v, valid)
        num = causal_linear_attention(fq, fk, values)
        return self._finish(fq, num, fk.cumsum(dim=2) if self.normalized else None, q.dtype)

    def step(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        fq = self.query_features(q.to(compute_dtype(q.dtype)))
        fk, values = self._write(k, v, all_valid(valid, q.shape[0], 1, q.device))
        state = state or {}
        new = {"kv": linear_state_update(state.get("kv"), fk[:, :, 0], values[:, :, 0])}
        if self.normalized:
            new["k_sum"] = fk[:, :, 0] if "k_sum" not in state else state["k_sum"] + fk[:, :, 0]
        out = self._finish(fq, torch.matmul(fq, new["kv"]), self._row(new.get("k_sum")), q.dtype)
        return out, new

    def memory(self, k, v, x, valid) -> Memory:
        fk, values = self._write(k, v, valid)
        memory = {"kv": torch.matmul(fk.transpose(-1, -2), values)}
        if self.normalized:
            memory["k_sum"] = fk.sum(dim=2)
        return memory

    def read(self, q, memory: Memory):
        fq = self.query_features(q.to(memory["kv"].dtype))
        return self._finish(fq, torch.matmul(fq, memory["kv"]), self._row(memory.get("k_sum")), q.dtype)
