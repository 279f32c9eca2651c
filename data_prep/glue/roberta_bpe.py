"""RoBERTa's GPT-2 byte-level BPE: fetch its files and encode text, for the MLM and GLUE recipes.

    python -m data_prep.glue.roberta_bpe fetch --dest DIR [--mirror MIRROR]
    python -m data_prep.glue.roberta_bpe encode --bpe-dir DIR --inputs a.txt b.txt --outputs a.bpe b.bpe

``fetch`` makes DIR/encoder.json, DIR/vocab.bpe and DIR/dict.txt copies of the files RoBERTa was
trained with (published by fairseq), through ``data_prep.lib.fetch`` (resume; or copied from a
mirror directory holding files of the same names, e.g. ``$ABC_DATA_MIRROR``). No sha256 is
published for them (see ``data_prep/glue/SHA256SUMS``): each is recorded on its first download,
with a WARNING that says so and how to re-verify, and checked against that record afterwards.

``encode`` writes, for each input line, the BPE ids separated by spaces (the symbols of dict.txt),
line for line: empty lines stay empty (document boundaries for ``--sample-break-mode
complete_doc``). Encoding is fairseq's own GPT-2 BPE (``fairseq.data.encoders.gpt2_bpe_utils``),
run on ``--workers`` processes, order kept.
"""

import os
import sys
from multiprocessing import Pool
from typing import List, Optional, Sequence

from data_prep.lib.cli import module_parser

BPE_BASE_URL = "https://dl.fbaipublicfiles.com/fairseq/gpt2_bpe/"
BPE_FILES = ("encoder.json", "vocab.bpe", "dict.txt")
CHECKSUMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "SHA256SUMS")

_ENCODER = None


def fetch_bpe_files(dest: str, mirror: Optional[str] = None, checksums: Sequence[str] = (CHECKSUMS,)) -> List[str]:
    """Fetch (or copy from ``mirror``) the three BPE files into ``dest``; returns their paths.
    ``checksums``: the checksum files consulted (a file they do not list is recorded)."""
    from data_prep.lib.checksums import fetch_options
    from data_prep.lib.fetch import fetch

    paths = []
    for name in BPE_FILES:
        path = os.path.join(dest, name)
        fetch(BPE_BASE_URL + name, path, mirror=mirror, **fetch_options(name, checksums))
        paths.append(path)
    return paths


def _init(encoder_json: str, vocab_bpe: str) -> None:
    global _ENCODER
    from fairseq.data.encoders.gpt2_bpe_utils import get_encoder

    _ENCODER = get_encoder(encoder_json, vocab_bpe)


def _encode(line: str) -> str:
    line = line.rstrip("\n")
    if not line.strip():
        return ""
    return " ".join(map(str, _ENCODER.encode(line.strip())))


def encode_files(bpe_dir: str, inputs: List[str], outputs: List[str], workers: int = 1) -> None:
    """BPE-encode each of ``inputs`` into the matching ``outputs`` (line for line)."""
    if len(inputs) != len(outputs):
        raise ValueError(f"--inputs has {len(inputs)} files but --outputs {len(outputs)}")
    encoder_json, vocab_bpe = (os.path.join(bpe_dir, name) for name in BPE_FILES[:2])
    for path in (encoder_json, vocab_bpe):
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{path} is missing: run `python -m data_prep.glue.roberta_bpe fetch --dest {bpe_dir}`")
    for inp, out in zip(inputs, outputs):
        if not os.path.isfile(inp):
            raise FileNotFoundError(f"input text {inp} does not exist")
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        tmp = out + ".tmp"
        with open(inp, encoding="utf-8", errors="replace") as src, open(tmp, "w", encoding="utf-8") as dst:
            if workers > 1:
                with Pool(workers, initializer=_init, initargs=(encoder_json, vocab_bpe)) as pool:
                    for encoded in pool.imap(_encode, src, chunksize=256):
                        dst.write(encoded + "\n")
            else:
                _init(encoder_json, vocab_bpe)
                for line in src:
                    dst.write(_encode(line) + "\n")
        os.replace(tmp, out)


def main(argv: Optional[List[str]] = None) -> int:
    parser = module_parser("data_prep.glue.roberta_bpe", __doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    fetch_p = sub.add_parser("fetch", help="fetch encoder.json, vocab.bpe and dict.txt")
    fetch_p.add_argument("--dest", required=True, help="directory for the three files")
    fetch_p.add_argument("--mirror", help="directory holding the files instead of the network "
                                          "(default: $ABC_DATA_MIRROR if set)")
    enc_p = sub.add_parser("encode", help="BPE-encode text files line by line")
    enc_p.add_argument("--bpe-dir", required=True, help="directory with encoder.json and vocab.bpe")
    enc_p.add_argument("--inputs", nargs="+", required=True, help="raw text files")
    enc_p.add_argument("--outputs", nargs="+", required=True, help="encoded files, one per input")
    enc_p.add_argument("--workers", type=int, default=1, help="encoding processes")
    args = parser.parse_args(argv)
    try:
        if args.command == "fetch":
            for path in fetch_bpe_files(args.dest, args.mirror):
                print(path)
        else:
            from data_prep.lib.outputs import refuse_existing

            refuse_existing(args.outputs, "roberta_bpe")
            encode_files(args.bpe_dir, args.inputs, args.outputs, max(1, args.workers))
    except (OSError, ValueError) as e:
        print(f"roberta_bpe: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # FetchError and ChecksumMismatch from data_prep.lib.fetch
        print(f"roberta_bpe: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
