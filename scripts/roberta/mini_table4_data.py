"""Raw text for the Table 4 miniature (scripts/roberta/mini_table4.sh): MLM corpus and classification set.

    python scripts/roberta/mini_table4_data.py --kjv DIR --rt DIR --out DIR [--max-train N] [--max-eval N]

Reads the two embedded corpora (``data_prep/default_corpus``: KJV Genesis-2 Kings;
``data_prep/rotten_tomatoes``: Rotten Tomatoes review snippets and plot summaries) and writes,
lower-cased, one line per sentence:

- ``mlm/train.txt``: KJV train + plot summaries + the *text* of the classification train split
  (no labels; the task-adaptive pretraining of Gururangan et al. 2020); ``mlm/valid.txt``: KJV
  valid + the dev split's text. No test snippet is ever in the MLM data.
- ``cls/{train,valid,test}.input0`` and ``.label`` (``fresh`` / ``rotten``) for fairseq's
  ``sentence_prediction`` task.

``--max-train`` / ``--max-eval`` keep the first N lines of each source (toy runs);
``--max-finetune-train`` the first N of the classification train split for fine-tuning only (the
MLM text keeps them all). OUT must not
hold these files already (the caller builds into a fresh temporary directory).
"""

import argparse
import os
import sys

FILES = ["mlm/train.txt", "mlm/valid.txt"] + ["cls/%s.%s" % (s, k) for s in ("train", "valid", "test")
                                               for k in ("input0", "label")]


def read_lines(path, limit):
    if not os.path.isfile(path):
        sys.exit("mini_table4_data: missing input file %s" % path)
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    return lines[:limit] if limit else lines


def read_labelled(path, limit):
    pairs = []
    for number, line in enumerate(read_lines(path, limit), 1):
        label, sep, text = line.partition("\t")
        if not sep or not text:
            sys.exit("mini_table4_data: %s line %d is not LABEL<TAB>TEXT" % (path, number))
        pairs.append((label, text.lower()))
    return pairs


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(line + "\n" for line in lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kjv", required=True, help="folder with train.txt / valid.txt (data_prep/default_corpus)")
    parser.add_argument("--rt", required=True, help="folder with {train,valid,test}.tsv and plots.txt")
    parser.add_argument("--out", required=True, help="folder to write mlm/ and cls/ into")
    parser.add_argument("--max-train", type=int, default=0, metavar="N", help="first N lines of each train source")
    parser.add_argument("--max-eval", type=int, default=0, metavar="N", help="first N lines of each dev/test source")
    parser.add_argument("--max-finetune-train", type=int, default=0, metavar="N",
                        help="first N classification train snippets for fine-tuning (MLM text keeps all)")
    args = parser.parse_args(argv)
    for flag in ("max_train", "max_eval", "max_finetune_train"):
        if getattr(args, flag) < 0:
            parser.error("--%s must be >= 0" % flag.replace("_", "-"))
    existing = [f for f in FILES if os.path.exists(os.path.join(args.out, f))]
    if existing:
        sys.exit("mini_table4_data: refusing to overwrite %s in %s" % (", ".join(existing), args.out))
    splits = {s: read_labelled(os.path.join(args.rt, s + ".tsv"), args.max_train if s == "train" else args.max_eval)
              for s in ("train", "valid", "test")}
    mlm_train = [line.lower() for line in read_lines(os.path.join(args.kjv, "train.txt"), args.max_train)]
    mlm_train += [line.lower() for line in read_lines(os.path.join(args.rt, "plots.txt"), args.max_train)]
    mlm_train += [text for _, text in splits["train"]]
    mlm_valid = [line.lower() for line in read_lines(os.path.join(args.kjv, "valid.txt"), args.max_eval)]
    mlm_valid += [text for _, text in splits["valid"]]
    write(os.path.join(args.out, "mlm/train.txt"), mlm_train)
    write(os.path.join(args.out, "mlm/valid.txt"), mlm_valid)
    if args.max_finetune_train:
        splits["train"] = splits["train"][:args.max_finetune_train]
    for split, pairs in splits.items():
        write(os.path.join(args.out, "cls/%s.input0" % split), [text for _, text in pairs])
        write(os.path.join(args.out, "cls/%s.label" % split), [label for label, _ in pairs])
    print("mini_table4_data: mlm train %d lines, valid %d; classification train %d, dev %d, test %d"
          % (len(mlm_train), len(mlm_valid), *(len(splits[s]) for s in ("train", "valid", "test"))), file=sys.stderr)


if __name__ == "__main__":
    main()
