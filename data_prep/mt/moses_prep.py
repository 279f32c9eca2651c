"""Moses-style preprocessing with sacremoses (a Python port of the Moses scripts).

    python -m data_prep.mt.moses_prep tokenize --lang es IN OUT [--workers N]
    python -m data_prep.mt.moses_prep train-truecaser IN MODEL [--workers N]
    python -m data_prep.mt.moses_prep truecase --model MODEL IN OUT [--workers N]
    python -m data_prep.mt.moses_prep detokenize --lang en IN OUT

``tokenize`` = ``normalize-punctuation.perl -l L | tokenizer.perl -a -l L`` (aggressive hyphen
splitting, special characters escaped as ``&amp;`` ``&lt;`` ... like the perl tokenizer), the
steps Miculicich et al. (2018) apply to IWSLT14 ES-EN; ``train-truecaser`` / ``truecase``
correspond to ``train-truecaser.perl`` / ``truecase.perl``. ``detokenize`` undoes them for
scoring: ``detruecase.perl`` (upper-case the first letter of the sentence) and
``detokenizer.perl`` (which also unescapes).
"""

import argparse
import sys

from data_prep.lib.outputs import refuse_existing
from data_prep.mt import line_map

_WORKER = None


def _require_sacremoses():
    try:
        import sacremoses  # noqa: F401
    except ImportError:
        sys.exit("moses_prep: the python package 'sacremoses' is missing (pip install sacremoses)")


def _tokenizer_init(lang):
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

    global _WORKER
    normalizer, tokenizer = MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang)
    _WORKER = lambda line: tokenizer.tokenize(  # noqa: E731
        normalizer.normalize(line), aggressive_dash_splits=True, return_str=True, escape=True)


def _truecaser_init(model):
    from sacremoses import MosesTruecaser

    global _WORKER
    truecaser = MosesTruecaser(load_from=model)
    _WORKER = lambda line: truecaser.truecase(line, return_str=True)  # noqa: E731


def _run_chunk(lines):
    # Whitespace is collapsed so that every output line has single-space separated tokens.
    return [" ".join(_WORKER(line).split()) if line.strip() else "" for line in lines]


def map_file(initializer, init_arg, src, dst, workers):
    """Apply the line function set up by INITIALIZER(INIT_ARG) to every line of SRC, in order."""
    line_map.map_file(initializer, init_arg, _run_chunk, src, dst, workers, chunk_size=2000)


def train_truecaser(src, model, workers):
    from sacremoses import MosesTruecaser

    with open(src, encoding="utf-8", newline="\n") as f:
        documents = [line.split() for line in f]
    MosesTruecaser().train(documents, save_to=model, processes=max(1, workers))


def detokenize_lines(lines, lang):
    from sacremoses import MosesDetokenizer, MosesDetruecaser

    detruecaser, detokenizer = MosesDetruecaser(), MosesDetokenizer(lang=lang)
    return [detokenizer.detokenize(detruecaser.detruecase(line, return_str=True).split()) for line in lines]


# command: (help, its required option, whether it takes --workers, the name of what it writes)
COMMANDS = {
    "tokenize": ("normalise punctuation and tokenise", "--lang", True, "output"),
    "train-truecaser": ("train a truecasing model on tokenised text", None, True, "model"),
    "truecase": ("truecase tokenised text", "--model", True, "output"),
    "detokenize": ("detruecase and detokenise (for scoring)", "--lang", False, "output"),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, required, parallel, output) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        if required:
            p.add_argument(required, required=True)
        if parallel:
            p.add_argument("--workers", type=int, default=1)
        p.add_argument("input")
        p.add_argument(output)
    args = parser.parse_args(argv)
    refuse_existing([args.model if args.command == "train-truecaser" else args.output], "moses_prep")
    _require_sacremoses()

    if args.command == "tokenize":
        map_file(_tokenizer_init, args.lang, args.input, args.output, args.workers)
    elif args.command == "train-truecaser":
        train_truecaser(args.input, args.model, args.workers)
    elif args.command == "truecase":
        map_file(_truecaser_init, args.model, args.input, args.output, args.workers)
    else:
        with open(args.input, encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f]
        with open(args.output, "w", encoding="utf-8", newline="\n") as f:
            f.writelines(line + "\n" for line in detokenize_lines(lines, args.lang))


if __name__ == "__main__":
    main()
