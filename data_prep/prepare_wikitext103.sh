#!/usr/bin/env bash
# WikiText-103 (Merity et al., 2017), word level, binarised for fairseq's language_modeling task:
# the data of the paper's Table 2.
#
#   bash data_prep/prepare_wikitext103.sh [options]
#
# Stages under DEST, each built in a temporary directory and moved into place when complete
# (a rerun skips the stages that are up to date; a changed input rebuilds what depends on it):
#   downloads/  wikitext-103-v1.zip, verified against its sha256 (see CHECKSUM below)
#   raw/        wiki.{train,valid,test}.tokens extracted from the archive
#   bin/        fairseq-preprocess --only-source: dict.txt is the standard word-level vocabulary
#               (every word of the train split, 267,735 types with <unk>), plus the binarised
#               splits train/valid/test; this is the directory to train and evaluate on
#
# Options:
#   --dest DIR        output directory (default <repo>/data-bin/wikitext-103)
#   --mirror DIR      take wikitext-103-v1.zip from DIR instead of the network; default
#                     $ABC_DATA_MIRROR
#   --url URL         where to download the archive (default: the copy on Smerity's server; the
#                     original s3.amazonaws.com/research.metamind.io address no longer serves it)
#   --sha256 HEX      expected sha256 of the archive instead of the recorded one (a mirror holding
#                     a different build, e.g. the tests' miniature); 'record' verifies nothing on
#                     the first download and records its hash for later runs
#   --workers N       fairseq-preprocess workers (default: number of CPUs)
#   --download-only   stop after the download
#   -h, --help        this help
#
# Needs about 1.5 GB of disk in DEST. Python: the one on PATH (activate the project venv) or $PYTHON.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
log() { printf 'prepare_wikitext103: %s\n' "$*" >&2; }
die() { printf 'prepare_wikitext103: ERROR: %s\n' "$*" >&2; exit 1; }

# CHECKSUM. The sha256 below is the value that several independent, published dataset loaders
# record for wikitext-103-v1.zip at its original address (a Julia DataDeps registration and
# Python download tables among them), so it is recorded here rather than learnt on first
# download; the default URL serves the same archive. The fetch helper refuses any other file
# (kept as .corrupt for inspection). For a mirror holding another build pass --sha256.
ARCHIVE=wikitext-103-v1.zip
ARCHIVE_SHA256=242ba0f20b329cfdf1ccc61e9e9e5b59becf189db7f7a81cd2a0e2fc31539590

dest="$repo/data-bin/wikitext-103" mirror="${ABC_DATA_MIRROR:-}"
url="https://wikitext.smerity.com/$ARCHIVE" sha256="$ARCHIVE_SHA256"
workers="$(nproc 2>/dev/null || echo 1)" download_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --dest) dest="${2:?--dest needs a directory}"; shift 2 ;;
        --mirror) mirror="${2:?--mirror needs a directory}"; shift 2 ;;
        --url) url="${2:?--url needs a URL}"; shift 2 ;;
        --sha256) sha256="${2:?--sha256 needs 64 hex digits or 'record'}"; shift 2 ;;
        --workers) workers="${2:?--workers needs a number}"; shift 2 ;;
        --download-only) download_only=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[[ "$workers" =~ ^[1-9][0-9]*$ ]] || die "--workers expects a positive integer, got '$workers'"
[[ "$sha256" = record || "$sha256" =~ ^[0-9a-fA-F]{64}$ ]] || die "--sha256 expects 64 hex digits or 'record', got '$sha256'"
[ "$(basename "$url")" = "$ARCHIVE" ] || die "--url must name $ARCHIVE (the mirror and the checks use that name), got '$url'"
[ -z "$mirror" ] || [ -d "$mirror" ] || die "--mirror $mirror is not a directory"

py="${PYTHON:-python3}"
command -v "$py" >/dev/null 2>&1 || die "no '$py' on PATH (activate the project venv or set PYTHON)"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"

# One preparation at a time per DEST: two would remove each other's temporary directories.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$dest/.lock"
    flock -n 9 || die "another preparation is running on $dest (lock $dest/.lock is held)"
fi

# --- download (the helper itself is idempotent, resumable and verifies) ----------------------
args=("$url" "$dest/downloads/$ARCHIVE")
if [ "$sha256" = record ]; then args+=(--record-sha256); else args+=(--sha256 "$sha256"); fi
[ -z "$mirror" ] || args+=(--mirror "$mirror")
digest="$("$py" -m data_prep.lib.fetch "${args[@]}")" || die "could not fetch $ARCHIVE (see the message above)"
[ "$download_only" = 0 ] || { log "download complete: $dest/downloads/$ARCHIVE"; exit 0; }

# --- stages -----------------------------------------------------------------------------------
# A stage's key hashes what it was built from; the key is stored in the finished directory, so
# a rerun compares keys instead of trusting that a directory exists.
STAMP=.stage_key
key_of() { printf '%s\n' "$@" | sha256sum | cut -d' ' -f1; }

run_stage() {  # run_stage NAME KEY FUNCTION: FUNCTION TMPDIR builds DEST/NAME
    local name="$1" key="$2" fn="$3" dir="$dest/$1" tmp old
    if [ "$(cat "$dir/$STAMP" 2>/dev/null || true)" = "$key" ]; then
        log "stage $name: up to date ($dir)"
        return 0
    fi
    rm -rf "$dest/.$name.tmp."* "$dest/.$name.old."*  # leftovers of an interrupted run
    tmp="$(mktemp -d "$dest/.$name.tmp.XXXXXX")"
    log "stage $name: building $dir"
    "$fn" "$tmp" || { rm -rf "$tmp"; die "stage $name failed (see the messages above)"; }
    printf '%s\n' "$key" >"$tmp/$STAMP"
    chmod 755 "$tmp"  # mktemp -d makes it private
    if [ -e "$dir" ]; then  # out of date: swap it out (mv cannot replace a non-empty directory)
        old="$(mktemp -d "$dest/.$name.old.XXXXXX")"
        mv "$dir" "$old/"
        mv "$tmp" "$dir"
        rm -rf "$old"
    else
        mv "$tmp" "$dir"
    fi
    log "stage $name: done"
}

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
k_raw="$(key_of raw-v1 "$digest")"
k_bin="$(key_of bin-v1 "$k_raw")"
run_stage raw "$k_raw" build_raw
run_stage bin "$k_bin" build_bin
log "ready: $dest/bin (dictionary of $(wc -l <"$dest/bin/dict.txt") words + 4 specials)"
