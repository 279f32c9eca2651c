"""Verse-align two SWORD Bible modules (exported with ``mod2imp``) into a small parallel corpus.

Input: two ``.imp`` files as written by ``mod2imp MODULE`` (raw OSIS markup, one entry per verse,
each entry introduced by a ``$$$Book Chapter:Verse`` line), one per language.

Output (``OUT_DIR``), for each split ``train`` / ``valid`` / ``test``:

- ``{split}.{src}`` and ``{split}.{tgt}``: one verse per line, plain untokenised text;
- ``{split}.doc``: the document (chapter) of each line, e.g. ``Matthew.5``; lines of one document
  are contiguous and in verse order.

This is the "raw documents" layout that ``data_prep/mt/prepare_doc_corpus.sh`` reads, so the
corpus goes through the same pipeline (Moses tokenisation, truecasing, BPE, sliding windows) as
IWSLT14.

Verses are matched by reference; a verse missing (or empty) in either module is dropped. Chapters
are documents. Split by whole chapters: numbering the kept chapters 0, 1, 2, ... in canonical
order, chapter ``i`` goes to valid if ``i % 10 == 4``, to test if ``i % 10 == 9``, and to train
otherwise, so every book contributes to every split.

Markup handling: footnotes (``<note>``) and non-canonical headings (``<title>`` without
``canonical="true"``) are removed with their text, because they are editorial additions present
in one translation only; every other element is unwrapped (its text kept). A removed element is
replaced by a space (WEB places notes between words with no whitespace around them), then spaces
before closing punctuation are removed again.

Deterministic; standard library only.
"""

import argparse
import html
import os
import re
import sys

HEADER_RE = re.compile(r"^\$\$\$(?P<book>.+?) (?P<chapter>\d+):(?P<verse>\d+)$")
# Elements removed together with their content. Neither nests inside itself in these modules.
NOTE_RE = re.compile(r"<note\b[^>]*>.*?</note>", re.S)
TITLE_RE = re.compile(r"<title\b(?P<attrs>[^>]*)>(?P<body>.*?)</title>", re.S)
TAG_RE = re.compile(r"<[^>]*>")
SPACE_BEFORE_CLOSING_RE = re.compile(r"\s+([,.;:!?)\]’”»])")
SPACE_AFTER_OPENING_RE = re.compile(r"([(\[‘“«¿¡])\s+")
# RV1909 prints the first word of each chapter in capitals, a typographic drop-cap convention
# ("EN el principio", "Y ACONTECIÓ que"). Only that word is rewritten; capitals elsewhere
# (inscriptions such as "ESTE ES JESUS") are left alone.
DROP_CAP_RE = re.compile(r"^(?P<lead>\W*(?:[A-ZÁÉÍÓÚÑ]\s+)?)(?P<word>[A-ZÁÉÍÓÚÑÜ]{2,})(?![\w])")

SPLIT_PERIOD = 10


def split_of(chapter_index):
    r = chapter_index % SPLIT_PERIOD
    if r == 4:
        return "valid"
    if r == SPLIT_PERIOD - 1:
        return "test"
    return "train"


def _drop_title(match):
    # Psalm superscriptions are canonical="true" and are part of the verse in RV1909: keep them.
    return " " + match.group("body") + " " if 'canonical="true"' in match.group("attrs") else " "


def osis_to_text(markup):
    """Plain text of one verse's OSIS markup."""
    text = NOTE_RE.sub(" ", markup)
    text = TITLE_RE.sub(_drop_title, text)
    text = TAG_RE.sub(" ", text)
    text = html.unescape(text)
    text = " ".join(text.split())
    text = SPACE_BEFORE_CLOSING_RE.sub(r"\1", text)
    text = SPACE_AFTER_OPENING_RE.sub(r"\1", text)
    return text


def fix_drop_cap(text):
    """Undo the drop cap of a chapter's first verse: sentence-initial words are capitalised,
    a word after a one-letter conjunction ("Y ACONTECIÓ") is lower-cased."""
    def repl(m):
        word = m.group("word")
        lead = m.group("lead")
        return lead + (word.lower() if lead.strip() else word.capitalize())
    return DROP_CAP_RE.sub(repl, text, count=1)


def read_imp(path):
    """{(book, chapter, verse): text} and the books in file order. Headings (chapter or verse 0)
    and module/testament headers are skipped."""
    verses, books = {}, []
    key, body = None, []

    def flush():
        if key is not None and key[1] > 0 and key[2] > 0:
            text = osis_to_text(" ".join(body))
            if text:
                verses[key] = text
                if key[0] not in books:
                    books.append(key[0])

    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("$$$"):
                flush()
                m = HEADER_RE.match(line)
                key = (m.group("book"), int(m.group("chapter")), int(m.group("verse"))) if m else None
                body = []
            else:
                body.append(line)
    flush()
    if not verses:
        sys.exit("sword_to_corpus: no verses found in %s (is it a mod2imp export?)" % path)
    return verses, books


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src-imp", required=True, help="mod2imp export of the source-language module")
    parser.add_argument("--tgt-imp", required=True, help="mod2imp export of the target-language module")
    parser.add_argument("--src-lang", required=True, help="file suffix of the source side, e.g. es")
    parser.add_argument("--tgt-lang", required=True, help="file suffix of the target side, e.g. en")
    parser.add_argument("--books", default="",
                        help="comma-separated book names (as mod2imp prints them) to keep; default: all "
                             "books present in both modules")
    parser.add_argument("--fix-src-drop-caps", action="store_true",
                        help="rewrite the capitalised first word of a chapter on the source side "
                             "(RV1909's drop-cap convention) as an ordinary capitalised word")
    parser.add_argument("out_dir")
    args = parser.parse_args(argv)

    src, src_books = read_imp(args.src_imp)
    tgt, _ = read_imp(args.tgt_imp)
    keep_books = [b.strip() for b in args.books.split(",") if b.strip()]
    unknown = [b for b in keep_books if b not in src_books]
    if unknown:
        sys.exit("sword_to_corpus: --books names not in %s: %s" % (args.src_imp, ", ".join(unknown)))

    paths = [os.path.join(args.out_dir, "%s.%s" % (split, ext))
             for split in ("train", "valid", "test") for ext in (args.src_lang, args.tgt_lang, "doc")]
    existing = [path for path in paths if os.path.exists(path)]
    if existing:  # never overwrite: the recipe writes into a fresh directory
        sys.exit("sword_to_corpus: refusing to overwrite %s (move it away or choose another output directory)"
                 % ", ".join(existing))
    os.makedirs(args.out_dir, exist_ok=True)
    names = {
        "src": "{}." + args.src_lang, "tgt": "{}." + args.tgt_lang, "doc": "{}.doc",
    }
    outs = {}
    for split in ("train", "valid", "test"):
        for side, pattern in names.items():
            outs[split, side] = open(os.path.join(args.out_dir, pattern.format(split)), "w",
                                     encoding="utf-8", newline="\n")
    counts = {split: [0, 0] for split in ("train", "valid", "test")}  # verses, chapters
    dropped = 0
    chapter_index = -1
    current_chapter = None
    try:
        # Canonical order: the source module's order (both follow the Protestant canon order).
        for key in sorted(src, key=lambda k: (src_books.index(k[0]), k[1], k[2])):
            if keep_books and key[0] not in keep_books:
                continue
            if key not in tgt:
                dropped += 1
                continue
            chapter = key[:2]
            if chapter != current_chapter:
                current_chapter = chapter
                chapter_index += 1
                counts[split_of(chapter_index)][1] += 1
            split = split_of(chapter_index)
            src_text = src[key]
            if args.fix_src_drop_caps and key[2] == 1:
                src_text = fix_drop_cap(src_text)
            outs[split, "src"].write(src_text + "\n")
            outs[split, "tgt"].write(tgt[key] + "\n")
            outs[split, "doc"].write("%s.%d\n" % (key[0].replace(" ", "_"), key[1]))
            counts[split][0] += 1
    finally:
        for f in outs.values():
            f.close()
    for split, (verses, chapters) in counts.items():
        print("sword_to_corpus: %-5s %6d verses in %4d chapters" % (split, verses, chapters), file=sys.stderr)
    print("sword_to_corpus: %d source verses had no target verse and were dropped" % dropped, file=sys.stderr)


if __name__ == "__main__":
    main()
