#!/usr/bin/env python3
"""Score translations with SacreBLEU against the raw (untokenised) references.

    python scripts/mt/score.py --data DATA_BIN --split test --hyp-pieces hyp.bpe --out-dir DIR
    python scripts/mt/score.py --data DATA_BIN --split test --generate-output gen.txt --out-dir DIR
    python scripts/mt/score.py --data DATA_BIN --split test --copy-source --out-dir DIR

Hypotheses come as sentencepiece pieces (one per reference line, from translate_docs.py) or as
fairseq-generate output (its ``H-<id>`` lines, put back into corpus order). They are turned back
into plain text with the recipe's own post-processing (data_prep/mt/postprocess.py: de-BPE,
and for Moses-preprocessed data detruecasing and detokenisation), written to
``OUT_DIR/hyp.{split}.txt`` and scored with SacreBLEU's default BLEU (13a tokenisation, as
reported in the paper) against ``DATA_BIN/eval/{split}.raw.{tgt}``. ``--copy-source`` scores the
raw source sentences as if they were translations: the copy baseline a model has to beat.

The score, the SacreBLEU signature and the run's description (SAVE_DIR/run.json from train.sh,
if --save-dir is given) go to ``OUT_DIR/result.json``, which collect_results.py reads.
"""

import argparse
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H_LINE = re.compile(r"^H-(\d+)\t[^\t]*\t(.*)$")


def read_generate_output(path, n):
    hyps = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = H_LINE.match(line.rstrip("\n"))
            if m:
                hyps[int(m.group(1))] = m.group(2)
    missing = [i for i in range(n) if i not in hyps]
    if missing:
        sys.exit("score: %s has no hypothesis for %d of %d sentences (first: %d); did fairseq-generate "
                 "skip some (--skip-invalid-size-inputs-valid-test)?" % (path, len(missing), n, missing[0]))
    return [hyps[i] for i in range(n)]


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="fairseq data directory (a recipe's DEST/bin)")
    parser.add_argument("--split", default="test")
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--hyp-pieces", help="hypotheses as pieces, one per line in corpus order")
    src.add_argument("--generate-output", help="fairseq-generate output")
    src.add_argument("--copy-source", action="store_true", help="score the source sentences (copy baseline)")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--save-dir", help="training directory (its run.json describes the model)")
    parser.add_argument("--info", default="{}", help="JSON object of extra fields for result.json")
    args = parser.parse_args(argv)

    sys.path.insert(0, REPO)
    import sacrebleu

    from data_prep.mt.postprocess import Postprocessor

    eval_dir = os.path.join(args.data, "eval")
    post = Postprocessor(eval_dir)
    ref_path = os.path.join(eval_dir, "%s.raw.%s" % (args.split, post.meta["tgt"]))
    if not os.path.isfile(ref_path):
        sys.exit("score: no reference file %s (is --split right?)" % ref_path)
    refs = read_lines(ref_path)
    if args.copy_source:
        hyps = read_lines(os.path.join(eval_dir, "%s.raw.%s" % (args.split, post.meta["src"])))
    else:
        pieces = (read_lines(args.hyp_pieces) if args.hyp_pieces
                  else read_generate_output(args.generate_output, len(refs)))
        hyps = post(pieces)
    if len(hyps) != len(refs):
        sys.exit("score: %d hypotheses but %d references in %s" % (len(hyps), len(refs), ref_path))

    bleu = sacrebleu.metrics.BLEU()
    result = bleu.corpus_score(hyps, [refs])
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "hyp.%s.txt" % args.split), "w", encoding="utf-8", newline="\n") as f:
        f.writelines(h + "\n" for h in hyps)
    record = {
        "bleu": round(result.score, 2),
        "bleu_full": str(result),
        "signature": str(bleu.get_signature()),
        "split": args.split,
        "sentences": len(refs),
        "data": os.path.abspath(args.data),
        "copy_source": bool(args.copy_source),
    }
    if args.save_dir and os.path.isfile(os.path.join(args.save_dir, "run.json")):
        with open(os.path.join(args.save_dir, "run.json"), encoding="utf-8") as f:
            record["run"] = json.load(f)
        record["save_dir"] = os.path.abspath(args.save_dir)
    record.update(json.loads(args.info))
    tmp = os.path.join(args.out_dir, "result.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, os.path.join(args.out_dir, "result.json"))
    print("score: %s %s BLEU = %.2f  (%s)" % (args.split, "copy-source" if args.copy_source else "", result.score,
                                             bleu.get_signature()))


if __name__ == "__main__":
    main()
