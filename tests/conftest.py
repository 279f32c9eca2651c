"""Shared pytest setup.

- Make the repository importable without installation.
- Fixtures shared by the fairseq-level tests: ``lm_dir`` / ``mt_dir`` (data dirs holding only
  30-word dictionaries), ``one_thread``, ``interpreted_kernels`` (Triton's interpreter), tiny
  abc_transformer models (``mt``, ``mt_all_abc``, ``mt_untied``, ``mt_window``), and prepared data built by the repository's recipes:
  ``default_corpus``, ``bible_run`` (Bible ES-EN), ``roberta_data`` (see ``fairseq_helpers``,
  ``mt_helpers`` and ``attention_helpers`` for the shared functions).
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


@pytest.fixture(scope="module")
def interpreted_kernels():
    """Triton and the kernels imported afresh under Triton's interpreter for one test module (CPU
    tensors, no GPU), the earlier modules and environment put back afterwards (triton_helpers)."""
    from triton_helpers import interpret_kernels

    yield from interpret_kernels()


# --- tiny abc_transformer models (transformer_helpers), one per test file that uses them ---------------

@pytest.fixture(scope="module")
def mt(mt_dir):
    """abc_transformer (tiny), a (task, model) pair. Default layout: ABC causal and cross attention, softmax encoder."""
    from transformer_helpers import TINY, build

    return build(mt_dir, *TINY)


@pytest.fixture(scope="module")
def mt_all_abc(mt_dir):
    """ABC in all three positions (the paper's MLP-exp-all)."""
    from transformer_helpers import ENCODER_ABC, TINY, build

    return build(mt_dir, *TINY, *ENCODER_ABC)


@pytest.fixture(scope="module")
def mt_untied(mt_dir):
    """ABC in all three positions with ``--untie-phi``: one W_phi per layer (not the paper's model)."""
    from transformer_helpers import ENCODER_ABC, TINY, build

    return build(mt_dir, *TINY, *ENCODER_ABC, "--untie-phi")


@pytest.fixture(scope="module")
def mt_window(mt_dir):
    """Table 7's Window row: window in cross (the last n source tokens) and causal attention."""
    from transformer_helpers import TINY, build

    return build(mt_dir, *TINY, "--decoder-cross-attn", "window", "--decoder-self-attn", "window")


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
