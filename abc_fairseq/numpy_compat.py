"""Let fairseq 0.12 build its datasets under numpy >= 2.

numpy 2 removed ``numpy.compat``; fairseq 0.12 still uses ``np.compat.long`` (an alias of ``int``)
in ``TokenBlockDataset`` with ``--sample-break-mode eos`` (used by LM training, fairseq-generate
and every fairseq-interactive LM prompt) and in ``LanguagePairDataset`` bucketing. Without it
those paths raise ``AttributeError: module 'numpy' has no attribute 'compat'``.

The fix adds back only that alias, and only when ``numpy.compat`` is missing; numpy 1.x is left
untouched.
"""

import sys
import types

import numpy as np


def restore_numpy_compat_long() -> bool:
    """Define ``numpy.compat.long = int`` when numpy lacks ``compat``; True if it did."""
    if "compat" in np.__dict__:
        return False
    compat = types.ModuleType("numpy.compat", "numpy 1.x alias kept for fairseq 0.12 (long = int)")
    compat.long = int
    np.compat = compat
    sys.modules.setdefault("numpy.compat", compat)
    return True
