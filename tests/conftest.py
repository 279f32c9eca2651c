"""Shared pytest setup.

- Make the repository importable without installation.
- One intra-op thread per process (inherited by the fairseq CLIs the tests start): the tests use
  tiny tensors, where OpenMP's parallel regions cost more than they save, and two-process training
  tests would otherwise put four busy threads on a two-core machine. Set OMP_NUM_THREADS yourself
  to override.
"""

import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", os.environ["OMP_NUM_THREADS"])

import torch  # noqa: E402  (after the thread settings above)

torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
