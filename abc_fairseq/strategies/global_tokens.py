"""Global tokens, the local-to-global pattern as ABC (paper Appendix A.1, Table 1: L2G Pattern):
phi_t = e_i if x_t is the i-th global token, 0 otherwise. The global tokens are pre-selected by
position: the first n real tokens of the sequence (BOS/CLS-like prefixes), so every query attends
to exactly those n tokens and nothing else (the global part of local-to-global attention; combine
with ``window`` layers for the local part).

Where it applies: encoder self attention and cross attention (the decoder reads the first n source
tokens). Causal attention is also well defined and bounded, row t attends to tokens 1..min(t, n),
but for a language model that is a fixed-prefix reader, offered for completeness. Slots not filled
yet (t < n) are left out of the softmax.

Training O(N (C d + d n)); decoding state per head: K~, V~ [n, d], occupancy [n], a counter.
"""

from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from ._common import all_valid, token_ranks
from ._slots import causal_slot_attention, slot_memory, slot_read, slot_step
from .base import Memory, State, Strategy
from .registry import register


@register
class GlobalTokens(Strategy):
    """The first n real tokens are the memory. No parameters."""

    name = "global"
    paper = "Appendix A.1 (Table 1: L2G pattern)"

    def _phi(self, ranks: torch.Tensor, valid: torch.Tensor, dtype) -> torch.Tensor:
        n = self.memory_size
        is_global = valid & (ranks < n)
        phi = F.one_hot(ranks.clamp_max(n - 1), n).to(dtype) * is_global[..., None].to(dtype)
        return phi[:, None].expand(-1, self.num_heads, -1, -1)

    def causal(self, q, k, v, x, valid):
        valid = all_valid(valid, q.shape[0], q.shape[2], q.device)
        phi = self._phi(token_ranks(valid), valid, q.dtype)
        return causal_slot_attention(q, k, v, phi, self.scale, mask_empty=True)

    def step(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        valid = all_valid(valid, q.shape[0], 1, q.device)
        position = state["position"] if state else torch.zeros(q.shape[0], dtype=torch.long, device=q.device)
        out, new = slot_step(q, k, v, self._phi(position[:, None], valid, q.dtype), state, self.scale,
                             mask_empty=True)
        new["position"] = position + valid[:, 0].long()
        return out, new

    def memory(self, k, v, x, valid) -> Memory:
        valid = all_valid(valid, k.shape[0], k.shape[2], k.device)
        return slot_memory(k, v, self._phi(token_ranks(valid), valid, k.dtype))

    def read(self, q, memory: Memory):
        return slot_read(q, memory, self.scale, mask_empty=True)
