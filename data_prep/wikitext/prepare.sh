#!/usr/bin/env bash
# WikiText-103 (Merity et al., 2017), word level, binarised for fairseq's language_modeling task:
# the data of the paper's Table 2.
#
#   bash data_prep/wikitext/prepare.sh [options]
#
# Stages under DEST, each built in a temporary directory and moved into place when complete
# (a rerun skips the stages that are up to date; a changed input rebuilds what depends on it):
#   downloads/  wikitext-103-v1.zip, verified against the published sha256 pinned in
#               data_prep/wikitext/SHA256SUMS
#   raw/        wiki.{train,valid,test}.tokens extracted from the archive
#   bin/        fairseq-preprocess --only-source: dict.txt is the standard word-level vocabulary
#               (every word of the train split, 267,735 types with <unk>), plus the binarised
#               splits train/valid/test; this is the directory to train and evaluate on
#
# Options:
#   --dest DIR        output directory (default <repo>/data-bin/wikitext-103); it must be absent,
#                     empty or an earlier output of this recipe: nothing else is ever overwritten
#   --mirror DIR      take wikitext-103-v1.zip from DIR instead of the network; default
#                     $ABC_DATA_MIRROR
#   --url URL         where to download the archive (default: the copy on Smerity's server; the
#                     original s3.amazonaws.com/research.metamind.io address no longer serves it)
#   --sha256 HEX      expected sha256 of the archive instead of the pinned one (a mirror holding
#                     a different build, e.g. the tests' miniature); 'record' verifies nothing on
#                     the first download and records its hash for later runs (with a warning)
#   --workers N       fairseq-preprocess workers (default: number of CPUs)
#   --download-only   stop after the download
#   -h, --help        this help
#
# Needs about 1.5 GB of disk in DEST. Python: the one on PATH (activate the project venv) or $PYTHON.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=data_prep/lib/common.sh
. "$repo/data_prep/lib/common.sh"

ARCHIVE=wikitext-103-v1.zip
CHECKSUMS="$here/SHA256SUMS"

dest="$repo/data-bin/wikitext-103" mirror="${ABC_DATA_MIRROR:-}"
url="https://wikitext.smerity.com/$ARCHIVE" sha256=""
workers="$(nproc 2>/dev/null || echo 1)" download_only=0
flags=(
    "--dest dest a value" "--mirror mirror a value" "--url url a value" "--sha256 sha256 a value"
    "--workers workers a value" "--download-only download_only=1"
)
parse_flags flags "$@"
posint --workers "$workers"
[[ -z "$sha256" || "$sha256" = record || "$sha256" =~ ^[0-9a-fA-F]{64}$ ]] || die "--sha256 expects 64 hex digits or 'record', got '$sha256'"
[ "$(basename "$url")" = "$ARCHIVE" ] || die "--url must name $ARCHIVE (the mirror and the checks use that name), got '$url'"
[ -z "$mirror" ] || [ -d "$mirror" ] || die "--mirror $mirror is not a directory"

py="${PYTHON:-python3}"
command -v "$py" >/dev/null 2>&1 || die "no '$py' on PATH (activate the project venv or set PYTHON)"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
claim_dest "$dest" downloads raw bin
dest="$(cd "$dest" && pwd)"
lock_dir "$dest"

# --- download (the helper itself is idempotent, resumable and verifies) ----------------------
case "$sha256" in
    "") how=(--checksums "$CHECKSUMS") ;;
    record) how=(--record-sha256) ;;
    *) how=(--sha256 "$sha256") ;;
esac
digest="$(fetch_file "$url" "$dest/downloads/$ARCHIVE" "${how[@]}")" || die "could not fetch $ARCHIVE (see the message above)"
[ "$download_only" = 0 ] || { log "download complete: $dest/downloads/$ARCHIVE"; exit 0; }

# --- stages -----------------------------------------------------------------------------------
# A stage's key hashes what it was built from (data_prep/lib/common.sh: run_stage).

build_raw() { "$py" -m data_prep.wikitext.extract "$dest/downloads/$ARCHIVE" "$1"; }

build_bin() {
    # Defaults of fairseq-preprocess keep every word of the train split (no --thresholdsrc, no
    # --nwordssrc): the vocabulary of Baevski & Auli and of fairseq's WikiText-103 example.
    fairseq-preprocess --only-source \
        --trainpref "$dest/raw/wiki.train.tokens" \
        --validpref "$dest/raw/wiki.valid.tokens" \
        --testpref "$dest/raw/wiki.test.tokens" \
        --destdir "$1" --workers "$workers"
}

command -v fairseq-preprocess >/dev/null 2>&1 || die "fairseq-preprocess not on PATH (activate the project venv)"
k_raw="$(hash_key raw-v1 "$digest")"
k_bin="$(hash_key bin-v1 "$k_raw")"
run_stage raw "$dest/raw" "$k_raw" build_raw
run_stage bin "$dest/bin" "$k_bin" build_bin
log "ready: $dest/bin (dictionary of $(wc -l <"$dest/bin/dict.txt") words + 4 specials)"
