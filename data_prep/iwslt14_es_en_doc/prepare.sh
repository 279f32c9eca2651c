#!/usr/bin/env bash
# IWSLT14 Spanish-English TED talks as documents, with the splits and preprocessing of
# Miculicich et al. (2018) that the ABC paper uses (Table 3b): 4-sentence sliding windows.
#
#   bash data_prep/iwslt14_es_en_doc/prepare.sh [options]
#
# Data: the WIT3 IWSLT 2014 archive of the pair (2014-01 release). Splits: train = the talks of
# train.tags, valid = dev2010, test = tst2010 + tst2011 + tst2012. Documents are talks.
# Stages under DEST (each built in a temp directory and moved into place when complete; a rerun
# skips what is up to date):
#   downloads/  the archive. No published checksum could be found for it (see SHA256SUMS next to
#               this script), so its sha256 is recorded on the first download
#               (downloads/<archive>.sha256), with a WARNING that it was not verified, and checked
#               on every later run; delete that .sha256 file (and the archive) to record it anew.
#   raw/        plain sentences + document ids (data_prep/mt/iwslt_docs.py)
#   tok/ tc/ spm/ win/ bin/   Moses tokenisation and truecasing, 30k shared BPE, 4-sentence
#               windows with stride 1 joined by <sep>, fairseq binarisation
#               (data_prep/mt/prepare_doc_corpus.sh, see its --help)
#
# WIT3's original download address (--url's default) is the one used by the published
# preparation scripts; WIT3 has since moved its archives (https://wit3.fbk.eu/2014-01). If the
# default address does not answer, download the archive by hand and put it in DEST/downloads/
# (or in a --mirror directory) under the same file name; it is verified and recorded the same way.
#
# Options:
#   --dest DIR        output directory (default <repo>/data-bin/iwslt14_es_en_doc); it must be
#                     absent, empty or an earlier output of this recipe
#   --downloads DIR   where the archive is kept (default DEST/downloads)
#   --mirror DIR      take the archive from DIR instead of the network; default $ABC_DATA_MIRROR
#   --url URL         archive address (default: WIT3 2014-01 texts/en/es/en-es.tgz); an es-en
#                     archive works too
#   --bpe-size N      BPE vocabulary size (default 30000)
#   --window N        sentences per example (default 4)
#   --workers N       parallel processes (default: number of CPUs)
#   --download-only   stop after the download
#   -h, --help        this help
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=data_prep/lib/common.sh
. "$repo/data_prep/lib/common.sh"

dest="$repo/data-bin/iwslt14_es_en_doc" downloads="" mirror="${ABC_DATA_MIRROR:-}"
url="https://wit3.fbk.eu/archive/2014-01/texts/en/es/en-es.tgz"
bpe_size=30000 window=4 workers="$(nproc 2>/dev/null || echo 1)" download_only=0
flags=(
    "--dest dest a value" "--downloads downloads a value" "--mirror mirror a value"
    "--url url a value" "--bpe-size bpe_size a value" "--window window a value"
    "--workers workers a value" "--download-only download_only=1"
)
parse_flags flags "$@"
posint --bpe-size "$bpe_size"
posint --window "$window"
posint --workers "$workers"
[ -z "$mirror" ] || [ -d "$mirror" ] || die "--mirror $mirror is not a directory"
archive="$(basename "${url%%\?*}")"
case "$archive" in en-es.tgz|es-en.tgz) ;; *) die "--url must end in en-es.tgz or es-en.tgz, got '$archive'" ;; esac

py="$(find_python "$repo")"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
claim_dest "$dest" downloads raw tok tc spm win bin
dest="$(cd "$dest" && pwd)"
downloads="${downloads:-$dest/downloads}"
lock_dir "$dest"

digest="$(fetch_file "$url" "$downloads/$archive" --checksums "$here/SHA256SUMS")" \
    || die "could not fetch $archive (see the message above)"
[ "$download_only" = 0 ] || { log "download complete: $downloads/$archive"; exit 0; }

build_raw() {
    local out="$1" folder
    mkdir -p "$out/.unpacked"
    tar -xzf "$downloads/$archive" -C "$out/.unpacked" || die "cannot unpack $downloads/$archive"
    folder="$(find "$out/.unpacked" -maxdepth 2 -type d \( -name en-es -o -name es-en \) | head -1)"
    [ -n "$folder" ] || die "$archive holds no en-es/ or es-en/ folder"
    "$py" -m data_prep.mt.iwslt_docs --src es --tgt en "$folder" "$out"
    rm -rf "$out/.unpacked"
}
run_stage extract "$dest/raw" "$(hash_key raw-v1 "$archive=$digest")" build_raw

bash "$repo/data_prep/mt/prepare_doc_corpus.sh" --raw "$dest/raw" --dest "$dest" --src es --tgt en \
    --bpe-size "$bpe_size" --window "$window" --workers "$workers"
