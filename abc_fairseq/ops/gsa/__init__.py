"""Gated slot attention (GSA, Zhang et al., 2024): ABC's bounded memory with a per-slot forget gate,
as plain PyTorch functions (no fairseq imports).

- ``causal_gsa`` (``op``): causal GSA over a whole sequence (training / scoring), on ABC's causal
  Triton kernels (``triton``) or chunked in log space (``chunk``), O(N (n + C)) memory, with state
  passing and attention dropout over the slots.
- ``causal_gsa_step`` (``op``, ``recurrent``): one decoding step on a ``GSAState`` of constant size.
- ``reference_causal_gsa`` (``naive``): the recurrence written from the equations (the oracle).

Gates enter as log gates g = log a <= 0; the write weight 1 - a is -expm1(g) everywhere, so gates
within 1e-30 of 1 stay exact. Causal forms stay causal for NaN and inf inputs (``ops.utils.zero_safe_matmul``).
"""

from .naive import reference_causal_gsa
from .op import causal_gsa, causal_gsa_step
from .state import GSAState

__all__ = ["GSAState", "causal_gsa", "causal_gsa_step", "reference_causal_gsa"]
