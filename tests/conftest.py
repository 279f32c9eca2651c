"""Shared pytest setup.

- Make the repository importable without installation.
- Fixtures shared by the fairseq-level tests: ``lm_dir`` / ``mt_dir`` (data dirs holding only
  30-word dictionaries) and ``one_thread`` (see ``fairseq_helpers`` and ``attention_helpers`` for
  the shared functions).
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


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def lm_dir(tmp_path_factory):
    """A language_modeling (and masked_lm) data dir holding only a 30-word dictionary."""
    from fairseq_helpers import write_dictionary

    return write_dictionary(tmp_path_factory.mktemp("lm_dict"))


@pytest.fixture(scope="session")
def mt_dir(tmp_path_factory):
    """A translation data dir holding only source and target dictionaries of 30 words (src, tgt)."""
    from fairseq_helpers import write_dictionary

    return write_dictionary(tmp_path_factory.mktemp("mt_dict"), ("dict.src.txt", "dict.tgt.txt"))


@pytest.fixture(scope="module")
def one_thread():
    """Tiny tensors: a second intra-op thread only adds contention on a shared machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
