"""Causal linear attention, o_t = sum_{i<=t} (q_t . k_i) v_i: the prefix sums under the kernel
strategies (``elu``, ``rfa``, ``t2r``, ``linear``) and the slot strategies' scores and outputs.

- ``causal_linear_attention`` (``chunk``): chunked, O(N (C (D + E) + D E)) time; autograd
  differentiates it as written.
- ``linear_state_update`` (``recurrent``): one decoding step of the state S_t.
- ``reference_causal_linear_attention`` (``naive``): the masked N x N product (the oracle).

PyTorch only: no Triton kernels yet.
"""

from .chunk import causal_linear_attention
from .naive import reference_causal_linear_attention
from .recurrent import linear_state_update

__all__ = ["causal_linear_attention", "linear_state_update", "reference_causal_linear_attention"]
