"""ABC, Attention with Bounded-memory Control, as plain PyTorch functions (no fairseq imports).

- ``causal_abc``: causal ABC over a whole sequence (training / scoring), chunked, O(N (n + C)) memory.
- ``causal_abc_step``: one decoding step on an ``ABCState`` of constant size.
- ``abc``: bidirectional ABC (encoder self attention, cross attention), with ``abc_memory`` and
  ``abc_read`` to build a memory once and read it many times.
- ``reference_abc`` / ``reference_causal_abc``: naive O(N^2) versions written from the paper's equations.

``causal_abc``, ``abc``, ``abc_read`` and the references take ``dropout_p`` / ``dropout_mask``:
attention dropout on the probabilities over the memory slots (``dropout``; training only).
Causal forms stay causal for NaN and inf inputs: rows before the first bad one are exact
(``nonfinite``). Empty inputs (N, B or H = 0) give empty outputs.
"""

from .bidirectional import abc, abc_memory, abc_read
from .causal import causal_abc
from .recurrent import causal_abc_step
from .reference import reference_abc, reference_causal_abc
from .state import ABCState

__all__ = [
    "ABCState",
    "abc",
    "abc_memory",
    "abc_read",
    "causal_abc",
    "causal_abc_step",
    "reference_abc",
    "reference_causal_abc",
]
