"""Tests for the embedded default corpus, its tokeniser, its binarisation and the quickstart."""

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data_prep" / "default_corpus"
PREPARE = REPO / "data_prep" / "default_corpus" / "prepare.sh"
SPLITS = ("train", "valid", "test")
BINARY_FILES = ("dict.txt",) + tuple(f"{s}.{ext}" for s in SPLITS for ext in ("bin", "idx"))


def _env(**extra):
    """Environment whose PATH starts with this interpreter's bin dir, so the scripts use the
    fairseq command-line tools of the venv running the tests."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def _run(cmd, **extra_env):
    return subprocess.run(
        [str(c) for c in cmd], cwd=REPO, env=_env(**extra_env), capture_output=True, text=True
    )


def _readme_checksums():
    text = (CORPUS / "README.md").read_text(encoding="utf-8")
    return dict((name, digest) for digest, name in re.findall(r"^([0-9a-f]{64})  (\S+)$", text, re.M))


# --- the committed corpus ------------------------------------------------------------------------


def test_readme_lists_a_checksum_for_each_split():
    assert sorted(_readme_checksums()) == sorted(f"{s}.txt" for s in SPLITS)


@pytest.mark.parametrize("split", SPLITS)
def test_corpus_file_matches_readme_sha256(split):
    name = f"{split}.txt"
    digest = hashlib.sha256((CORPUS / name).read_bytes()).hexdigest()
    assert digest == _readme_checksums()[name], f"{name} differs from the sha256 recorded in README.md"


def test_corpus_is_small_tokenised_ascii_text():
    total = 0
    for split in SPLITS:
        data = (CORPUS / f"{split}.txt").read_bytes()
        total += len(data)
        text = data.decode("ascii")  # raises on anything else
        assert text.endswith("\n") and "\r" not in text and "\t" not in text
        lines = text.split("\n")[:-1]
        assert lines and all(line and line == line.strip() and "  " not in line for line in lines)
        # punctuation is split off: no token mixes letters with , . ; : ? ! ( )
        assert not re.search(r"\w[,.;:?!()]|[,.;:?!()]\w", text)
    assert total < 2_000_000


def test_kjv_to_corpus_tokenises_and_splits_by_chapter(tmp_path):
    # 12 one-verse chapters of a made-up book: chapter index 4 -> valid, 9 -> test, rest -> train.
    verses = [f"Ge{c}:1 Chapter {c}'s verse, with the LORD's loving-kindness; (sons') end." for c in range(1, 13)]
    verses.insert(1, "Ge1:2 Second verse of chapter one?")
    proc = subprocess.run(
        [sys.executable, str(REPO / "data_prep" / "default_corpus" / "kjv_to_corpus.py"), str(tmp_path)],
        input="\n".join(verses) + "\n", capture_output=True, text=True, check=True,
    )
    assert "valid" in proc.stderr
    out = {s: (tmp_path / f"{s}.txt").read_text().splitlines() for s in SPLITS}
    assert out["valid"] == ["Chapter 5 's verse , with the LORD 's loving @-@ kindness ; ( sons ' ) end ."]
    assert out["test"] == ["Chapter 10 's verse , with the LORD 's loving @-@ kindness ; ( sons ' ) end ."]
    assert len(out["train"]) == 11 and out["train"][1] == "Second verse of chapter one ?"


def test_kjv_to_corpus_rejects_malformed_input(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(REPO / "data_prep" / "default_corpus" / "kjv_to_corpus.py"), str(tmp_path)],
        input="not a verse\n", capture_output=True, text=True,
    )
    assert proc.returncode != 0 and "line 1" in proc.stderr


# --- binarisation --------------------------------------------------------------------------------


def test_prepare_binarises_and_second_run_is_a_no_op(tmp_path):
    dest = tmp_path / "bin"
    first = _run(["bash", PREPARE, dest])
    assert first.returncode == 0, first.stderr
    for name in BINARY_FILES:
        assert (dest / name).stat().st_size > 0, name
    assert not list(tmp_path.glob(".bin.*")), "temporary build directory left behind"

    # The binarised train split holds one sentence per corpus line, in the corpus's vocabulary.
    from fairseq.data import Dictionary, data_utils

    dictionary = Dictionary.load(str(dest / "dict.txt"))
    for split in SPLITS:
        ds = data_utils.load_indexed_dataset(str(dest / split), dictionary)
        n_lines = len((CORPUS / f"{split}.txt").read_text().splitlines())
        assert len(ds) == n_lines, split
    first_line = (CORPUS / "train.txt").read_text().split("\n", 1)[0]
    decoded = dictionary.string(data_utils.load_indexed_dataset(str(dest / "train"), dictionary)[0])
    assert decoded == first_line

    mtimes = {name: (dest / name).stat().st_mtime_ns for name in BINARY_FILES}
    second = _run(["bash", PREPARE, dest])
    assert second.returncode == 0, second.stderr
    assert "nothing to do" in second.stderr
    assert {name: (dest / name).stat().st_mtime_ns for name in BINARY_FILES} == mtimes


def test_prepare_rebuilds_when_an_input_changes(tmp_path):
    src = tmp_path / "corpus"
    src.mkdir()
    for split in SPLITS:  # a small corpus keeps this fast
        lines = (CORPUS / f"{split}.txt").read_text().splitlines()[:200]
        (src / f"{split}.txt").write_text("\n".join(lines) + "\n")
    dest = tmp_path / "bin"
    assert _run(["bash", PREPARE, dest], DEFAULT_CORPUS_DIR=str(src)).returncode == 0
    n_valid = (dest / "valid.idx").stat().st_size

    with open(src / "valid.txt", "a") as f:
        f.write("And it came to pass .\n")
    again = _run(["bash", PREPARE, dest], DEFAULT_CORPUS_DIR=str(src))
    assert again.returncode == 0, again.stderr
    assert "rebuilding" in again.stderr
    assert (dest / "valid.idx").stat().st_size > n_valid


def test_prepare_names_a_missing_input(tmp_path):
    (tmp_path / "train.txt").write_text("a b\n")
    (tmp_path / "valid.txt").write_text("a b\n")
    proc = _run(["bash", PREPARE, tmp_path / "bin"], DEFAULT_CORPUS_DIR=str(tmp_path))
    assert proc.returncode != 0
    assert str(tmp_path / "test.txt") in proc.stderr
    assert not (tmp_path / "bin").exists()


def test_prepare_refuses_to_overwrite_an_unrelated_directory(tmp_path):
    dest = tmp_path / "precious"
    dest.mkdir()
    (dest / "notes.txt").write_text("keep me")
    proc = _run(["bash", PREPARE, dest])
    assert proc.returncode != 0 and "refusing" in proc.stderr
    assert (dest / "notes.txt").read_text() == "keep me"


# --- quickstart ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_quickstart_tiny_run_trains_evaluates_and_resumes(tmp_path):
    """The README's first command, shrunk to a few seconds of training per model, GSA added as
    docs/gsa/README.md shows (QUICKSTART_MODELS)."""
    tiny = dict(
        QUICKSTART_DIR=str(tmp_path / "qs"), QUICKSTART_DATA=str(tmp_path / "bin"),
        QUICKSTART_MAX_UPDATE="2", QUICKSTART_LAYERS="1", QUICKSTART_EMBED_DIM="32",
        QUICKSTART_FFN_DIM="64", QUICKSTART_HEADS="2", QUICKSTART_ABC_MEMORY="8",
        QUICKSTART_TOKENS_PER_SAMPLE="64", QUICKSTART_CONTEXT_WINDOW="32", QUICKSTART_MAX_TOKENS="512",
        QUICKSTART_MODELS="abc softmax gsa",
    )
    proc = _run(["bash", REPO / "scripts" / "quickstart.sh"], **tiny)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    table = (tmp_path / "qs" / "results.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| abc_lm") or line.startswith("| transformer_lm")]
    assert len(rows) == 3 and any("(GSA)" in row for row in rows), table
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[2] == "2", row  # updates
        for ppl in cells[3:6]:
            assert float(ppl) > 1, row
    # the models have (nearly) the same size: ABC and GSA only add their slot projection
    params = [int(c.strip().replace(",", "")) for c in (r.strip("|").split("|")[1] for r in rows)]
    assert max(params) - min(params) < 0.05 * min(params), params

    again = _run(["bash", REPO / "scripts" / "quickstart.sh"], **tiny)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stderr.count("already trained") == 3
    assert again.stderr.count("not re-evaluating") == 3
