"""Causal ABC_MLP (decoder self attention): phi normalised over each row's prefix.

- ``causal_abc`` (``op``): a whole sequence (training, scoring), on the Triton kernels
  (``triton``) or the chunked PyTorch form (``chunk``, its math in ``chunk_math``).
- ``causal_abc_step`` (``op``): one decoding step on an ``ABCState`` (``state``), on one fused
  kernel (``triton.recurrent``) or PyTorch (``recurrent``).
- ``reference_causal_abc`` (``naive``): O(N^2) from the paper's equations (the oracle).
"""

from .naive import reference_causal_abc
from .op import causal_abc, causal_abc_step
from .state import ABCState

__all__ = ["ABCState", "causal_abc", "causal_abc_step", "reference_causal_abc"]
