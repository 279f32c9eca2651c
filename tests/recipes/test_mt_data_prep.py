"""Tests for the machine-translation data recipes and their tools.

The recipes run end to end against a local mirror of miniature archives that have the names and
internal layout of the real downloads (generated here from the embedded Bible corpus, so the
text is real), with tiny BPE vocabularies so that everything takes seconds. The download helper
is also tested over HTTP against a local server (resume with Range, a server that ignores it).
"""

import hashlib
import json
import os
import re
import sys

import pytest
from mt_helpers import BIBLE, IWSLT, REPO, WMT, _lines, _run, _sha256, _snapshot, _tgz

from data_prep.mt.windows import windows

WMT_ARCHIVES = ("training-parallel-europarl-v7.tgz", "training-parallel-commoncrawl.tgz",
                "training-parallel-nc-v9.tgz", "dev.tgz", "test-full.tgz")


# --- miniature mirrors ---------------------------------------------------------------------------

def _bible(split, lang, n, start=0):
    return _lines(BIBLE / f"{split}.{lang}")[start:start + n]


@pytest.fixture(scope="module")
def wmt_mirror(tmp_path_factory):
    """The five WMT14 archives in miniature. German is stood in for by Spanish text: the recipe
    is language-agnostic apart from file names."""
    d = tmp_path_factory.mktemp("wmt_mirror")
    en, de = _bible("train", "en", 240), _bible("train", "es", 240)

    def corpus(a, b):
        return {"en": "\n".join(en[a:b]) + "\n", "de": "\n".join(de[a:b]) + "\n"}

    c1, c2, c3 = corpus(0, 80), corpus(80, 160), corpus(160, 240)
    # Common Crawl carries a carriage return inside a line and an empty line pair: the extractor
    # must neither split the line (misaligning the corpus) nor keep the empty pair.
    c2["en"] = "Stray\rcarriage return.\n\n" + c2["en"]
    c2["de"] = "Wagenrücklauf im Satz.\n\n" + c2["de"]
    _tgz(d / WMT_ARCHIVES[0], {f"training/europarl-v7.de-en.{k}": v for k, v in c1.items()})
    _tgz(d / WMT_ARCHIVES[1], {f"commoncrawl.de-en.{k}": v for k, v in c2.items()})
    _tgz(d / WMT_ARCHIVES[2], {f"training/news-commentary-v9.de-en.{k}": v for k, v in c3.items()})
    dev_en, dev_de = _bible("valid", "en", 20), _bible("valid", "es", 20)
    _tgz(d / WMT_ARCHIVES[3], {"dev/newstest2013.en": "\n".join(dev_en) + "\n",
                               "dev/newstest2013.de": "\n".join(dev_de) + "\n",
                               "dev/newstest2013.fr": "not used\n"})
    test_en, test_de = _bible("test", "en", 12), _bible("test", "es", 12)

    def sgm(kind, lang, segs):
        body = "".join('<seg id="%d"> %s </seg>\n' % (i + 1, s) for i, s in enumerate(segs))
        return ('<%s setid="newstest2014" srclang="any" trglang="%s">\n<doc sysid="ref" docid="x" '
                'genre="news" origlang="en">\n%s</doc>\n</%s>\n' % (kind, lang, body, kind))

    _tgz(d / WMT_ARCHIVES[4], {"test-full/newstest2014-deen-src.en.sgm": sgm("srcset", "en", test_en),
                               "test-full/newstest2014-deen-ref.de.sgm": sgm("refset", "de", test_de)})
    checksums = d / "SHA256SUMS"
    checksums.write_text("".join("%s  %s\n" % (_sha256(d / n), n) for n in WMT_ARCHIVES))
    return {"dir": d, "checksums": checksums, "test_en": test_en, "test_de": test_de}


def _talk(talk_id, lines_en, lines_es):
    head = ["<url>http://www.ted.com/talks/t%s.html</url>" % talk_id, "<keywords>talks</keywords>",
            "<speaker>Someone</speaker>", "<talkid>%s</talkid>" % talk_id, "<title>Talk %s</title>" % talk_id,
            "<description>About talk %s</description>" % talk_id]
    return head + lines_en, head + lines_es


def _xml(test_set, lang, docs):
    kind = "srcset" if lang == "en" else "refset"
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<mteval>",
           '<%s setid="iwslt2014-%s" srclang="english" trglang="spanish">' % (kind, test_set)]
    for doc_id, segs in docs:
        out.append('<doc docid="%s" genre="lectures">' % doc_id)
        out.append("<talkid>%s</talkid>" % doc_id)
        out += ['<seg id="%d"> %s </seg>' % (i + 1, s.replace("&", "&amp;")) for i, s in enumerate(segs)]
        out.append("</doc>")
    out += ["</%s>" % ("srcset" if lang == "en" else "refset"), "</mteval>"]
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def iwslt_mirror(tmp_path_factory):
    """en-es.tgz in miniature: three training talks, and dev/test sets whose documents have
    known sizes (dev2010: one talk of 5 sentences)."""
    d = tmp_path_factory.mktemp("iwslt_mirror")
    en, es = _bible("train", "en", 150), _bible("train", "es", 150)
    train_en, train_es = [], []
    for k, (a, b) in enumerate(((0, 60), (60, 100), (100, 150))):
        e, s = _talk(100 + k, en[a:b], es[a:b])
        train_en += e
        train_es += s
    # An empty sentence pair inside a talk is dropped, like Miculicich et al.'s extraction does.
    train_en.insert(10, "")
    train_es.insert(10, "")
    ven, ves = _bible("valid", "en", 20), _bible("valid", "es", 20)
    ten, tes = _bible("test", "en", 20), _bible("test", "es", 20)
    sets = {"dev2010": [("535", 0, 5)], "tst2010": [("1", 0, 3)], "tst2011": [("2", 3, 5)],
            "tst2012": [("3", 5, 9), ("4", 9, 10)]}
    members = {"en-es/train.tags.en-es.en": "\n".join(train_en) + "\n",
               "en-es/train.tags.en-es.es": "\n".join(train_es) + "\n"}
    for name, docs in sets.items():
        src_en, src_es = (ven, ves) if name == "dev2010" else (ten, tes)
        for lang, text in (("en", src_en), ("es", src_es)):
            members["en-es/IWSLT14.TED.%s.en-es.%s.xml" % (name, lang)] = _xml(
                name, lang, [(doc, text[a:b]) for doc, a, b in docs])
    _tgz(d / "en-es.tgz", members)
    return {"dir": d, "valid_es": ves[:5], "valid_en": ven[:5], "test_docs": sets}


# --- windows --------------------------------------------------------------------------------------

def test_windows_of_a_five_sentence_document():
    sents = ["s1", "s2", "s3", "s4", "s5", "t1", "t2"]
    docs = ["a"] * 5 + ["b"] * 2
    got = list(windows(sents, docs, 4, "<sep>"))
    assert len(got) == 7
    assert got[:5] == ["s1", "s1 <sep> s2", "s1 <sep> s2 <sep> s3", "s1 <sep> s2 <sep> s3 <sep> s4",
                       "s2 <sep> s3 <sep> s4 <sep> s5"]
    assert got[5:] == ["t1", "t1 <sep> t2"]  # never crosses into another document
    assert list(windows(sents, docs, 1, "<sep>")) == sents


def test_windows_cli_rejects_non_contiguous_documents(tmp_path):
    (tmp_path / "in").write_text("a\nb\nc\n")
    (tmp_path / "doc").write_text("d1\nd2\nd1\n")
    proc = _run([sys.executable, "-m", "data_prep.mt.windows", "--doc", tmp_path / "doc", tmp_path / "in",
                 tmp_path / "out"], check=False)
    assert proc.returncode != 0 and "contiguous" in proc.stderr


# --- WMT14 recipe ---------------------------------------------------------------------------------

def _wmt_cmd(mirror, dest, *extra):
    return ["bash", WMT, "--dest", dest, "--mirror", mirror["dir"], "--checksum-file", mirror["checksums"],
            "--bpe-size", "300", "--spm-sentences", "0", "--workers", "2", "--max-len", "60", "--ratio", "3", *extra]


def test_wmt14_recipe_end_to_end_and_rerun_is_a_noop(wmt_mirror, tmp_path):
    dest = tmp_path / "wmt"
    _run(_wmt_cmd(wmt_mirror, dest))
    bindir = dest / "bin"
    for name in ("dict.en.txt", "dict.de.txt", "train.en-de.en.bin", "train.en-de.de.idx", "valid.en-de.en.bin",
                 "test.en-de.de.bin", "eval/spm.model", "eval/prep.json", "eval/test.raw.de", "eval/valid.raw.en"):
        assert (bindir / name).is_file(), name
    assert (bindir / "dict.en.txt").read_bytes() == (bindir / "dict.de.txt").read_bytes()  # joined
    # References are the SGML segments as SacreBLEU reads them (whitespace collapsed).
    assert _lines(bindir / "eval" / "test.raw.de") == [" ".join(s.split()) for s in wmt_mirror["test_de"]]
    raw_en = _lines(dest / "raw" / "train.en")
    assert len(raw_en) == len(_lines(dest / "raw" / "train.de")) == 241  # 240 + the \r line, minus the empty pair
    assert "Stray carriage return." in raw_en
    # Cleaning: every training pair within the limits, dev/test untouched.
    for a, b in zip(_lines(dest / "clean" / "train.en"), _lines(dest / "clean" / "train.de")):
        la, lb = len(a.split()), len(b.split())
        assert 1 <= la <= 60 and 1 <= lb <= 60 and max(la, lb) <= 3 * min(la, lb)
    assert len(_lines(dest / "clean" / "valid.en")) == 20 and len(_lines(dest / "clean" / "test.en")) == 12
    # Each download carries its verification stamp.
    for name in WMT_ARCHIVES:
        assert (dest / "downloads" / (name + ".verified")).is_file()

    before = _snapshot(dest)
    proc = _run(_wmt_cmd(wmt_mirror, dest))
    assert proc.stderr.count("up to date") == 4 and "already verified" in proc.stderr
    assert _snapshot(dest) == before


def test_wmt14_corrupted_download_is_reported_and_verified_files_kept(wmt_mirror, tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for name in WMT_ARCHIVES:
        (mirror / name).write_bytes((wmt_mirror["dir"] / name).read_bytes())
    bad = "training-parallel-nc-v9.tgz"
    with open(mirror / bad, "r+b") as f:  # flip one byte in the middle
        f.seek(200)
        byte = f.read(1)
        f.seek(200)
        f.write(bytes([byte[0] ^ 0xFF]))
    dest = tmp_path / "wmt"
    proc = _run(_wmt_cmd({"dir": mirror, "checksums": wmt_mirror["checksums"]}, dest), check=False)
    assert proc.returncode != 0
    assert bad in proc.stderr
    assert _sha256(wmt_mirror["dir"] / bad) in proc.stderr and _sha256(mirror / bad) in proc.stderr
    downloads = dest / "downloads"
    for name in WMT_ARCHIVES[:2]:  # fetched and verified before the bad one: still there
        assert _sha256(downloads / name) == _sha256(wmt_mirror["dir"] / name)
    assert not (downloads / bad).exists() and not (dest / "raw").exists()


def test_wmt14_recorded_checksums_reject_foreign_archives(wmt_mirror, tmp_path):
    # Without --checksum-file the recipe's recorded (real) checksums apply: the miniature
    # Europarl archive is refused, naming the file and both hashes.
    proc = _run(["bash", WMT, "--dest", tmp_path / "wmt", "--mirror", wmt_mirror["dir"], "--download-only"],
                check=False)
    assert proc.returncode != 0
    assert "training-parallel-europarl-v7.tgz" in proc.stderr
    assert "0224c7c710c8a063dfd893b0cc0830202d61f4c75c17eb8e31836103d27d96e7" in proc.stderr


# --- IWSLT14 document recipe ----------------------------------------------------------------------

def _iwslt_cmd(mirror, dest, *extra):
    return ["bash", IWSLT, "--dest", dest, "--mirror", mirror["dir"], "--bpe-size", "300", "--workers", "2", *extra]


@pytest.fixture(scope="module")
def iwslt_prepared(iwslt_mirror, tmp_path_factory):
    pytest.importorskip("sacremoses", reason="sacremoses is not installed (pip install sacremoses)")
    dest = tmp_path_factory.mktemp("iwslt") / "out"
    proc = _run(_iwslt_cmd(iwslt_mirror, dest))
    return dest, proc


def test_iwslt_recipe_outputs_and_splits(iwslt_prepared, iwslt_mirror):
    dest, _ = iwslt_prepared
    raw = dest / "raw"
    assert len(set(_lines(raw / "train.doc"))) == 3
    assert len(_lines(raw / "train.es")) == 150  # the empty pair was dropped
    assert _lines(raw / "valid.doc") == ["dev2010.535"] * 5
    assert _lines(raw / "valid.es") == iwslt_mirror["valid_es"]
    assert _lines(raw / "test.doc") == ["tst2010.1"] * 3 + ["tst2011.2"] * 2 + ["tst2012.3"] * 4 + ["tst2012.4"]
    bindir = dest / "bin"
    for name in ("dict.es.txt", "dict.en.txt", "train.es-en.es.bin", "valid.es-en.en.idx", "test.es-en.es.bin",
                 "eval/test.bpe.es", "eval/test.doc", "eval/test.raw.en", "eval/spm.model",
                 "eval/truecase-model.en", "eval/prep.json"):
        assert (bindir / name).is_file(), name
    meta = json.loads((bindir / "eval" / "prep.json").read_text())
    assert meta["window"] == 4 and meta["sep"] == "<sep>" and meta["pipeline"] == "moses-truecase-spm"
    # Moses tokenisation split punctuation off; truecasing lowered sentence-initial function words.
    assert any(" ," in line for line in _lines(dest / "tok" / "train.en"))


def test_iwslt_windows_of_the_five_sentence_dev_document(iwslt_prepared):
    dest, _ = iwslt_prepared
    sents = {lang: _lines(dest / "spm" / f"valid.{lang}") for lang in ("es", "en")}
    for lang in ("es", "en"):
        wins = _lines(dest / "win" / f"valid.{lang}")
        assert len(wins) == 5  # one window per sentence (stride 1)
        assert "<sep>" not in wins[0].split() and wins[0] == sents[lang][0]  # the first: no context
        assert [w.split().count("<sep>") for w in wins] == [0, 1, 2, 3, 3]
        assert wins[4] == " <sep> ".join(sents[lang][1:5])  # current + 3 preceding sentences
    # Windows restart at document boundaries in the test set (documents of 3, 2, 4, 1 sentences).
    counts = [w.split().count("<sep>") for w in _lines(dest / "win" / "test.en")]
    assert counts == [0, 1, 2, 0, 1, 0, 1, 2, 3, 0]


@pytest.mark.slow
def test_two_process_cpu_training_on_windows_and_resume(iwslt_prepared, tmp_path):
    # The distributed launch path (torchrun, gloo, ranks from the environment) on the
    # document-level data, then a resume from checkpoint_last.pt.
    dest, _ = iwslt_prepared
    save = tmp_path / "ck"
    common = ["bash", REPO / "scripts/mt/train.sh", "--dataset", "tiny", "--data", dest / "bin", "--save-dir", save,
              "--cpu", "--nproc-per-node", "2", "--master-port", str(29400 + os.getpid() % 500)]
    proc = _run(common + ["--max-update", "2", "--", "--num-workers", "0", "--no-progress-bar"])
    log = proc.stdout + proc.stderr  # fairseq logs to stdout
    assert "initialized host" in log and "rank 1" in log and (save / "checkpoint_last.pt").is_file()
    proc = _run(common + ["--max-update", "4", "--", "--num-workers", "0", "--no-progress-bar"])
    log = proc.stdout + proc.stderr
    assert "resuming from" in log and "@ 2 updates" in log
    assert re.search(r"num_updates 4\b", log)
    # Document-level decoding of the test talks with predicted context, scored: the whole path
    # runs (the barely trained model's translations are not the point here).
    _run(["bash", REPO / "scripts/mt/evaluate.sh", "--data", dest / "bin", "--save-dir", save, "--checkpoint",
          save / "checkpoint_last.pt", "--beam", "2", "--cpu", "--tag", "doc"])
    result = json.loads((save / "eval" / "doc" / "result.json").read_text())
    assert result["decode"] == "doc" and result["sentences"] == 10 and result["run"]["dataset"] == "tiny"
    assert len(_lines(save / "eval" / "doc" / "hyp.test.bpe")) == 10


def test_iwslt_rerun_is_a_noop(iwslt_prepared, iwslt_mirror):
    dest, _ = iwslt_prepared
    before = _snapshot(dest)
    proc = _run(_iwslt_cmd(iwslt_mirror, dest))
    assert proc.stderr.count("up to date") == 6  # extract, tok, tc, spm, windows, binarise
    assert _snapshot(dest) == before


def test_iwslt_postprocessing_restores_the_raw_references(iwslt_prepared):
    # BPE -> detruecase -> detokenise must give back the raw text (what SacreBLEU scores against)
    # up to what the Moses preprocessing itself normalises: curly quotes become straight ones
    # (normalize-punctuation) and a word after an opening quote keeps the truecaser's case.
    dest, _ = iwslt_prepared
    from data_prep.mt.postprocess import Postprocessor

    def norm(text):
        return text.translate(str.maketrans("“”‘’", "\"\"''")).lower()

    post = Postprocessor(str(dest / "bin" / "eval"))
    restored = post(_lines(dest / "bin" / "eval" / "test.bpe.en"))
    raw = _lines(dest / "bin" / "eval" / "test.raw.en")
    assert len(restored) == len(raw)
    assert [norm(a) for a in restored] == [norm(b) for b in raw]


def test_iwslt_recorded_checksum_catches_a_corrupted_redownload(iwslt_mirror, tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    archive = (iwslt_mirror["dir"] / "en-es.tgz").read_bytes()
    (mirror / "en-es.tgz").write_bytes(archive)
    dest = tmp_path / "out"
    _run(_iwslt_cmd({"dir": mirror}, dest, "--download-only"))
    recorded = (dest / "downloads" / "en-es.tgz.sha256").read_text().split()[0]
    assert recorded == hashlib.sha256(archive).hexdigest()
    # The download is lost and the mirror now serves different bytes: refused, nothing recorded anew.
    (dest / "downloads" / "en-es.tgz").unlink()
    (mirror / "en-es.tgz").write_bytes(archive[:-10] + b"0123456789")
    proc = _run(_iwslt_cmd({"dir": mirror}, dest, "--download-only"), check=False)
    assert proc.returncode != 0
    assert "en-es.tgz" in proc.stderr and recorded in proc.stderr and _sha256(mirror / "en-es.tgz") in proc.stderr
    assert (dest / "downloads" / "en-es.tgz.sha256").read_text().split()[0] == recorded
