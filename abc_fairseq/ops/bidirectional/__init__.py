"""Bidirectional ABC_MLP (encoder self attention, cross attention): phi normalised over every
(non-padding) position.

- ``abc_memory`` / ``abc_read`` / ``abc`` (``op``): write a sequence into n slots, read them, or
  both, on the Triton kernels (``triton``) or PyTorch (``parallel``).
- ``reference_abc`` (``naive``): from the paper's equations (the oracle).
"""

from .naive import reference_abc
from .op import abc, abc_memory, abc_read

__all__ = ["abc", "abc_memory", "abc_read", "reference_abc"]
