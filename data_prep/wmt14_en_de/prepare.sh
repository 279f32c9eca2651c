#!/usr/bin/env bash
# WMT14 English-German with the splits of Vaswani et al. (2017), as used by the ABC paper (Table 3a,
# Table 5), binarised for fairseq.
#
#   bash data_prep/wmt14_en_de/prepare.sh [options]
#
# Data (the original statmt.org archives the community uses):
#   train  Europarl v7 + Common Crawl + News Commentary v9 (4.5M sentence pairs)
#   valid  newstest2013 (3000)      test  newstest2014, full version (3003)
# Processing, one resumable stage each under DEST (built in a temp directory, moved into place
# when complete; a rerun skips stages that are up to date; changing an option rebuilds the
# stages it affects):
#   downloads/  the five archives, verified against the published checksums pinned in
#               data_prep/wmt14_en_de/SHA256SUMS (sources cited there)
#   raw/        plain text splits (data_prep/mt/wmt14_extract.py)
#   spm/        shared sentencepiece BPE of --bpe-size pieces (default 32768) trained on both
#               training sides (sampled to --spm-sentences), applied to every split
#   clean/      training pairs with 1..--max-len tokens per side and a length ratio of at most
#               --ratio (defaults 250 and 1.5, Moses clean-corpus-n); valid/test untouched
#   bin/        fairseq-preprocess --joined-dictionary; bin/eval/ holds the raw references and
#               the BPE model for scoring (scripts/mt/evaluate.sh)
#
# Options:
#   --dest DIR           output directory (default <repo>/data-bin/wmt14_en_de); it must be
#                        absent, empty or an earlier output of this recipe
#   --downloads DIR      where the archives are kept (default DEST/downloads)
#   --mirror DIR         take the archives from DIR (same file names) instead of the network;
#                        default $ABC_DATA_MIRROR
#   --checksum-file F    lines "HASH  NAME" replacing the pinned checksums of the named
#                        archives (a mirror that repackaged them; tests)
#   --src LANG/--tgt LANG  translation direction (default en -> de)
#   --bpe-size N         BPE vocabulary size (default 32768)
#   --spm-sentences N    sentences sampled to train the BPE model (default 4000000; 0 = all)
#   --max-len N          cleaning: maximum BPE tokens per side (default 250)
#   --ratio R            cleaning: maximum length ratio (default 1.5)
#   --workers N          parallel processes (default: number of CPUs)
#   --download-only      stop after the downloads
#   -h, --help           this help
#
# Needs about 5 GB of disk in DEST and, for the BPE training, ~8 GB of memory.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=data_prep/lib/common.sh
. "$repo/data_prep/lib/common.sh"
# shellcheck source=data_prep/lib/mt.sh
. "$repo/data_prep/lib/mt.sh"

# The archives (checksums and their sources: SHA256SUMS next to this script).
ARCHIVES=(
    "training-parallel-europarl-v7.tgz|https://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz"
    "training-parallel-commoncrawl.tgz|https://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz"
    "training-parallel-nc-v9.tgz|https://www.statmt.org/wmt14/training-parallel-nc-v9.tgz"
    "dev.tgz|https://www.statmt.org/wmt14/dev.tgz"
    "test-full.tgz|https://www.statmt.org/wmt14/test-full.tgz"
)

dest="$repo/data-bin/wmt14_en_de" downloads="" mirror="${ABC_DATA_MIRROR:-}" checksum_file=""
src=en tgt=de bpe_size=32768 spm_sentences=4000000 max_len=250 ratio=1.5
workers="$(nproc 2>/dev/null || echo 1)" download_only=0
flags=(
    "--dest dest a value" "--downloads downloads a value" "--mirror mirror a value"
    "--checksum-file checksum_file a value" "--src src a value" "--tgt tgt a value"
    "--bpe-size bpe_size a value" "--spm-sentences spm_sentences a value"
    "--max-len max_len a value" "--ratio ratio a value" "--workers workers a value"
    "--download-only download_only=1"
)
parse_flags flags "$@"
posint --bpe-size "$bpe_size"
posint --max-len "$max_len"
posint --workers "$workers"
[[ "$spm_sentences" =~ ^[0-9]+$ ]] || die "--spm-sentences expects a number >= 0, got '$spm_sentences'"
[[ "$ratio" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--ratio expects a number, got '$ratio'"
case "$src-$tgt" in en-de|de-en) ;; *) die "--src/--tgt must be en and de, got '$src' and '$tgt'" ;; esac
[ -z "$mirror" ] || [ -d "$mirror" ] || die "--mirror $mirror is not a directory"
[ -z "$checksum_file" ] || [ -f "$checksum_file" ] || die "--checksum-file $checksum_file does not exist"

py="$(find_python "$repo")"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
claim_dest "$dest" downloads raw spm clean bin
dest="$(cd "$dest" && pwd)"
downloads="${downloads:-$dest/downloads}"
lock_dir "$dest"

# --- downloads --------------------------------------------------------------------------------
# Not a stage directory: the fetch helper is idempotent and resumable per file on its own.
mkdir -p "$downloads"
digests=()
checksums=(--checksums "$here/SHA256SUMS")
[ -z "$checksum_file" ] || checksums=(--checksums "$checksum_file" "${checksums[@]}")  # the user's first
for entry in "${ARCHIVES[@]}"; do
    IFS='|' read -r name url <<<"$entry"
    digest="$(fetch_file "$url" "$downloads/$name" "${checksums[@]}")" || die "could not fetch $name (see the message above)"
    digests+=("$name=$digest")
done
[ "$download_only" = 0 ] || { log "downloads complete in $downloads"; exit 0; }

preprocess="$(find_tool fairseq-preprocess "$repo")"

# --- stage keys -------------------------------------------------------------------------------
k_raw="$(hash_key raw-v1 "${digests[@]}" "$src" "$tgt")"
k_spm="$(hash_key spm-v1 "$k_raw" "$bpe_size" "$spm_sentences")"
k_clean="$(hash_key clean-v1 "$k_spm" "$max_len" "$ratio")"
k_bin="$(hash_key bin-v1 "$k_clean")"

build_raw() {
    "$py" -m data_prep.mt.wmt14_extract --src "$src" --tgt "$tgt" "$downloads" "$1"
}

build_spm() {
    local out="$1" split lang
    "$py" -m data_prep.mt.spm_bpe train --vocab-size "$bpe_size" --threads "$workers" \
        --input-sentence-size "$spm_sentences" --model-prefix "$out/spm" \
        "$dest/raw/train.$src" "$dest/raw/train.$tgt"
    for split in train valid test; do
        for lang in "$src" "$tgt"; do
            "$py" -m data_prep.mt.spm_bpe encode --model "$out/spm.model" --workers "$workers" \
                "$dest/raw/$split.$lang" "$out/$split.$lang"
        done
    done
}

build_clean() {
    local out="$1" lang
    "$py" -m data_prep.mt.clean_parallel --langs "$src" "$tgt" --max-len "$max_len" --ratio "$ratio" \
        "$dest/spm/train" "$out/train"
    for lang in "$src" "$tgt"; do
        cp "$dest/spm/valid.$lang" "$out/valid.$lang"
        cp "$dest/spm/test.$lang" "$out/test.$lang"
    done
}

build_bin() {
    local out="$1" split lang
    mt_binarise "$dest/clean" "$out"
    for split in valid test; do
        for lang in "$src" "$tgt"; do
            cp "$dest/spm/$split.$lang" "$out/eval/$split.bpe.$lang"
            cp "$dest/raw/$split.$lang" "$out/eval/$split.raw.$lang"
        done
    done
    cp "$dest/spm/spm.model" "$dest/spm/spm.vocab" "$out/eval/"
    mt_eval_meta "$out" spm 1 null
}

run_stage extract "$dest/raw" "$k_raw" build_raw
run_stage bpe "$dest/spm" "$k_spm" build_spm
run_stage clean "$dest/clean" "$k_clean" build_clean
run_stage binarise "$dest/bin" "$k_bin" build_bin
log "done: fairseq data in $dest/bin ($(wc -l <"$dest/bin/dict.$src.txt") dictionary entries)"
