"""Turn verse-per-line King James Version text into the default language-modelling corpus.

Input (stdin): one verse per line as printed by the ``bible`` program with pretty-printing off,
e.g. ``Ge1:1 In the beginning God created the heaven and the earth.``

Output (``OUT_DIR/{train,valid,test}.txt``): one verse per line, reference removed, tokenised at
word level in the style of WikiText (case kept, punctuation split off, possessive ``'s`` split,
intra-word hyphens written as ``@-@``).

Split: whole chapters, so held-out text is contiguous and can be scored with a context window.
Chapters are numbered 0, 1, 2, ... in canonical order; chapter ``i`` goes to valid if
``i % 10 == 4``, to test if ``i % 10 == 9``, and to train otherwise (an 80/10/10 split that
samples every book evenly).

Deterministic: the same input always gives byte-identical output. Standard library only.
"""

import argparse
import os
import re
import sys

# "Ge1:1 text", "1Sm3:10 text", "SSol2:1 text": book abbreviation, chapter, verse, text.
VERSE_RE = re.compile(r"^(?P<book>[1-3]?[A-Za-z]+)(?P<chapter>\d+):(?P<verse>\d+) (?P<text>.+)$")

PUNCT_RE = re.compile(r"([,.;:?!()])")
HYPHEN_RE = re.compile(r"(?<=\w)-(?=\w)")
POSSESSIVE_RE = re.compile(r"(?<=\w)'s\b")
TRAILING_APOSTROPHE_RE = re.compile(r"(?<=\w)'(?=\s|$)")


def tokenize(text):
    """WikiText-like word tokenisation of one verse."""
    text = HYPHEN_RE.sub(" @-@ ", text)
    # Punctuation first, so that a plural possessive before it ("sons',") ends in a space.
    text = PUNCT_RE.sub(r" \1 ", text)
    text = POSSESSIVE_RE.sub(" 's", text)
    text = TRAILING_APOSTROPHE_RE.sub(" '", text)
    return " ".join(text.split())


def split_of(chapter_index):
    r = chapter_index % 10
    if r == 4:
        return "valid"
    if r == 9:
        return "test"
    return "train"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", help="directory to write train.txt / valid.txt / test.txt into")
    args = parser.parse_args(argv)

    paths = [os.path.join(args.out_dir, name + ".txt") for name in ("train", "valid", "test")]
    existing = [path for path in paths if os.path.exists(path)]
    if existing:  # never overwrite: the recipe writes into a fresh directory
        sys.exit("kjv_to_corpus: refusing to overwrite %s (move it away or choose another output directory)"
                 % ", ".join(existing))
    os.makedirs(args.out_dir, exist_ok=True)
    outs = {}
    for name in ("train", "valid", "test"):
        # newline="\n" and an explicit encoding keep the bytes identical on every platform.
        outs[name] = open(os.path.join(args.out_dir, name + ".txt"), "w", encoding="utf-8", newline="\n")

    counts = {name: [0, 0] for name in outs}  # verses, chapters
    chapter_index = -1
    current = None
    try:
        for lineno, raw in enumerate(sys.stdin, 1):
            line = raw.rstrip("\n")
            if not line.strip():
                continue
            m = VERSE_RE.match(line)
            if m is None:
                sys.exit("kjv_to_corpus: line %d of the input is not 'RefC:V text': %r" % (lineno, line[:80]))
            key = (m.group("book"), m.group("chapter"))
            if key != current:
                current = key
                chapter_index += 1
                counts[split_of(chapter_index)][1] += 1
            split = split_of(chapter_index)
            outs[split].write(tokenize(m.group("text")) + "\n")
            counts[split][0] += 1
    finally:
        for f in outs.values():
            f.close()

    if chapter_index < 0:
        sys.exit("kjv_to_corpus: no verses on stdin")
    for name, (verses, chapters) in counts.items():
        print("%-5s %6d verses in %4d chapters" % (name, verses, chapters), file=sys.stderr)


if __name__ == "__main__":
    main()
