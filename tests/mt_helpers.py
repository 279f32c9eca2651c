"""Shared by the MT data tests: the repository's recipe paths and a subprocess runner with a clean
environment, plus tiny-archive builders (the mirrors have the real archives' names and layout)."""

import hashlib
import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIBLE = REPO / "data_prep" / "bible_es_en"
WMT = REPO / "data_prep" / "wmt14_en_de" / "prepare.sh"
IWSLT = REPO / "data_prep" / "iwslt14_es_en_doc" / "prepare.sh"

sys.path.insert(0, str(REPO))


def _env(**extra):
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHON"] = sys.executable
    env.pop("ABC_DATA_MIRROR", None)
    env.pop("DATA_PREP_LOCKED_DIR", None)
    env.pop("DATA_PREP_CLAIMED_DIR", None)
    env.update(extra)
    return env


def _run(cmd, check=True, **extra_env):
    proc = subprocess.run([str(c) for c in cmd], cwd=REPO, env=_env(**extra_env), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError("command failed (%d): %s\n--- stderr ---\n%s"
                             % (proc.returncode, cmd, proc.stderr[-4000:]))
    return proc


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _lines(path):
    return Path(path).read_text(encoding="utf-8").splitlines()


def _add(tar, name, text):
    data = text.encode("utf-8")
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1_400_000_000  # fixed, so archives are byte-identical across runs
    tar.addfile(info, io.BytesIO(data))


def _tgz(path, members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, text in members.items():
            _add(tar, name, text)
    import gzip

    Path(path).write_bytes(gzip.compress(buf.getvalue(), mtime=0))


def _snapshot(root):
    """{relative path: mtime_ns} of every file under root (except the lock)."""
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in Path(root).rglob("*")
            if p.is_file() and p.name != ".lock"}


def reversal_translation_data(folder: Path, train_lines: int = 200, valid_lines: int = 20) -> Path:
    """A word-reversal translation task (src -> tgt, each sentence's first 20 words of the embedded
    default corpus, reversed), binarised by fairseq-preprocess with a joined dictionary into
    FOLDER/bin, with the eval/prep.json the MT recipes look for. Returns FOLDER/bin."""
    import json

    from fairseq_helpers import fairseq

    folder = Path(folder)
    corpus = REPO / "data_prep" / "default_corpus"
    for split, lines in (("train", train_lines), ("valid", valid_lines)):
        with open(corpus / f"{split}.txt") as f:
            text = [line.split()[:20] for line in f if line.strip()][:lines]
        (folder / f"{split}.src").write_text("".join(" ".join(words) + "\n" for words in text))
        (folder / f"{split}.tgt").write_text("".join(" ".join(reversed(words)) + "\n" for words in text))
    data = folder / "bin"
    fairseq("preprocess", "-s", "src", "-t", "tgt", "--trainpref", folder / "train", "--validpref",
            folder / "valid", "--destdir", data, "--joined-dictionary", "--workers", "1")
    (data / "eval").mkdir()
    (data / "eval" / "prep.json").write_text(json.dumps({"src": "src", "tgt": "tgt", "window": 1, "sep": None,
                                                         "pipeline": "none"}))
    return data
