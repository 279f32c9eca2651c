"""Extract IWSLT14 TED documents (ES-EN) into the raw-documents layout.

Input: the unpacked WIT3 archive directory of the pair (``en-es/`` from ``en-es.tgz`` or
``es-en/`` from ``es-en.tgz``), holding

- ``train.tags.{pair}.{lang}``: one talk after the other; each talk starts with a block of
  metadata lines (``<url>``, ``<keywords>``, ``<speaker>``, ``<talkid>``, ``<title>``,
  ``<description>``, ...) followed by its transcript, one sentence per line, the two language
  files aligned line by line;
- ``IWSLT14.TED.{set}.{pair}.{lang}.xml`` for dev2010, tst2010, tst2011, tst2012: ``<doc docid=..>``
  elements holding ``<seg id=..>`` sentences.

Output (``OUT``): ``{split}.{src}``, ``{split}.{tgt}`` (one plain sentence per line) and
``{split}.doc`` (the document id of each line; a document's lines are contiguous and in order),
with the splits of Miculicich et al. (2018): train = train.tags, valid = dev2010,
test = tst2010 + tst2011 + tst2012. Metadata (titles, descriptions) is not translated text and is
left out; a sentence pair with an empty side is dropped, as in Miculicich et al.'s extraction.
"""

import argparse
import html
import os
import re
import sys

from data_prep.lib.outputs import refuse_existing

from .text_utils import clean_line, read_lines, write_lines

TALKID_RE = re.compile(r"<talkid>\s*(.*?)\s*</talkid>")
DOC_RE = re.compile(r"<doc\b[^>]*\bdocid=\"([^\"]*)\"", re.I)
SEG_RE = re.compile(r"<seg\b[^>]*\bid=\"?([^\">\s]*)\"?[^>]*>(.*?)</seg>", re.I | re.S)
SPLITS = {"valid": ["dev2010"], "test": ["tst2010", "tst2011", "tst2012"]}


def find_file(folder, names):
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    sys.exit("iwslt_docs: none of %s found in %s" % (", ".join(names), folder))


def pair_names(src, tgt):
    # WIT3 published both directions; accept either archive's file names.
    return ["%s-%s" % (src, tgt), "%s-%s" % (tgt, src)]


def read_train(folder, src, tgt):
    """[(doc_id, src_sentence, tgt_sentence)] from the train.tags files."""
    paths = {lang: find_file(folder, ["train.tags.%s.%s" % (p, lang) for p in pair_names(src, tgt)])
             for lang in (src, tgt)}
    a, b = read_lines(paths[src]), read_lines(paths[tgt])
    if len(a) != len(b):
        sys.exit("iwslt_docs: %s has %d lines but %s has %d" % (paths[src], len(a), paths[tgt], len(b)))
    out, seen, pending_id, in_header, current = [], set(), None, True, None
    for lineno, (la, lb) in enumerate(zip(a, b), 1):
        sa, sb = la.strip(), lb.strip()
        is_meta = sa.startswith("<")
        if is_meta != sb.startswith("<"):
            sys.exit("iwslt_docs: line %d is metadata in one language file only:\n  %s\n  %s"
                     % (lineno, sa[:80], sb[:80]))
        if is_meta:
            if not in_header:  # the first metadata line after text: a new talk begins
                in_header, pending_id = True, None
            m = TALKID_RE.search(sa)
            if m:
                pending_id = m.group(1)
            continue
        if in_header:
            in_header = False
            current = "train.%s" % (pending_id if pending_id is not None else len(seen))
            if current in seen:  # a talk id used twice: keep the documents apart
                current = "%s.%d" % (current, len(seen))
            seen.add(current)
        sa, sb = clean_line(sa), clean_line(sb)
        if sa and sb:
            out.append((current, sa, sb))
    return out


def read_xml(folder, test_set, src, tgt):
    """[(doc_id, src_sentence, tgt_sentence)] from one dev/test set."""
    docs = {}
    for lang in (src, tgt):
        path = find_file(folder, ["IWSLT14.TED.%s.%s.%s.xml" % (test_set, p, lang) for p in pair_names(src, tgt)])
        text = "\n".join(read_lines(path))
        order, segs = [], {}
        for part in re.split(r"(?=<doc\b)", text, flags=re.I)[1:]:
            m = DOC_RE.search(part)
            if not m:
                sys.exit("iwslt_docs: a <doc> without docid in %s" % path)
            order.append(m.group(1))
            segs[m.group(1)] = [(sid, clean_line(html.unescape(body))) for sid, body in SEG_RE.findall(part)]
        docs[lang] = (order, segs, path)
    (order_s, segs_s, path_s), (order_t, segs_t, path_t) = docs[src], docs[tgt]
    if order_s != order_t:
        sys.exit("iwslt_docs: %s and %s hold different documents" % (path_s, path_t))
    out = []
    for doc in order_s:
        if [i for i, _ in segs_s[doc]] != [i for i, _ in segs_t[doc]]:
            sys.exit("iwslt_docs: document %s has different segment ids in %s and %s" % (doc, path_s, path_t))
        for (_, a), (_, b) in zip(segs_s[doc], segs_t[doc]):
            if a and b:
                out.append(("%s.%s" % (test_set, doc), a, b))
    return out


def write_split(out_dir, split, rows, src, tgt):
    write_lines(os.path.join(out_dir, "%s.%s" % (split, src)), [r[1] for r in rows])
    write_lines(os.path.join(out_dir, "%s.%s" % (split, tgt)), [r[2] for r in rows])
    write_lines(os.path.join(out_dir, "%s.doc" % split), [r[0] for r in rows])
    n_docs = len(set(r[0] for r in rows))
    print("iwslt_docs: %-5s %7d sentences in %4d documents" % (split, len(rows), n_docs), file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="the unpacked archive folder (en-es/ or es-en/)")
    parser.add_argument("out", help="output directory")
    parser.add_argument("--src", default="es")
    parser.add_argument("--tgt", default="en")
    args = parser.parse_args(argv)
    refuse_existing([os.path.join(args.out, "%s.%s" % (split, ext)) for split in ("train",) + tuple(SPLITS)
                     for ext in (args.src, args.tgt, "doc")], "iwslt_docs")
    os.makedirs(args.out, exist_ok=True)
    write_split(args.out, "train", read_train(args.folder, args.src, args.tgt), args.src, args.tgt)
    for split, sets in SPLITS.items():
        rows = []
        for test_set in sets:
            rows.extend(read_xml(args.folder, test_set, args.src, args.tgt))
        write_split(args.out, split, rows, args.src, args.tgt)


if __name__ == "__main__":
    main()
