"""Shuffle the documents of a text file and split them into shards (Appendix C.3 of the paper:
"we split the training data into 20 shards, after shuffling").

    python -m data_prep.mlm.shard INPUT OUT_PREFIX --shards K [--seed S]

INPUT holds one sentence or paragraph per line and an empty line after each document (the
format of ``--sample-break-mode complete_doc``); the lines may be BPE ids. Documents are kept
whole: each keeps its lines and its closing empty line (added to a last document without one).
Their order is a seeded permutation (the same seed gives byte-identical shards), and shard k
(``OUT_PREFIX.shard{k}``) takes the k-th contiguous block of it, so the shards differ in size by
at most one document. A file with fewer documents than shards is split by lines instead (with a
note). Memory holds only the offsets of the documents, not the text: the paper sharded because
its corpus did not fit.
"""

import random
import sys
from typing import List, Tuple

from data_prep.lib.cli import module_parser
from data_prep.lib.outputs import refuse_existing


def document_spans(path: str) -> List[Tuple[int, int]]:
    """(byte offset, byte length) of every document of ``path`` (a document ends after an empty
    line, or at the end of the file)."""
    spans, start, pos = [], 0, 0
    with open(path, "rb") as f:
        for line in f:
            pos += len(line)
            if not line.strip():
                spans.append((start, pos - start))
                start = pos
    if pos > start:
        spans.append((start, pos - start))
    return spans


def line_spans(path: str) -> List[Tuple[int, int]]:
    """(byte offset, byte length) of every line of ``path``."""
    spans, pos = [], 0
    with open(path, "rb") as f:
        for line in f:
            spans.append((pos, len(line)))
            pos += len(line)
    return spans


def shard(path: str, out_prefix: str, shards: int, seed: int) -> List[int]:
    """Write the shuffled shards; returns the number of documents (or lines) in each."""
    outputs = ["%s.shard%d" % (out_prefix, k) for k in range(shards)]
    refuse_existing(outputs, "shard")
    spans, whole_documents = document_spans(path), True
    if len(spans) < shards:
        print("shard: %s has %d documents, fewer than --shards %d: splitting it by lines instead"
              % (path, len(spans), shards), file=sys.stderr)
        spans, whole_documents = line_spans(path), False
    if len(spans) < shards:
        sys.exit("shard: --shards %d is more than the %d lines of %s" % (shards, len(spans), path))
    random.Random(seed).shuffle(spans)
    counts = []
    with open(path, "rb") as src:
        for k, out in enumerate(outputs):
            block = spans[k * len(spans) // shards:(k + 1) * len(spans) // shards]
            with open(out, "wb") as dst:
                for offset, length in block:
                    src.seek(offset)
                    text = src.read(length)
                    text = text if text.endswith(b"\n") else text + b"\n"
                    if whole_documents and text.splitlines()[-1].strip():
                        text += b"\n"  # the file's last document, without its closing empty line
                    dst.write(text)
            counts.append(len(block))
    return counts


def main(argv=None):
    parser = module_parser("data_prep.mlm.shard", __doc__)
    parser.add_argument("input", help="text, an empty line after each document")
    parser.add_argument("out_prefix", help="writes OUT_PREFIX.shard0 ... OUT_PREFIX.shard{K-1}")
    parser.add_argument("--shards", type=int, required=True, help="number of shards K")
    parser.add_argument("--seed", type=int, default=1, help="seed of the document permutation (default 1)")
    args = parser.parse_args(argv)
    if args.shards < 1:
        parser.error("--shards must be >= 1, got %d" % args.shards)
    counts = shard(args.input, args.out_prefix, args.shards, args.seed)
    print("shard: %d documents shuffled into %d shards of %d..%d"
          % (sum(counts), len(counts), min(counts), max(counts)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
