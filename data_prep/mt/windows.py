"""Document-level sliding windows: each example is the current sentence preceded by up to
``--size - 1`` previous sentences of the same document, joined with a separator token.

    python -m data_prep.mt.windows --doc train.doc --size 4 --sep '<sep>' IN OUT

``IN`` has one (subword-encoded) sentence per line, ``--doc`` the document id of each line.
With stride 1 there is one window per sentence, so ``OUT`` is aligned line by line with ``IN``
(and the source and target window files with each other). The first sentence of a document has
no context; the second has one context sentence, and so on up to ``size - 1``. Applied to the
source and the target side alike, this is the 4-sentence window of Voita et al. (2019) used by
the ABC paper for IWSLT14 ES-EN; ``--size 1`` gives plain sentence-level data.
"""

import argparse
import sys

from data_prep.lib.outputs import refuse_existing


def windows(sentences, doc_ids, size, sep):
    """Yield one window per sentence (a string), never crossing a document boundary."""
    if len(sentences) != len(doc_ids):
        raise ValueError("%d sentences but %d document ids" % (len(sentences), len(doc_ids)))
    joiner = " %s " % sep
    start = 0  # index of the first sentence of the current document
    for i, doc in enumerate(doc_ids):
        if i > 0 and doc != doc_ids[i - 1]:
            start = i
        first = max(start, i - size + 1)
        yield joiner.join(s for s in sentences[first:i + 1])


def check_documents_contiguous(doc_ids, path):
    seen, previous = set(), None
    for lineno, doc in enumerate(doc_ids, 1):
        if doc != previous:
            if doc in seen:
                sys.exit("windows: document %r reappears at line %d of %s; the lines of a document "
                         "must be contiguous" % (doc, lineno, path))
            seen.add(doc)
            previous = doc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--doc", required=True, help="document id per line")
    parser.add_argument("--size", type=int, default=4, help="sentences per window (default 4)")
    parser.add_argument("--sep", default="<sep>", help="separator token (default <sep>)")
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args(argv)
    refuse_existing([args.output], "windows")
    if args.size < 1:
        parser.error("--size must be >= 1, got %d" % args.size)
    if not args.sep or any(c.isspace() for c in args.sep):
        parser.error("--sep must be one non-empty token without spaces, got %r" % args.sep)
    with open(args.input, encoding="utf-8", newline="\n") as f:
        sentences = [line.rstrip("\n") for line in f]
    with open(args.doc, encoding="utf-8", newline="\n") as f:
        doc_ids = [line.rstrip("\n") for line in f]
    if len(sentences) != len(doc_ids):
        sys.exit("windows: %s has %d lines but %s has %d" % (args.input, len(sentences), args.doc, len(doc_ids)))
    if any(args.sep in s.split() for s in sentences):
        sys.exit("windows: the separator %r already occurs as a token in %s" % (args.sep, args.input))
    check_documents_contiguous(doc_ids, args.doc)
    with open(args.output, "w", encoding="utf-8", newline="\n") as f:
        for window in windows(sentences, doc_ids, args.size, args.sep):
            f.write(window + "\n")


if __name__ == "__main__":
    main()
