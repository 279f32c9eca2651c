"""Shared pytest setup.

- Make the repository importable without installation.
- Fixtures shared by more than one test folder: ``lm_dir`` / ``mt_dir`` (data dirs holding only
  30-word dictionaries), ``one_thread``, and prepared data built by the repository's recipes:
  ``default_corpus``, ``bible_run`` (Bible ES-EN), ``roberta_data``. A folder's own fixtures live in
  its conftest (``kernels/``: ``interpreted_kernels``; ``models/``: the tiny abc_transformer models).
  The shared functions are in the ``*_helpers.py`` modules beside this file, importable from every
  folder because this file puts its own folder on ``sys.path`` (pytest's default import mode).
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


# --- prepared data, built by the repository's own recipes (module-scoped: each test file that
# --- uses one builds it once) ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def default_corpus(tmp_path_factory):
    """The embedded corpus binarised by data_prep/default_corpus/prepare.sh into a fresh folder."""
    from mt_helpers import _run

    dest = tmp_path_factory.mktemp("data-bin") / "default_corpus"
    _run(["bash", os.path.join(ROOT, "data_prep", "default_corpus", "prepare.sh"), dest])
    return str(dest)


@pytest.fixture(scope="module")
def bible_run(tmp_path_factory):
    """The embedded Bible ES-EN corpus prepared like IWSLT14 (Moses, truecase, 2000 BPE, sentence
    level): {"work": a fresh work folder, "data": the fairseq binarised folder}."""
    from mt_helpers import BIBLE, _run

    # The Moses steps need sacremoses (pinned in requirements.txt).
    pytest.importorskip("sacremoses", reason="sacremoses is not installed (pip install sacremoses)")
    work = tmp_path_factory.mktemp("bible")
    dest = work / "prep"
    _run(["bash", os.path.join(ROOT, "data_prep", "mt", "prepare_doc_corpus.sh"), "--raw", BIBLE, "--dest", dest,
          "--bpe-size", "2000", "--window", "1", "--workers", "2"])
    return {"work": work, "data": dest / "bin"}


@pytest.fixture(scope="module")
def roberta_data(tmp_path_factory):
    """A binarised MLM corpus (``mlm/``) and a labelled set (``cls/input0``, ``cls/label``; label =
    whether w0 occurs) sharing its dictionary, from 60 words."""
    import random

    from fairseq_helpers import fairseq

    path = tmp_path_factory.mktemp("roberta")
    rng = random.Random(0)
    words = [f"w{i}" for i in range(60)]

    def sentence():
        return [rng.choice(words) for _ in range(rng.randint(6, 24))]

    def write_lines(name, lines):
        (path / name).write_text("".join(line + "\n" for line in lines))

    for split, n in (("train", 300), ("valid", 30)):
        write_lines(f"{split}.txt", [" ".join(sentence()) for _ in range(n)])
    fairseq("preprocess", "--only-source", "--trainpref", path / "train.txt", "--validpref",
            path / "valid.txt", "--destdir", path / "mlm", "--workers", "1")
    for split, n in (("train", 64), ("valid", 16)):
        rows = [sentence() for _ in range(n)]
        write_lines(f"{split}.input0", [" ".join(r) for r in rows])
        write_lines(f"{split}.label", [str(int("w0" in r)) for r in rows])
    fairseq("preprocess", "--only-source", "--srcdict", path / "mlm" / "dict.txt", "--trainpref",
            path / "train.input0", "--validpref", path / "valid.input0", "--destdir", path / "cls" / "input0",
            "--workers", "1")
    fairseq("preprocess", "--only-source", "--trainpref", path / "train.label", "--validpref",
            path / "valid.label", "--destdir", path / "cls" / "label", "--workers", "1")
    return path
