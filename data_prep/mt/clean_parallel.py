"""Length-based cleaning of a subword-encoded parallel training corpus.

Drops a sentence pair when either side is empty or longer than ``--max-len`` tokens, or when the
longer side has more than ``--ratio`` times the tokens of the shorter one: the criteria of Moses'
``clean-corpus-n.perl`` (used with ratio 1.5 and lengths 1-250 on BPE tokens in the standard WMT14
EN-DE preparation). Only training data is cleaned; development and test sets are kept whole.

    python -m data_prep.mt.clean_parallel IN_PREFIX OUT_PREFIX --langs en de [--max-len 250] [--ratio 1.5]

reads ``IN_PREFIX.en`` / ``IN_PREFIX.de`` and writes ``OUT_PREFIX.en`` / ``OUT_PREFIX.de``.
"""

import argparse
import itertools
import sys

from data_prep.lib.outputs import refuse_existing


def keep(a, b, max_len, ratio):
    la, lb = len(a.split()), len(b.split())
    if la == 0 or lb == 0 or la > max_len or lb > max_len:
        return False
    return max(la, lb) <= ratio * min(la, lb)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("in_prefix")
    parser.add_argument("out_prefix")
    parser.add_argument("--langs", nargs=2, required=True, metavar=("SRC", "TGT"))
    parser.add_argument("--max-len", type=int, default=250, help="maximum tokens per side (default 250)")
    parser.add_argument("--ratio", type=float, default=1.5, help="maximum length ratio (default 1.5)")
    args = parser.parse_args(argv)
    if args.max_len < 1 or args.ratio < 1:
        parser.error("--max-len must be >= 1 and --ratio >= 1")
    src, tgt = args.langs
    refuse_existing(["%s.%s" % (args.out_prefix, lang) for lang in (src, tgt)], "clean_parallel")
    total = kept = 0
    with open("%s.%s" % (args.in_prefix, src), encoding="utf-8", newline="\n") as fa, \
            open("%s.%s" % (args.in_prefix, tgt), encoding="utf-8", newline="\n") as fb, \
            open("%s.%s" % (args.out_prefix, src), "w", encoding="utf-8", newline="\n") as oa, \
            open("%s.%s" % (args.out_prefix, tgt), "w", encoding="utf-8", newline="\n") as ob:
        for a, b in itertools.zip_longest(fa, fb):
            if a is None or b is None:
                sys.exit("clean_parallel: %s.%s and %s.%s have different numbers of lines"
                         % (args.in_prefix, src, args.in_prefix, tgt))
            total += 1
            if keep(a, b, args.max_len, args.ratio):
                oa.write(a)
                ob.write(b)
                kept += 1
    print("clean_parallel: kept %d of %d pairs (%.2f%%)" % (kept, total, 100.0 * kept / max(total, 1)),
          file=sys.stderr)
    if kept == 0:
        sys.exit("clean_parallel: no pair survived cleaning")


if __name__ == "__main__":
    main()
