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

import torch
import torch.nn.functional as F

from ._slots import SlotStrategy
from .registry import register


@register
class GlobalTokens(SlotStrategy):
    """The first n real tokens are the memory. No parameters."""

    name = "global"
    paper = "Appendix A.1 (Table 1: L2G pattern)"
    mask_empty = True

    def naive_phi(self, rank, key):
        """e_rank for the first n real tokens, 0 after."""
        phi = torch.zeros(self.num_heads, self.memory_size, dtype=key.dtype)
        if rank < self.memory_size:
            phi[:, rank] = 1.0
        return phi

    def control(self, ranks, valid, k, dtype):
        n = self.memory_size
        is_global = valid & (ranks < n)
        phi = F.one_hot(ranks.clamp_max(n - 1), n).to(dtype) * is_global[..., None].to(dtype)
        return phi[:, None].expand(-1, self.num_heads, -1, -1)
