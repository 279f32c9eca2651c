#!/usr/bin/env bash
# Turn a raw document-level parallel corpus into fairseq data with sliding-window examples.
#
#   bash data_prep/mt/prepare_doc_corpus.sh --raw DIR --dest DIR [options]
#
# RAW holds {train,valid,test}.{SRC,TGT} (one plain, untokenised sentence per line, aligned) and
# {train,valid,test}.doc (the document id of each line; a document's lines contiguous, in order),
# as written by data_prep/mt/iwslt_docs.py or shipped in data_prep/bible_es_en/.
#
# Pipeline (the preprocessing of Miculicich et al. 2018 that the ABC paper follows for IWSLT14
# ES-EN), one resumable stage each under DEST:
#   tok/  Moses punctuation normalisation + tokenisation (-a), both languages   [sacremoses]
#   tc/   truecasing, one model per language trained on the training split       [sacremoses]
#   spm/  shared BPE of --bpe-size pieces trained on both training sides         [sentencepiece]
#   win/  sliding windows of --window sentences, stride 1, joined by --sep
#   bin/  fairseq-preprocess --joined-dictionary of the windows; bin/eval/ holds what scoring
#         needs (sentence-level BPE sources, document ids, raw references, the BPE model)
# Each stage is built in a temporary directory and moved into place when complete; a rerun
# skips the stages that are up to date (see run_stage in data_prep/lib/common.sh).
#
# Options:
#   --raw DIR          raw documents (required)
#   --dest DIR         output directory (required); it must be absent, empty or an earlier
#                      output of this script (or of the IWSLT recipe that runs it)
#   --src LANG         source language suffix (default es)
#   --tgt LANG         target language suffix (default en)
#   --bpe-size N       BPE vocabulary size (default 30000, the paper's "30k")
#   --window N         sentences per example (default 4; 1 = sentence-level)
#   --sep TOKEN        separator between the sentences of a window (default <sep>)
#   --workers N        parallel processes (default: number of CPUs)
#   -h, --help         this help
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=data_prep/lib/common.sh
. "$repo/data_prep/lib/common.sh"
# shellcheck source=data_prep/lib/mt.sh
. "$repo/data_prep/lib/mt.sh"

raw="" dest="" src=es tgt=en bpe_size=30000 window=4 sep="<sep>" workers="$(nproc 2>/dev/null || echo 1)"
flags=(
    "--raw raw a value" "--dest dest a value" "--src src a value" "--tgt tgt a value"
    "--bpe-size bpe_size a value" "--window window a value" "--sep sep a value"
    "--workers workers a value"
)
parse_flags flags "$@"
[ -n "$raw" ] || die "--raw is required (see --help)"
[ -n "$dest" ] || die "--dest is required (see --help)"
[ -d "$raw" ] || die "--raw $raw is not a directory"
posint --bpe-size "$bpe_size"
posint --window "$window"
posint --workers "$workers"
[[ "$sep" =~ ^[^[:space:]]+$ ]] || die "--sep must be a single token without spaces, got '$sep'"
[ "$src" != "$tgt" ] || die "--src and --tgt are both '$src'"

py="$(find_python "$repo")"
require_python_modules "$py" sacremoses sentencepiece
preprocess="$(find_tool fairseq-preprocess "$repo")"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
claim_dest "$dest" tok tc spm win bin
dest="$(cd "$dest" && pwd)"
raw="$(cd "$raw" && pwd)"
lock_dir "$dest"

splits=(train valid test)
raw_files=()
for split in "${splits[@]}"; do
    for ext in "$src" "$tgt" doc; do raw_files+=("$raw/$split.$ext"); done
    n_src=$(wc -l <"$raw/$split.$src")
    for ext in "$tgt" doc; do
        n=$(wc -l <"$raw/$split.$ext")
        [ "$n" = "$n_src" ] || die "$raw/$split.$ext has $n lines but $raw/$split.$src has $n_src"
    done
    [ "$n_src" -gt 0 ] || die "$raw/$split.$src is empty"
done

# --- stage keys: parameters + the key of the stage read -------------------------------------
# A version tag per stage invalidates old outputs when the stage's code changes meaning.
k_raw="$(files_key "${raw_files[@]}")"
k_tok="$(hash_key tok-v1 "$k_raw" "$src" "$tgt")"
k_tc="$(hash_key tc-v1 "$k_tok")"
k_spm="$(hash_key spm-v1 "$k_tc" "$bpe_size")"
k_win="$(hash_key win-v1 "$k_spm" "$window" "$sep")"
k_bin="$(hash_key bin-v1 "$k_win" "$k_raw")"

# each_split IN OUT FN: FN LANG IN/SPLIT.LANG OUT/SPLIT.LANG for every split and both languages;
# the document ids (IN/SPLIT.doc) are copied along, as every stage keeps them next to its text.
each_split() {
    local in="$1" out="$2" fn="$3" split lang
    for split in "${splits[@]}"; do
        for lang in "$src" "$tgt"; do
            "$fn" "$lang" "$in/$split.$lang" "$out/$split.$lang"
        done
        cp "$in/$split.doc" "$out/$split.doc"
    done
}

# The steps each_split runs; truecasing and encoding read the model their stage trained next to OUT.
tokenize() { "$py" -m data_prep.mt.moses_prep tokenize --lang "$1" --workers "$workers" "$2" "$3"; }
truecase() {
    "$py" -m data_prep.mt.moses_prep truecase --model "$(dirname "$3")/truecase-model.$1" --workers "$workers" \
        "$2" "$3"
}
encode() { "$py" -m data_prep.mt.spm_bpe encode --model "$(dirname "$3")/spm.model" --workers "$workers" "$2" "$3"; }
to_windows() {  # the document ids of IN/SPLIT.LANG are IN/SPLIT.doc
    "$py" -m data_prep.mt.windows --doc "${2%.*}.doc" --size "$window" --sep "$sep" "$2" "$3"
}

build_tok() { each_split "$raw" "$1" tokenize; }

build_tc() {
    local lang
    for lang in "$src" "$tgt"; do
        "$py" -m data_prep.mt.moses_prep train-truecaser --workers "$workers" \
            "$dest/tok/train.$lang" "$1/truecase-model.$lang"
    done
    each_split "$dest/tok" "$1" truecase
}

build_spm() {
    "$py" -m data_prep.mt.spm_bpe train --vocab-size "$bpe_size" --threads "$workers" \
        --model-prefix "$1/spm" "$dest/tc/train.$src" "$dest/tc/train.$tgt"
    each_split "$dest/tc" "$1" encode
}

build_win() { each_split "$dest/spm" "$1" to_windows; }

build_bin() {
    local out="$1" split
    mt_binarise "$dest/win" "$out"
    # What evaluation needs besides the binarised data: sentence-level BPE sources for
    # document-level decoding (scripts/mt/translate_docs.py), document ids, the untokenised
    # references (SacreBLEU scores against them) and the models to undo the preprocessing.
    for split in valid test; do
        cp "$dest/spm/$split.$src" "$out/eval/$split.bpe.$src"
        cp "$dest/spm/$split.$tgt" "$out/eval/$split.bpe.$tgt"
        cp "$dest/spm/$split.doc" "$out/eval/$split.doc"
        cp "$raw/$split.$src" "$out/eval/$split.raw.$src"
        cp "$raw/$split.$tgt" "$out/eval/$split.raw.$tgt"
    done
    cp "$dest/spm/spm.model" "$dest/spm/spm.vocab" "$out/eval/"
    cp "$dest/tc/truecase-model.$src" "$dest/tc/truecase-model.$tgt" "$out/eval/"
    mt_eval_meta "$out" moses-truecase-spm "$window" "\"$sep\""
}

run_stage tok "$dest/tok" "$k_tok" build_tok
run_stage tc "$dest/tc" "$k_tc" build_tc
run_stage spm "$dest/spm" "$k_spm" build_spm
run_stage windows "$dest/win" "$k_win" build_win
run_stage binarise "$dest/bin" "$k_bin" build_bin
log "done: fairseq data in $dest/bin ($(wc -l <"$dest/bin/dict.$src.txt") dictionary entries)"
