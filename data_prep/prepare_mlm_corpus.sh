#!/usr/bin/env bash
# Encode raw text with RoBERTa's GPT-2 BPE, shard and binarise it for continued MLM pretraining.
#
#   bash data_prep/prepare_mlm_corpus.sh --train "a.txt b.txt" --valid v.txt --dest data-bin/mlm [options]
#
# Options:
#   --train "FILES"   raw text files for training (space separated; one sentence or paragraph per
#                     line, an empty line between documents)
#   --valid FILE      raw text for validation
#   --dest DIR        output: DIR/shard0 ... DIR/shard{K-1}, each a fairseq data dir (dict.txt,
#                     train.{bin,idx}, valid.{bin,idx}); pass them to fairseq-train as
#                     DIR/shard0:DIR/shard1:... (one shard per epoch, as RoBERTa does)
#   --shards K        number of training shards (default 1)
#   --workers N       BPE and binarisation processes (default 2)
#   --bpe-dir DIR     where encoder.json, vocab.bpe, dict.txt are kept (default DEST/gpt2_bpe)
#   --mirror DIR      take the BPE files from DIR instead of downloading (also $ABC_DATA_MIRROR)
#   -h, --help        this text
#
# The BPE files are downloaded from fairseq's published URLs with data_prep/lib/fetch.py (resume;
# sha256 recorded on the first download in FILE.sha256 and verified on every later run). The
# vocabulary is RoBERTa's dict.txt, so the data fits roberta.base / abc_roberta_base checkpoints.
# Resumable: every finished step leaves a stamp and is skipped when re-run with the same inputs.
set -euo pipefail

die() { printf 'prepare_mlm_corpus: ERROR: %s\n' "$*" >&2; exit 1; }
log() { printf 'prepare_mlm_corpus: %s\n' "$*" >&2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
train="" valid="" dest="" shards=1 workers=2 bpe_dir="" mirror="${ABC_DATA_MIRROR:-}"
while [ $# -gt 0 ]; do
    case "$1" in
        --train) train="${2:?--train needs files}"; shift 2 ;;
        --valid) valid="${2:?--valid needs a file}"; shift 2 ;;
        --dest) dest="${2:?--dest needs a directory}"; shift 2 ;;
        --shards) shards="${2:?--shards needs a number}"; shift 2 ;;
        --workers) workers="${2:?--workers needs a number}"; shift 2 ;;
        --bpe-dir) bpe_dir="${2:?--bpe-dir needs a directory}"; shift 2 ;;
        --mirror) mirror="${2:?--mirror needs a directory}"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done
[ -n "$train" ] || die "--train is required (see --help)"
[ -n "$valid" ] || die "--valid is required"
[ -n "$dest" ] || die "--dest is required"
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "--shards must be a positive integer, got '$shards'"
[[ "$workers" =~ ^[1-9][0-9]*$ ]] || die "--workers must be a positive integer, got '$workers'"
read -r -a train_files <<< "$train"
for f in "${train_files[@]}" "$valid"; do
    if [ ! -f "$f" ] || [ ! -r "$f" ]; then die "input text $f does not exist or is not readable"; fi
    [ -s "$f" ] || die "input text $f is empty"
done
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
bpe_dir="${bpe_dir:-$dest/gpt2_bpe}"
python="${PYTHON:-python}"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"

# --- 1. BPE files ---------------------------------------------------------------------------
mirror_args=()
[ -z "$mirror" ] || mirror_args=(--mirror "$mirror")
"$python" -m data_prep.glue.roberta_bpe fetch --dest "$bpe_dir" "${mirror_args[@]}" >/dev/null \
    || die "could not fetch the BPE files into $bpe_dir"

# --- 2. concatenate, encode -----------------------------------------------------------------
work="$dest/work"
mkdir -p "$work"
stamp="$( { printf 'shards=%s\n' "$shards"; sha256sum "${train_files[@]}" "$valid" "$bpe_dir/encoder.json" \
    "$bpe_dir/vocab.bpe" "$bpe_dir/dict.txt"; } | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$work/.encoded" 2>/dev/null)" != "$stamp" ]; then
    log "BPE-encoding ${#train_files[@]} training file(s) and $valid with $workers worker(s)"
    cat "${train_files[@]}" > "$work/train.raw"
    "$python" -m data_prep.glue.roberta_bpe encode --bpe-dir "$bpe_dir" --workers "$workers" \
        --inputs "$work/train.raw" "$valid" --outputs "$work/train.bpe" "$work/valid.bpe"
    rm -f "$work/train.raw"
    # Shards split at document boundaries (empty lines) where there are any, else at lines.
    "$python" - "$work/train.bpe" "$shards" <<'EOF'
import sys
path, shards = sys.argv[1], int(sys.argv[2])
docs, doc = [], []
with open(path, encoding="utf-8") as f:
    for line in f:
        doc.append(line)
        if not line.strip():
            docs.append(doc)
            doc = []
if doc:
    docs.append(doc)
if len(docs) < shards:  # too few documents: split by lines instead
    docs = [[line] for d in docs for line in d]
if len(docs) < shards:
    sys.exit(f"--shards {shards} is more than the {len(docs)} lines of training text")
per = -(-len(docs) // shards)
for k in range(shards):
    with open(f"{path}.shard{k}", "w", encoding="utf-8") as out:
        for d in docs[k * per:(k + 1) * per]:
            out.writelines(d)
EOF
    printf '%s\n' "$stamp" > "$work/.encoded"
fi

# --- 3. binarise each shard with RoBERTa's dictionary -----------------------------------------
paths=()
for ((k = 0; k < shards; k++)); do
    out="$dest/shard$k"
    paths+=("$out")
    if [ "$(cat "$out/.done" 2>/dev/null)" = "$stamp" ]; then
        log "shard $k already binarised"
        continue
    fi
    rm -rf "$out.tmp"
    "$python" -m fairseq_cli.preprocess --only-source --srcdict "$bpe_dir/dict.txt" \
        --trainpref "$work/train.bpe.shard$k" --validpref "$work/valid.bpe" \
        --destdir "$out.tmp" --workers "$workers" >/dev/null 2>"$work/preprocess$k.log" \
        || die "fairseq-preprocess failed for shard $k (see $work/preprocess$k.log)"
    printf '%s\n' "$stamp" > "$out.tmp/.done"
    rm -rf "$out"
    mv "$out.tmp" "$out"
done
data_path="$(IFS=:; echo "${paths[*]}")"
log "done: pass $data_path to fairseq-train (scripts/roberta/pretrain_mlm.sh --data $data_path)"
echo "$data_path"
