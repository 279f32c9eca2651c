"""Document-level translation with predicted target context (scripts/mt/translate_docs.py): the
translation kept for a sentence ends at the first separator the model writes, and the whole path
(4-sentence windows of the embedded Bible documents, a tiny model trained for a few updates,
evaluate.sh's document decoding, scoring of the last sentence of each window) runs end to end.
The corpus is cut to a few documents so that the test takes seconds; the model is barely trained,
so what is checked is the structure of the output, not its quality."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIBLE = REPO / "data_prep" / "bible_es_en"
sys.path.insert(0, str(REPO / "scripts" / "mt"))

EOS, PAD, SEP = 2, 1, 7


def test_current_sentence_ends_at_the_first_separator():
    from translate_docs import current_sentence

    prefix = [11, 12, SEP]  # the forced context: the previous sentence and its separator
    assert current_sentence(prefix + [20, 21, EOS, PAD], 3, EOS, PAD, SEP) == [20, 21]
    # What the model writes after a separator is a sentence of its own, not this translation.
    assert current_sentence(prefix + [20, 21, SEP, 30, 31, EOS], 3, EOS, PAD, SEP) == [20, 21]
    assert current_sentence(prefix + [SEP, 30, EOS], 3, EOS, PAD, SEP) == []
    assert current_sentence([20, PAD, 21, EOS], 0, EOS, PAD, SEP) == [20, 21]


def _run(cmd):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([str(c) for c in cmd], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s" % (cmd[:3], proc.returncode, proc.stderr[-4000:]))
    return proc


def _lines(path):
    return Path(path).read_text(encoding="utf-8").splitlines()


def _cut_corpus(dest, docs_per_split, sentences_per_doc, train_lines):
    """The first documents of the embedded corpus (train: its first lines), same layout."""
    dest.mkdir()
    for split in ("train", "valid", "test"):
        doc_ids = _lines(BIBLE / ("%s.doc" % split))
        if split == "train":
            keep = list(range(min(train_lines, len(doc_ids))))
        else:
            order = list(dict.fromkeys(doc_ids))[:docs_per_split]
            keep = [i for i, d in enumerate(doc_ids) if d in order]
            keep = [i for k, i in enumerate(keep)
                    if sum(doc_ids[j] == doc_ids[i] for j in keep[:k]) < sentences_per_doc]
        for ext in ("es", "en", "doc"):
            lines = _lines(BIBLE / ("%s.%s" % (split, ext)))
            (dest / ("%s.%s" % (split, ext))).write_text("".join(lines[i] + "\n" for i in keep), encoding="utf-8")
    return len(keep)


def test_four_sentence_windows_with_predicted_context_end_to_end(tmp_path):
    pytest.importorskip("sacremoses", reason="sacremoses is not installed (pip install sacremoses)")
    n_test = _cut_corpus(tmp_path / "raw", docs_per_split=3, sentences_per_doc=5, train_lines=400)
    assert n_test == 15
    prep = tmp_path / "prep"
    _run(["bash", REPO / "data_prep/mt/prepare_doc_corpus.sh", "--raw", tmp_path / "raw", "--dest", prep,
          "--bpe-size", "400", "--window", "4", "--workers", "1"])
    data = prep / "bin"
    meta = json.loads((data / "eval" / "prep.json").read_text())
    assert meta["window"] == 4
    save = tmp_path / "ckpt"
    _run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "tiny", "--data", data, "--save-dir", save, "--cpu",
          "--max-update", "3", "--max-tokens", "1024", "--total-tokens", "1024", "--",
          "--num-workers", "0", "--no-progress-bar", "--disable-validation"])
    _run(["bash", REPO / "scripts/mt/evaluate.sh", "--data", data, "--save-dir", save, "--split", "test",
          "--checkpoint", save / "checkpoint_last.pt", "--beam", "2", "--cpu", "--tag", "doc"])
    out = save / "eval" / "doc"
    result = json.loads((out / "result.json").read_text())
    # One translation per test sentence (the last sentence of its window), in corpus order, scored
    # against the raw references; none carries a separator or a sentence after one.
    assert result["decode"] == "doc" and result["sentences"] == n_test and result["run"]["dataset"] == "tiny"
    assert isinstance(result["bleu"], float) and result["bleu"] >= 0
    hyps = _lines(out / "hyp.test.bpe")
    assert len(hyps) == n_test and not any(meta.get("sep", "<sep>") in h.split() for h in hyps)
    assert len(_lines(out / "hyp.test.txt")) == n_test
