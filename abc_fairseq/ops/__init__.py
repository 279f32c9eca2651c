"""ABC, Attention with Bounded-memory Control, as plain PyTorch functions (no fairseq imports).

One folder per op family, each with the same files: ``naive.py`` (the oracle, from the
equations), the PyTorch forms (``chunk.py`` for the causal families, ``parallel.py`` for the
bidirectional one; ``recurrent.py`` for a decoding step), ``triton/`` (the kernels and their
autograd Functions) and ``op.py`` (the public ops: arguments checked once, then handed to
``backend``, the one module that chooses the kernels or PyTorch and owns the fallback).

- ``causal``: ``causal_abc`` (a whole sequence, training / scoring, O(N (n + C)) memory) and
  ``causal_abc_step`` (one decoding step on an ``ABCState`` of constant size).
- ``bidirectional``: ``abc`` (encoder self attention, cross attention), with ``abc_memory`` and
  ``abc_read`` to build a memory once and read it many times.
- ``gsa``: gated slot attention, ``causal_gsa`` and ``causal_gsa_step`` (``abc_fairseq.ops.gsa``).
- ``linear``: causal linear attention, the prefix sums under the non-exp strategies.
- ``triton``: what the Triton kernels share (program layout, tiles and precision); ``utils``:
  argument checks, the work dtype, attention dropout, non-finite causality, scratch memory.

``causal_abc``, ``abc``, ``abc_read`` and the references take ``dropout_p`` / ``dropout_mask``:
attention dropout on the probabilities over the memory slots (training only). Causal forms stay
causal for NaN and inf inputs: rows before the first bad one are exact. Empty inputs (N, B or
H = 0) give empty outputs.
"""

from .bidirectional import abc, abc_memory, abc_read, reference_abc
from .causal import ABCState, causal_abc, causal_abc_step, reference_causal_abc

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
