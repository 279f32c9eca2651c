#!/usr/bin/env bash
# IWSLT14 Spanish-English TED talks as documents, with the splits and preprocessing of
# Miculicich et al. (2018) that the ABC paper uses (Table 3b): 4-sentence sliding windows.
#
#   bash data_prep/prepare_iwslt14_es_en_doc.sh [options]
#
# Data: the WIT3 IWSLT 2014 archive of the pair (2014-01 release). Splits: train = the talks of
# train.tags, valid = dev2010, test = tst2010 + tst2011 + tst2012. Documents are talks.
# Stages under DEST (each built in a temp directory and moved into place when complete; a rerun
# skips what is up to date):
#   downloads/  the archive. No checksum is published for it, so its sha256 is recorded on the
#               first download (downloads/<archive>.sha256) and verified on every later run.
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
#   --dest DIR        output directory (default <repo>/data-bin/iwslt14_es_en_doc)
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
repo="$(cd "$here/.." && pwd)"
MT_RECIPE=prepare_iwslt14_es_en_doc
# shellcheck source=data_prep/mt/stages.sh
. "$here/mt/stages.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

dest="$repo/data-bin/iwslt14_es_en_doc" downloads="" mirror="${ABC_DATA_MIRROR:-}"
url="https://wit3.fbk.eu/archive/2014-01/texts/en/es/en-es.tgz"
bpe_size=30000 window=4 workers="$(nproc 2>/dev/null || echo 1)" download_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --dest) dest="${2:?--dest needs a directory}"; shift 2 ;;
        --downloads) downloads="${2:?--downloads needs a directory}"; shift 2 ;;
        --mirror) mirror="${2:?--mirror needs a directory}"; shift 2 ;;
        --url) url="${2:?--url needs an address}"; shift 2 ;;
        --bpe-size) bpe_size="${2:?--bpe-size needs a number}"; shift 2 ;;
        --window) window="${2:?--window needs a number}"; shift 2 ;;
        --workers) workers="${2:?--workers needs a number}"; shift 2 ;;
        --download-only) download_only=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) mt_die "unknown argument '$1' (see --help)" ;;
    esac
done
check_positive_int --bpe-size "$bpe_size"
check_positive_int --window "$window"
check_positive_int --workers "$workers"
[ -z "$mirror" ] || [ -d "$mirror" ] || mt_die "--mirror $mirror is not a directory"
archive="$(basename "${url%%\?*}")"
case "$archive" in en-es.tgz|es-en.tgz) ;; *) mt_die "--url must end in en-es.tgz or es-en.tgz, got '$archive'" ;; esac

py="$(find_python "$repo")"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
downloads="${downloads:-$dest/downloads}"
lock_dir "$dest"

mirror_args=()
[ -z "$mirror" ] || mirror_args=(--mirror "$mirror")
digest="$("$py" -m data_prep.lib.fetch "$url" "$downloads/$archive" --record-sha256 "${mirror_args[@]}")" \
    || mt_die "could not fetch $archive (see the message above)"
[ "$download_only" = 0 ] || { mt_log "download complete: $downloads/$archive"; exit 0; }

build_raw() {
    local out="$1" folder
    mkdir -p "$out/.unpacked"
    tar -xzf "$downloads/$archive" -C "$out/.unpacked" || mt_die "cannot unpack $downloads/$archive"
    folder="$(find "$out/.unpacked" -maxdepth 2 -type d \( -name en-es -o -name es-en \) | head -1)"
    [ -n "$folder" ] || mt_die "$archive holds no en-es/ or es-en/ folder"
    "$py" -m data_prep.mt.iwslt_docs --src es --tgt en "$folder" "$out"
    rm -rf "$out/.unpacked"
}
run_stage extract "$dest/raw" "$(hash_key raw-v1 "$archive=$digest")" build_raw

bash "$here/mt/prepare_doc_corpus.sh" --raw "$dest/raw" --dest "$dest" --src es --tgt en \
    --bpe-size "$bpe_size" --window "$window" --workers "$workers"
