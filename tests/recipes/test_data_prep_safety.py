"""Data safety of every data_prep entry point (issue 11 items 1-3, issue 12's recipe folders,
issue 15's MLM corpus): nothing a recipe did not create is overwritten, every entry point answers
--help and refuses unknown options, pinned checksums are enforced and a first-use record says so
loudly. Everything here stops before any heavy work (no fairseq-preprocess run), so it is fast."""

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA_PREP = REPO / "data_prep"
RECIPES = ["default_corpus/prepare.sh", "default_corpus/make.sh", "wikitext/prepare.sh", "wmt14_en_de/prepare.sh",
           "iwslt14_es_en_doc/prepare.sh", "glue/prepare.sh", "mlm/prepare.sh", "mt/prepare_doc_corpus.sh",
           "bible_es_en/make_corpus.sh", "rotten_tomatoes/make.sh"]
# Each Python entry point with arguments it accepts, so that argparse's only complaint is the flag.
MODULES = {"data_prep.lib.fetch": ["https://h/a.tgz", "a.tgz", "--sha256", "0" * 64],
           "data_prep.wikitext.extract": ["a.zip", "out"], "data_prep.glue.prepare": ["--dest", "out"],
           "data_prep.glue.roberta_bpe": ["fetch", "--dest", "out"], "data_prep.mlm.shard": ["a", "b", "--shards", "2"],
           "data_prep.mlm.wikitext_docs": ["a.zip", "out"], "data_prep.mt.windows": ["--doc", "d", "in", "out"],
           "data_prep.mt.spm_bpe": ["decode", "--model", "m", "in", "out"]}
SCRIPTS = ["default_corpus/kjv_to_corpus.py", "bible_es_en/sword_to_corpus.py", "rotten_tomatoes/rt_to_corpus.py"]


def run(cmd, cwd=REPO, **env_extra):
    env = dict(os.environ, PYTHON=sys.executable, **env_extra)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    for name in ("ABC_DATA_MIRROR", "DATA_PREP_LOCKED_DIR", "DATA_PREP_CLAIMED_DIR"):
        env.pop(name, None)
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in Path(root).rglob("*") if p.is_file()}


def precious(path, **files):
    """A directory of the user's that no recipe may touch."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in (files or {"notes.txt": "keep me"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return snapshot(path)


# --- item 4 (issue 12): one folder per dataset ---------------------------------------------------

def test_each_dataset_recipe_lives_in_its_own_folder():
    assert not list(DATA_PREP.glob("*.sh")) and not list(DATA_PREP.glob("*.py"))
    for recipe in RECIPES:
        assert (DATA_PREP / recipe).is_file(), recipe
    old = ["prepare_default_corpus", "make_default_corpus", "prepare_wikitext103", "prepare_wmt14_en_de",
           "prepare_iwslt14_es_en_doc", "prepare_glue", "prepare_mlm_corpus", "mt/stages.sh"]
    found = subprocess.run(["git", "grep", "-n"] + [arg for name in old for arg in ("-e", name)], cwd=REPO,
                           capture_output=True, text=True)
    this_file = "tests/recipes/test_data_prep_safety.py"
    lines = [line for line in found.stdout.splitlines() if not line.startswith(this_file)]
    assert lines == [], "references to the old recipe paths:\n" + "\n".join(lines)


# --- item 2: --help, unknown options, options never taken as paths ------------------------------

@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_help_does_nothing_else(recipe, tmp_path):
    for flag in ("--help", "-h"):
        proc = run(["bash", DATA_PREP / recipe, flag], cwd=tmp_path)
        assert proc.returncode == 0 and len(proc.stdout.splitlines()) > 5, proc.stderr
        assert "set -euo" not in proc.stdout
    assert list(tmp_path.iterdir()) == []  # no directory named after --help or its text
    bad = run(["bash", DATA_PREP / recipe, "--no-such-flag", "--dest", tmp_path / "d"], cwd=tmp_path)
    assert bad.returncode != 0 and "--no-such-flag" in bad.stderr
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("module", sorted(MODULES))
def test_python_entry_points_answer_help_and_name_unknown_options(module, tmp_path):
    assert "usage" in run([sys.executable, "-m", module, "--help"]).stdout
    bad = run([sys.executable, "-m", module, *MODULES[module], "--no-such-flag"], cwd=tmp_path)
    assert bad.returncode == 2 and "--no-such-flag" in bad.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("script", SCRIPTS)
def test_standalone_scripts_answer_help(script):
    assert "usage" in run([sys.executable, DATA_PREP / script, "-h"]).stdout


def test_option_like_values_and_positionals_are_refused(tmp_path):
    proc = run(["bash", DATA_PREP / "wikitext/prepare.sh", "--dest", "--workers", "2"], cwd=tmp_path)
    assert proc.returncode != 0 and "--dest needs a value" in proc.stderr
    proc = run(["bash", DATA_PREP / "default_corpus/prepare.sh", "-x"], cwd=tmp_path)
    assert proc.returncode != 0 and "'-x'" in proc.stderr
    proc = run(["bash", DATA_PREP / "wmt14_en_de/prepare.sh", "stray"], cwd=tmp_path)
    assert proc.returncode != 0 and "'stray'" in proc.stderr
    assert list(tmp_path.iterdir()) == []


# --- item 1: nothing a recipe did not create is deleted or overwritten ---------------------------

def test_default_corpus_refuses_another_corpus_and_foreign_files(tmp_path):
    # Another recipe's binarised data (e.g. WikiText-103's bin/): a dict.txt does not make it ours.
    other = tmp_path / "wikitext-103"
    before = precious(other, **{"dict.txt": "the 5\n", "train.bin": "x", "train.idx": "y"})
    proc = run(["bash", DATA_PREP / "default_corpus/prepare.sh", other])
    assert proc.returncode != 0 and str(other) in proc.stderr and "refusing" in proc.stderr
    assert snapshot(other) == before
    # An earlier build of ours that also holds a user's file: refused, naming the file.
    (tmp_path / "ours").mkdir()
    (tmp_path / "ours" / ".prepared_sha256").write_text("stale\n")
    (tmp_path / "ours" / "dict.txt").write_text("a 1\n")
    before = precious(tmp_path / "ours", **{"my_notes.txt": "mine"})
    proc = run(["bash", DATA_PREP / "default_corpus/prepare.sh", tmp_path / "ours"])
    assert proc.returncode != 0 and "my_notes.txt" in proc.stderr
    assert snapshot(tmp_path / "ours") == before


@pytest.mark.parametrize("recipe", ["wikitext/prepare.sh", "wmt14_en_de/prepare.sh", "iwslt14_es_en_doc/prepare.sh",
                                    "glue/prepare.sh", "mlm/prepare.sh"])
def test_recipes_refuse_a_destination_holding_foreign_files(recipe, tmp_path):
    dest = tmp_path / "home"
    before = precious(dest, **{"thesis.tex": "years of work", "bin/tool": "#!/bin/sh\n"})
    extra = {"mlm/prepare.sh": ["--train", __file__, "--valid", __file__]}.get(recipe, [])
    proc = run(["bash", DATA_PREP / recipe, "--dest", dest, *extra])
    assert proc.returncode != 0 and str(dest) in proc.stderr and "thesis.tex" in proc.stderr
    assert snapshot(dest) == before and sorted(os.listdir(dest)) == ["bin", "thesis.tex"]


@pytest.mark.parametrize("mark", [".run", ".data_prep_owner"])  # the one mark, and the data recipes' earlier one
def test_a_destination_of_another_recipe_is_refused(mark, tmp_path):
    dest = tmp_path / "d"
    dest.mkdir()
    (dest / mark).write_text("wmt14_en_de/prepare\n")
    proc = run(["bash", DATA_PREP / "wikitext/prepare.sh", "--dest", dest])
    assert proc.returncode != 0 and "wmt14_en_de/prepare" in proc.stderr
    assert sorted(os.listdir(dest)) == [mark]  # nothing renamed or written


def _mini_wikitext(path):
    with zipfile.ZipFile(path, "w") as zf:
        for split in ("train", "valid", "test"):
            zf.writestr("wikitext-103/wiki.%s.tokens" % split, " = Title = \n the cat sat . \n")
    return sha256(path)


def test_a_stage_directory_not_built_by_the_recipe_is_never_replaced(tmp_path):
    # An unmarked destination holding only names the recipe writes (an older build) is adopted,
    # but its bin/ without the stage stamp is the user's: the recipe stops there, naming it.
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    digest = _mini_wikitext(mirror / "wikitext-103-v1.zip")
    dest = tmp_path / "wt"
    before = precious(dest / "bin", **{"dict.txt": "mine 1\n"})
    proc = run(["bash", DATA_PREP / "wikitext/prepare.sh", "--dest", dest, "--mirror", mirror, "--sha256", digest])
    assert proc.returncode != 0 and str(dest / "bin") in proc.stderr and ".stage_key" in proc.stderr
    assert snapshot(dest / "bin") == before
    assert (dest / "raw" / "wiki.train.tokens").is_file()  # the stages before it did run


def test_tools_and_corpus_makers_never_overwrite(tmp_path):
    (tmp_path / "out.txt").write_text("mine")
    (tmp_path / "doc.txt").write_text("a\n")
    (tmp_path / "in.txt").write_text("x\n")
    proc = run([sys.executable, "-m", "data_prep.mt.windows", "--doc", tmp_path / "doc.txt", tmp_path / "in.txt",
                tmp_path / "out.txt"])
    assert proc.returncode != 0 and str(tmp_path / "out.txt") in proc.stderr
    assert (tmp_path / "out.txt").read_text() == "mine"
    (tmp_path / "train.txt").write_text("mine")
    proc = run([sys.executable, DATA_PREP / "default_corpus/kjv_to_corpus.py", tmp_path])
    assert proc.returncode != 0 and "train.txt" in proc.stderr and (tmp_path / "train.txt").read_text() == "mine"
    # The corpus makers refuse a user's OUT_DIR holding one of their files before downloading.
    proc = run(["bash", DATA_PREP / "default_corpus/make.sh", tmp_path])
    assert proc.returncode != 0 and str(tmp_path / "train.txt") in proc.stderr
    assert (tmp_path / "train.txt").read_text() == "mine"


# --- item 3: pinned checksums, loud first-use records ---------------------------------------------

def bpe_mirror(path):
    """A mirror directory holding stand-ins for RoBERTa's BPE files (recorded, never pinned)."""
    path.mkdir()
    for name in ("encoder.json", "vocab.bpe", "dict.txt"):
        (path / name).write_text(name)
    return path


def fetch(url, dest, *args):
    return run([sys.executable, "-m", "data_prep.lib.fetch", url, dest, *args])


def test_pinned_checksum_mismatch_is_refused_naming_the_checksum_file(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "SST-2.zip").write_bytes(b"not the published archive")
    sums = DATA_PREP / "glue" / "SHA256SUMS"
    proc = fetch("https://dl.fbaipublicfiles.com/glue/data/SST-2.zip", tmp_path / "dl" / "SST-2.zip",
                 "--checksums", sums, "--mirror", mirror)
    assert proc.returncode == 1 and str(sums) in proc.stderr
    assert "d67e16fb55739c1b32cdce9877596db1c127dc322d93c082281f64057c16deaa" in proc.stderr
    assert not (tmp_path / "dl" / "SST-2.zip").exists() and not (tmp_path / "dl" / "SST-2.zip.sha256").exists()


def test_glue_recipe_refuses_a_mirror_that_does_not_hold_the_published_archive(tmp_path):
    mirror = bpe_mirror(tmp_path / "mirror")
    with zipfile.ZipFile(mirror / "SST-2.zip", "w") as zf:
        zf.writestr("SST-2/train.tsv", "sentence\tlabel\nok\t1\n")
    proc = run(["bash", DATA_PREP / "glue/prepare.sh", "--dest", tmp_path / "g", "--tasks", "SST-2",
                "--mirror", mirror])
    assert proc.returncode == 1 and "SST-2.zip" in proc.stderr and "glue/SHA256SUMS" in proc.stderr
    assert not (tmp_path / "g" / "SST-2-bin").exists()
    # The BPE files have no published checksum: recorded, and said so loudly.
    assert proc.stderr.count("RECORDED, NOT VERIFIED") == 3


def test_first_use_record_warns_and_a_later_mismatch_names_the_record(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "en-es.tgz").write_bytes(b"a first, possibly truncated, download")
    dest = tmp_path / "dl" / "en-es.tgz"
    sums = DATA_PREP / "iwslt14_es_en_doc" / "SHA256SUMS"
    first = fetch("https://wit3.fbk.eu/archive/2014-01/texts/en/es/en-es.tgz", dest, "--checksums", sums,
                  "--mirror", mirror)
    assert first.returncode == 0
    warning = next(line for line in first.stderr.splitlines() if "WARNING" in line)
    assert "RECORDED, NOT VERIFIED" in warning and "delete %s.sha256" % dest in warning
    assert (Path(str(dest) + ".sha256")).read_text().split()[0] == sha256(mirror / "en-es.tgz")
    # The real archive later: refused against the record, and the error says how to re-verify.
    dest.unlink()
    (mirror / "en-es.tgz").write_bytes(b"the real archive")
    again = fetch("https://wit3.fbk.eu/archive/2014-01/texts/en/es/en-es.tgz", dest, "--checksums", sums,
                  "--mirror", mirror)
    assert again.returncode == 1 and "delete %s.sha256 and run again" % dest in again.stderr


def test_a_published_md5_verifies_the_first_download_without_a_warning(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "t.tgz").write_bytes(b"test set")
    sums = tmp_path / "SHA256SUMS"
    sums.write_text("# comment\nmd5=%s  t.tgz\n" % hashlib.md5(b"test set").hexdigest())
    proc = fetch("https://h/t.tgz", tmp_path / "dl" / "t.tgz", "--checksums", sums, "--mirror", mirror)
    assert proc.returncode == 0 and "WARNING" not in proc.stderr and "published md5" in proc.stderr
    sums.write_text("abc  t.tgz\n")
    proc = fetch("https://h/t.tgz", tmp_path / "dl2" / "t.tgz", "--checksums", sums, "--mirror", mirror)
    assert proc.returncode == 2 and "%s:1" % sums in proc.stderr


def test_every_recipe_checksum_file_parses_and_pins_what_its_recipe_says():
    from data_prep.lib.checksums import load

    pins = {d: load(str(DATA_PREP / d / "SHA256SUMS")) for d in ("wikitext", "wmt14_en_de", "glue", "mlm",
                                                                 "iwslt14_es_en_doc")}
    assert set(pins["glue"]) == {"CoLA.zip", "SST-2.zip", "QQP-clean.zip", "STS-B.zip", "MNLI.zip", "QNLIv2.zip",
                                 "RTE.zip", "WNLI.zip", "mrpc_dev_ids.tsv", "msr_paraphrase_train.txt",
                                 "msr_paraphrase_test.txt"}
    assert pins["wmt14_en_de"]["test-full.tgz"].md5 and pins["wmt14_en_de"]["dev.tgz"].sha256
    assert pins["wikitext"]["wikitext-103-v1.zip"].sha256 and pins["mlm"]["wikitext-103-raw-v1.zip"].sha256
    assert pins["iwslt14_es_en_doc"] == {}  # none published: recorded with the warning


# --- issue 15 item 5: MLM corpus, shuffled into the paper's 20 shards -----------------------------

def test_mlm_documents_are_shuffled_whole_into_shards(tmp_path):
    from data_prep.mlm.shard import shard

    docs = ["doc %d line a\ndoc %d line b\n" % (i, i) for i in range(40)]
    (tmp_path / "in").write_text("\n".join(docs) + "\n")
    counts = shard(str(tmp_path / "in"), str(tmp_path / "a"), 20, seed=1)
    assert counts == [2] * 20
    texts = [(tmp_path / ("a.shard%d" % k)).read_text() for k in range(20)]
    got = [d + "\n" for t in texts for d in t.split("\n\n") if d.strip()]
    assert sorted(got) == sorted(docs) and got != docs  # every document once, whole, reordered
    shard(str(tmp_path / "in"), str(tmp_path / "b"), 20, seed=1)
    assert [(tmp_path / ("b.shard%d" % k)).read_text() for k in range(20)] == texts  # deterministic
    with pytest.raises(SystemExit):  # never overwrites
        shard(str(tmp_path / "in"), str(tmp_path / "a"), 20, seed=1)


def test_mlm_defaults_to_the_papers_shards_and_offers_a_pinned_public_corpus(tmp_path):
    text = run(["bash", DATA_PREP / "mlm/prepare.sh", "--help"]).stdout
    assert "default 20, the paper's" in text and "BookCorpus" in text and "RealNews" in text
    mirror = bpe_mirror(tmp_path / "mirror")
    with zipfile.ZipFile(mirror / "wikitext-103-raw-v1.zip", "w") as zf:
        zf.writestr("wikitext-103-raw/wiki.train.raw", " = A = \n text \n")
    proc = run(["bash", DATA_PREP / "mlm/prepare.sh", "--public-corpus", "wikitext-103-raw", "--dest", tmp_path / "m",
                "--mirror", mirror])
    assert proc.returncode != 0 and "wikitext-103-raw-v1.zip" in proc.stderr and "mlm/SHA256SUMS" in proc.stderr


def test_wikitext_raw_articles_become_documents(tmp_path):
    from data_prep.mlm.wikitext_docs import to_documents

    out = io.StringIO()
    raw = [" \n", " = Cat = \n", " \n", " A cat . \n", " = = Life = = \n", " It sleeps . \n", " = Dog = \n",
           " Woof . \n"]
    assert to_documents(raw, out) == 2
    assert out.getvalue() == "= Cat =\nA cat .\n= = Life = =\nIt sleeps .\n\n= Dog =\nWoof .\n\n"


def test_mlm_public_corpus_runs_end_to_end_from_a_mirror(tmp_path):
    """--public-corpus: download (mirror + the miniature's checksum), articles as documents, BPE,
    shuffled shard, binarised with RoBERTa's dictionary (a byte-level toy BPE here)."""
    from fairseq.data.encoders.gpt2_bpe_utils import bytes_to_unicode

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    symbols = [bytes_to_unicode()[b] for b in range(256)]
    (mirror / "encoder.json").write_text(json.dumps({s: i for i, s in enumerate(symbols)}))
    (mirror / "vocab.bpe").write_text("#version: 0.2\n")
    (mirror / "dict.txt").write_text("".join("%d 1\n" % i for i in range(256)))
    articles = [" = Art %d = \n \n Text of article %d . \n \n = = Part = = \n More %d . \n" % (i, i, i)
                for i in range(6)]
    with zipfile.ZipFile(mirror / "wikitext-103-raw-v1.zip", "w") as zf:
        zf.writestr("wikitext-103-raw/wiki.train.raw", "".join(articles))
        zf.writestr("wikitext-103-raw/wiki.valid.raw", articles[0])
    sums = tmp_path / "SHA256SUMS"
    sums.write_text("%s  wikitext-103-raw-v1.zip\n" % sha256(mirror / "wikitext-103-raw-v1.zip"))
    dest = tmp_path / "mlm"
    proc = run(["bash", DATA_PREP / "mlm/prepare.sh", "--public-corpus", "wikitext-103-raw", "--dest", dest,
                "--mirror", mirror, "--checksum-file", sums, "--shards", "1", "--workers", "1"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == str(dest / "shard0")
    docs = (dest / "text" / "train.txt").read_text().split("\n\n")
    assert len([d for d in docs if d.strip()]) == 6 and docs[0].startswith("= Art 0 =\nText of article 0 .")
    assert (dest / "shards" / "train.bpe.shard0").read_text().count("\n\n") == 6
    assert (dest / "shard0" / "train.bin").stat().st_size > 0 and (dest / "shard0" / "valid.bin").is_file()
