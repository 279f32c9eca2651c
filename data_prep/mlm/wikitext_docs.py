"""The public substitute corpus of the MLM recipe: WikiText-103 (raw) as documents.

    python -m data_prep.mlm.wikitext_docs wikitext-103-raw-v1.zip OUT_DIR

Writes ``OUT_DIR/train.txt`` and ``OUT_DIR/valid.txt`` from the archive's
``wikitext-103-raw/wiki.{train,valid}.raw``: one paragraph per line, an empty line after each
Wikipedia article (the document boundaries that ``--sample-break-mode complete_doc`` and the
shuffling use). An article starts at a top-level heading line `` = Title = `` (section headings,
`` = = Section = = ``, stay inside their article); blank lines are dropped. The text is the raw,
untokenised character-level version, which is what RoBERTa's GPT-2 BPE expects.
"""

import io
import os
import re
import sys

from data_prep.lib.archive import open_zip
from data_prep.lib.cli import module_parser
from data_prep.lib.outputs import refuse_existing

MEMBER = "wikitext-103-raw/wiki.{}.raw"
SPLITS = ("train", "valid")
TITLE_RE = re.compile(r"^ = [^=].* = $")


def to_documents(lines, out):
    """Copy ``lines`` (WikiText raw) to the text stream ``out`` as documents; returns their number."""
    documents, open_doc = 0, False
    for line in lines:
        if TITLE_RE.match(line.rstrip("\n")):
            if open_doc:
                out.write("\n")
            open_doc, documents = True, documents + 1
        text = line.strip()
        if text:
            out.write(text + "\n")
    if open_doc:
        out.write("\n")
    return documents


def main(argv=None):
    parser = module_parser("data_prep.mlm.wikitext_docs", __doc__)
    parser.add_argument("archive", help="wikitext-103-raw-v1.zip")
    parser.add_argument("out_dir", help="directory for train.txt and valid.txt")
    args = parser.parse_args(argv)
    refuse_existing([os.path.join(args.out_dir, split + ".txt") for split in SPLITS], "wikitext_docs")
    os.makedirs(args.out_dir, exist_ok=True)
    members = [MEMBER.format(split) for split in SPLITS]
    with open_zip(args.archive, members, "wikitext_docs", "is it wikitext-103-raw-v1.zip?") as zf:
        for split in SPLITS:
            with zf.open(MEMBER.format(split)) as raw, \
                    open(os.path.join(args.out_dir, split + ".txt"), "w", encoding="utf-8") as out:
                n = to_documents(io.TextIOWrapper(raw, encoding="utf-8"), out)
            print("wikitext_docs: %s: %d articles" % (split, n), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
