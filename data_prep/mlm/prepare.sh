#!/usr/bin/env bash
# The corpus for continued MLM pretraining (the paper's Appendix C.3): raw text encoded with
# RoBERTa's GPT-2 BPE, documents shuffled, split into shards and binarised with RoBERTa's dict.
#
#   bash data_prep/mlm/prepare.sh --train "a.txt b.txt" --valid v.txt --dest data-bin/mlm [options]
#   bash data_prep/mlm/prepare.sh --public-corpus wikitext-103-raw --dest data-bin/mlm_wt103
#
# The paper's corpus is BookCorpus + English Wikipedia + OpenWebText + RealNews, which cannot be
# downloaded by a script: BookCorpus and RealNews may not be redistributed (RealNews is given out
# on request by its authors), so you bring those files (--train). --public-corpus offers a
# public substitute the recipe downloads itself (pinned sha256, resumable): wikitext-103-raw, the
# raw text of 28k Wikipedia articles (~100M tokens; RoBERTa's own pretraining example uses it).
# Smaller and narrower than the paper's 160 GB, so numbers trained on it are not the paper's.
#
# Options:
#   --train "FILES"   raw text files for training (space separated; one sentence or paragraph per
#                     line, an empty line between documents)
#   --valid FILE      raw text for validation
#   --public-corpus NAME   instead of --train/--valid: download a public corpus (wikitext-103-raw)
#   --dest DIR        output: DIR/shard0 ... DIR/shard{K-1}, each a fairseq data dir (dict.txt,
#                     train.{bin,idx}, valid.{bin,idx}); pass them to fairseq-train as
#                     DIR/shard0:DIR/shard1:... (one shard per epoch, as RoBERTa does). DIR must be
#                     absent, empty or an earlier output of this recipe
#   --shards K        number of training shards (default 20, the paper's)
#   --seed S          seed of the document shuffle before sharding (default 1)
#   --workers N       BPE and binarisation processes (default 2)
#   --bpe-dir DIR     where encoder.json, vocab.bpe, dict.txt are kept (default DEST/gpt2_bpe)
#   --mirror DIR      take downloads (BPE files, the public corpus) from DIR instead of the
#                     network (also $ABC_DATA_MIRROR)
#   --url URL         where to download the public corpus (default: wikitext.smerity.com's copy)
#   --checksum-file F lines "<sha256>  <name>" overriding data_prep/mlm/SHA256SUMS for the files
#                     they name (a mirror that repackaged them; tests)
#   -h, --help        this text
#
# Downloads go through data_prep/lib/fetch.py (resume, checksum: data_prep/mlm/SHA256SUMS; the
# BPE files have no published checksum and are recorded on first download with a warning). The
# vocabulary is RoBERTa's dict.txt, so the data fits roberta.base / abc_roberta_base checkpoints.
# Resumable: every stage (text/, bpe/, shards/, shardK/) is built aside and skipped when re-run
# with the same inputs and options.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=data_prep/lib/common.sh
. "$repo/data_prep/lib/common.sh"

PUBLIC_ARCHIVE=wikitext-103-raw-v1.zip
train="" valid="" public="" dest="" shards=20 seed=1 workers=2 bpe_dir="" mirror="${ABC_DATA_MIRROR:-}" checksum_file=""
url="https://wikitext.smerity.com/$PUBLIC_ARCHIVE"
flags=(
    "--train train a value" "--valid valid a value" "--public-corpus public a value"
    "--dest dest a value" "--shards shards a value" "--seed seed a value"
    "--workers workers a value" "--bpe-dir bpe_dir a value" "--mirror mirror a value"
    "--url url a value" "--checksum-file checksum_file a value"
)
parse_flags flags "$@"
[ -n "$dest" ] || die "--dest is required (see --help)"
case "$public" in
    "") [ -n "$train" ] || die "--train (or --public-corpus) is required (see --help)"
        [ -n "$valid" ] || die "--valid is required with --train" ;;
    wikitext-103-raw) [ -z "$train$valid" ] || die "--public-corpus replaces --train/--valid; give one or the other" ;;
    *) die "--public-corpus: unknown corpus '$public' (available: wikitext-103-raw)" ;;
esac
posint --shards "$shards"
posint --workers "$workers"
[[ "$seed" =~ ^[0-9]+$ ]] || die "--seed expects a number >= 0, got '$seed'"
[ -z "$mirror" ] || [ -d "$mirror" ] || die "--mirror $mirror is not a directory"
[ -z "$checksum_file" ] || [ -f "$checksum_file" ] || die "--checksum-file $checksum_file does not exist"
train_files=()
[ -z "$train" ] || read -r -a train_files <<< "$train"
for f in "${train_files[@]}" ${valid:+"$valid"}; do
    if [ ! -f "$f" ] || [ ! -r "$f" ]; then die "input text $f does not exist or is not readable"; fi
    [ -s "$f" ] || die "input text $f is empty"
done

py="$(find_python "$repo" fairseq)"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
known=(gpt2_bpe downloads text bpe shards work)  # work/: left by the older version, never touched
for ((k = 0; k < shards; k++)); do known+=("shard$k"); done
claim_dest "$dest" "${known[@]}"
dest="$(cd "$dest" && pwd)"
bpe_dir="${bpe_dir:-$dest/gpt2_bpe}"
lock_dir "$dest"

# --- 1. downloads: the BPE files, the public corpus ------------------------------------------
"$py" -m data_prep.glue.roberta_bpe fetch --dest "$bpe_dir" ${mirror:+--mirror "$mirror"} >/dev/null \
    || die "could not fetch the BPE files into $bpe_dir"
bpe_key="$(files_key "$bpe_dir/encoder.json" "$bpe_dir/vocab.bpe" "$bpe_dir/dict.txt")"
if [ -n "$public" ]; then
    [ "$(basename "$url")" = "$PUBLIC_ARCHIVE" ] || die "--url must name $PUBLIC_ARCHIVE, got '$url'"
    digest="$(fetch_file "$url" "$dest/downloads/$PUBLIC_ARCHIVE" ${checksum_file:+--checksums "$checksum_file"} \
        --checksums "$here/SHA256SUMS")" \
        || die "could not fetch $PUBLIC_ARCHIVE (see the message above)"
    build_text() { "$py" -m data_prep.mlm.wikitext_docs "$dest/downloads/$PUBLIC_ARCHIVE" "$1"; }
    run_stage text "$dest/text" "$(hash_key text-v1 "$digest")" build_text
    train_files=("$dest/text/train.txt") valid="$dest/text/valid.txt"
fi

# --- 2. BPE-encode (training files concatenated), 3. shuffle documents into shards ----------
k_bpe="$(hash_key bpe-v1 "$(files_key "${train_files[@]}" "$valid")" "$bpe_key")"
k_shards="$(hash_key shards-v1 "$k_bpe" "$shards" "$seed")"

build_bpe() {
    local out="$1"
    cat "${train_files[@]}" >"$out/train.raw"
    "$py" -m data_prep.glue.roberta_bpe encode --bpe-dir "$bpe_dir" --workers "$workers" \
        --inputs "$out/train.raw" "$valid" --outputs "$out/train.bpe" "$out/valid.bpe"
    rm -f "$out/train.raw"  # inside our temporary stage directory
}
build_shards() { "$py" -m data_prep.mlm.shard "$dest/bpe/train.bpe" "$1/train.bpe" --shards "$shards" --seed "$seed"; }
run_stage bpe "$dest/bpe" "$k_bpe" build_bpe
run_stage shards "$dest/shards" "$k_shards" build_shards

# --- 4. binarise each shard with RoBERTa's dictionary -----------------------------------------
build_shard() {  # build_shard TMP K
    "$py" -m fairseq_cli.preprocess --only-source --srcdict "$bpe_dir/dict.txt" \
        --trainpref "$dest/shards/train.bpe.shard$2" --validpref "$dest/bpe/valid.bpe" \
        --destdir "$1" --workers "$workers" >"$1/preprocess.out" 2>&1 \
        || { cat "$1/preprocess.out" >&2; die "fairseq-preprocess failed for shard $2"; }
}
paths=()
for ((k = 0; k < shards; k++)); do
    run_stage "shard $k" "$dest/shard$k" "$(hash_key shard-v1 "$k_shards" "$k")" build_shard "$k"
    paths+=("$dest/shard$k")
done
data_path="$(IFS=:; echo "${paths[*]}")"
log "done: pass $data_path to fairseq-train (scripts/roberta/pretrain_mlm.sh --data $data_path)"
echo "$data_path"
