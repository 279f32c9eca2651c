"""Causal gated slot attention over a whole sequence on causal ABC's fused chunked op.

GSA's write weights have ABC's form exp(l_i - g_t) (``gates``), so the same blocks, scans,
intra-chunk matmuls, steep-chunk exact path and hand-written recomputing backward run it
(``causal.chunk``), with GSA's geometry in place of ABC's prefix normaliser and its gates'
gradient chained at the end. Memory as ABC's: the inputs and one memory per block are kept,
O(N (d + n)), never O(N n d). ``segments`` holds the direct form it is tested against.
"""

from typing import Optional, Tuple, Union

import torch

from ..causal.chunk import Family, chunked_causal
from .gates import gate_grads, gated_geometry
from .state import GSAState

DEFAULT_CHUNK_SIZE = 64
GSA = Family(gated_geometry, gate_grads)


def chunk_causal_gsa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_gates: torch.Tensor, scale: float,
                     chunk_size: Optional[int], block_size: Optional[int], tile_rows: Optional[int],
                     initial_state: GSAState, return_state: bool, keep: Optional[torch.Tensor], keep_scale: float
                     ) -> Union[torch.Tensor, Tuple[torch.Tensor, GSAState]]:
    """``causal_gsa`` on the PyTorch path, its arguments checked (``gsa.op``) and N, B, H > 0:
    q, k [B, H, N, d]; v [B, H, N, dv]; log_gates [B, H, N, n]; keep bool [B, H, N, n] (True =
    kept) or None; keep_scale = 1 / (1 - p); chunk_size None: ``DEFAULT_CHUNK_SIZE``; block_size,
    tile_rows: as ``causal_abc``'s. Returns out [B, H, N, dv] in q's dtype (and the final GSAState)."""
    normaliser = initial_state.key_memory.new_zeros(initial_state.key_memory.shape[:-1])  # GSA's memory is its own
    # Padded rows get log gate 0: a gate of one, which keeps the memory and writes nothing.
    out, (key_memory, value_memory, _) = chunked_causal(
        q, k, v, log_gates, 0.0, (*initial_state, normaliser), scale, chunk_size or DEFAULT_CHUNK_SIZE,
        block_size, tile_rows, keep, keep_scale, GSA)
    return (out, GSAState(key_memory, value_memory)) if return_state else out
