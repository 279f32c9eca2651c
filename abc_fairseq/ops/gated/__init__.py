"""Gated slot attention (GSA, Zhang et al., 2024): ABC's bounded memory with a per-slot forget gate,
as plain PyTorch functions (no fairseq imports).

- ``causal_gsa``: causal GSA over a whole sequence (training / scoring), chunked in log space,
  O(N (n + C)) memory, with state passing and attention dropout over the slots.
- ``causal_gsa_step``: one decoding step on a ``GSAState`` of constant size.
- ``reference_causal_gsa``: the naive recurrence written from the equations (the tests' oracle).

Gates enter as log gates g = log a <= 0; the write weight 1 - a is -expm1(g) everywhere, so gates
within 1e-30 of 1 stay exact. Causal forms stay causal for NaN and inf inputs (``ops.nonfinite``).
"""

from .chunked import causal_gsa
from .naive import reference_causal_gsa
from .state import GSAState
from .step import causal_gsa_step

__all__ = ["GSAState", "causal_gsa", "causal_gsa_step", "reference_causal_gsa"]
