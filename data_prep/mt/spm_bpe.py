"""Shared source/target BPE with sentencepiece: train a model, encode files, decode files.

    python -m data_prep.mt.spm_bpe train --vocab-size 32768 --model-prefix OUT/spm IN1 IN2 ...
    python -m data_prep.mt.spm_bpe encode --model OUT/spm.model IN OUT [--workers N]
    python -m data_prep.mt.spm_bpe decode --model OUT/spm.model IN OUT

One model is trained on the union of both languages' training text, so the vocabulary (and
fairseq's joined dictionary built from it) is shared. ``model_type=bpe`` gives byte-pair merges
as in the papers' setups; ``--vocab-size`` is the size of the resulting subword vocabulary.
Encoding writes space-separated pieces, the input format of fairseq-preprocess; decoding turns
pieces back into text (the inverse of encoding, up to sentencepiece's normalisation).
"""

import argparse
import os
import sys

from data_prep.lib.outputs import refuse_existing
from data_prep.mt import line_map

_PROCESSOR = None


def _load(model):
    import sentencepiece as spm

    return spm.SentencePieceProcessor(model_file=model)


def train(inputs, model_prefix, vocab_size, character_coverage=1.0, input_sentence_size=0,
          threads=1, user_symbols=()):
    import sentencepiece as spm

    for path in inputs:
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            sys.exit("spm_bpe: training input %s is missing or empty" % path)
    options = dict(
        input=",".join(inputs),
        model_prefix=model_prefix,
        model_type="bpe",
        vocab_size=vocab_size,
        character_coverage=character_coverage,
        num_threads=threads,
        # Small corpora (tests, the Bible) cannot always fill the requested vocabulary; take what
        # there is instead of failing. Real corpora reach the size exactly.
        hard_vocab_limit=False,
        # fairseq adds its own <s>, </s>, <pad>, <unk>: keep sentencepiece's control symbols out of
        # the encoded text (unk stays, as it must exist).
        bos_id=-1,
        eos_id=-1,
        # Sentences longer than this are skipped for training only (default 4192 bytes).
        max_sentence_length=16384,
        minloglevel=1,
    )
    if input_sentence_size:
        # Sample this many sentences (deterministically: sentencepiece seeds its sampler) instead
        # of loading all 9M WMT lines into memory.
        options.update(input_sentence_size=input_sentence_size, shuffle_input_sentence=True)
    if user_symbols:
        options["user_defined_symbols"] = list(user_symbols)
    spm.SentencePieceTrainer.train(**options)


def _init_worker(model):
    global _PROCESSOR
    _PROCESSOR = _load(model)


def _encode_chunk(lines):
    return [" ".join(_PROCESSOR.encode(line, out_type=str)) for line in lines]


def encode_file(model, src, dst, workers=1):
    line_map.map_file(_init_worker, model, _encode_chunk, src, dst, workers, chunk_size=10000)


def decode_lines(processor, lines):
    return [processor.decode(line.split()) for line in lines]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train", help="train a shared BPE model")
    p.add_argument("inputs", nargs="+", help="training text files (all languages)")
    p.add_argument("--model-prefix", required=True, help="writes PREFIX.model and PREFIX.vocab")
    p.add_argument("--vocab-size", type=int, required=True)
    p.add_argument("--character-coverage", type=float, default=1.0)
    p.add_argument("--input-sentence-size", type=int, default=0,
                   help="sample at most this many sentences for training (0: all)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--user-symbol", action="append", default=[],
                   help="a symbol that must stay one piece (repeatable)")
    p = sub.add_parser("encode", help="text -> space-separated pieces")
    p.add_argument("--model", required=True)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("input")
    p.add_argument("output")
    p = sub.add_parser("decode", help="space-separated pieces -> text")
    p.add_argument("--model", required=True)
    p.add_argument("input")
    p.add_argument("output")
    args = parser.parse_args(argv)
    refuse_existing([args.model_prefix + ext for ext in (".model", ".vocab")] if args.command == "train"
                    else [args.output], "spm_bpe")

    if args.command == "train":
        if args.vocab_size < 10:
            parser.error("--vocab-size must be at least 10, got %d" % args.vocab_size)
        train(args.inputs, args.model_prefix, args.vocab_size, args.character_coverage,
              args.input_sentence_size, args.threads, user_symbols=args.user_symbol)
    elif args.command == "encode":
        encode_file(args.model, args.input, args.output, args.workers)
    else:
        processor = _load(args.model)
        with open(args.input, encoding="utf-8") as fin, open(args.output, "w", encoding="utf-8", newline="\n") as fout:
            for line in decode_lines(processor, [line.rstrip("\n") for line in fin]):
                fout.write(line + "\n")


if __name__ == "__main__":
    main()
