"""Extract the WMT14 EN-DE splits of Vaswani et al. (2017) from the original statmt.org archives.

- train: Europarl v7 + Common Crawl + News Commentary v9 (de-en), concatenated in that order;
- valid: newstest2013 (``dev.tgz``, plain text, 3000 lines);
- test:  newstest2014, the full version (``test-full.tgz``, 3003 segments), read from the SGML
  files exactly as SacreBLEU reads ``wmt14/full`` (segment text, whitespace collapsed, entities
  left as they are), so the references here are the ones ``sacrebleu -t wmt14/full`` uses.

Writes ``OUT/{train,valid,test}.{en,de}`` (one sentence per line, aligned). Training lines are
cleaned of control characters and repeated whitespace; pairs with an empty side are dropped.
Length-based cleaning happens after BPE (``clean_parallel.py``). Standard library only.
"""

import argparse
import itertools
import os
import re
import shutil
import sys
import tarfile

from data_prep.lib.outputs import refuse_existing

from .text_utils import clean_line, read_lines, write_lines

TRAIN = [  # (archive, member prefix): the member is PREFIX.de / PREFIX.en
    ("training-parallel-europarl-v7.tgz", "training/europarl-v7.de-en"),
    ("training-parallel-commoncrawl.tgz", "commoncrawl.de-en"),
    ("training-parallel-nc-v9.tgz", "training/news-commentary-v9.de-en"),
]
VALID = ("dev.tgz", "dev/newstest2013")
TEST = ("test-full.tgz", {"en": "test-full/newstest2014-deen-src.en.sgm",
                          "de": "test-full/newstest2014-deen-ref.de.sgm"})
# Python >= 3.11.4 can refuse unsafe archive members (links, absolute paths); use it if present.
SAFE_EXTRACT = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
SEG_RE = re.compile(r"<seg.*?>(.*)</seg>.*?")


def _member(tar, archive, name):
    try:
        f = tar.extractfile(name)
    except KeyError:
        f = None
    if f is None:
        sys.exit("wmt14_extract: %s has no file %s" % (archive, name))
    return f


def _sgm_segments(raw_lines):
    return [" ".join(SEG_RE.sub(r"\1", line).split()) for line in raw_lines if line.startswith("<seg ")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("downloads", help="directory holding the five archives")
    parser.add_argument("out", help="output directory")
    parser.add_argument("--src", default="en", help="source language suffix (default en)")
    parser.add_argument("--tgt", default="de", help="target language suffix (default de)")
    args = parser.parse_args(argv)
    langs = (args.src, args.tgt)
    if sorted(langs) != ["de", "en"]:
        parser.error("--src/--tgt must be en and de (in either order)")
    refuse_existing([os.path.join(args.out, "%s.%s" % (split, lang)) for split in ("train", "valid", "test")
                     for lang in langs], "wmt14_extract")
    os.makedirs(args.out, exist_ok=True)

    # The training corpora are large (4.5M pairs): members are unpacked to disk one archive at a
    # time and streamed pairwise. (Reading two members of one .tgz alternately would make tarfile
    # seek back and forth in the gzip stream, decompressing it over and over.)
    scratch = os.path.join(args.out, ".unpacked")
    outs = {lang: open(os.path.join(args.out, "train.%s" % lang), "w", encoding="utf-8", newline="\n")
            for lang in langs}
    n_train = 0
    try:
        for archive, prefix in TRAIN:
            shutil.rmtree(scratch, ignore_errors=True)
            with tarfile.open(os.path.join(args.downloads, archive)) as tar:
                paths = {}
                for lang in langs:
                    name = "%s.%s" % (prefix, lang)
                    try:
                        member = tar.getmember(name)
                    except KeyError:
                        sys.exit("wmt14_extract: %s has no file %s" % (archive, name))
                    member.name = lang  # flat, fixed name: never write outside the scratch dir
                    tar.extract(member, scratch, **SAFE_EXTRACT)
                    paths[lang] = os.path.join(scratch, lang)
            total = kept = 0
            with open(paths[langs[0]], encoding="utf-8", errors="replace", newline="\n") as a, \
                    open(paths[langs[1]], encoding="utf-8", errors="replace", newline="\n") as b:
                for line_a, line_b in itertools.zip_longest(a, b):
                    if line_a is None or line_b is None:
                        sys.exit("wmt14_extract: %s: %s.en and %s.de have different numbers of lines"
                                 % (archive, prefix, prefix))
                    total += 1
                    pair = (clean_line(line_a), clean_line(line_b))
                    if all(pair):
                        outs[langs[0]].write(pair[0] + "\n")
                        outs[langs[1]].write(pair[1] + "\n")
                        kept += 1
            n_train += kept
            print("wmt14_extract: %s: %d pairs, %d kept (non-empty)" % (prefix, total, kept), file=sys.stderr)
    finally:
        for f in outs.values():
            f.close()
        shutil.rmtree(scratch, ignore_errors=True)
    print("wmt14_extract: train %9d sentence pairs" % n_train, file=sys.stderr)

    archive, prefix = VALID
    with tarfile.open(os.path.join(args.downloads, archive)) as tar:
        valid = {lang: [clean_line(s) for s in read_lines(_member(tar, archive, "%s.%s" % (prefix, lang)))]
                 for lang in langs}
    archive, members = TEST
    with tarfile.open(os.path.join(args.downloads, archive)) as tar:
        test = {lang: _sgm_segments(read_lines(_member(tar, archive, members[lang]))) for lang in langs}

    for split, data in (("valid", valid), ("test", test)):
        n = {lang: len(lines) for lang, lines in data.items()}
        if len(set(n.values())) != 1:
            sys.exit("wmt14_extract: %s sides differ in length: %s" % (split, n))
        for lang in langs:
            write_lines(os.path.join(args.out, "%s.%s" % (split, lang)), data[lang])
        print("wmt14_extract: %-5s %9d sentence pairs" % (split, n["en"]), file=sys.stderr)


if __name__ == "__main__":
    main()
