#!/usr/bin/env bash
# Binarise the embedded default corpus (data_prep/default_corpus) for fairseq language modelling.
#
#   bash data_prep/default_corpus/prepare.sh [DEST]   # DEST defaults to <repo>/data-bin/default_corpus
#
# Resumable and safe to re-run: DEST carries a stamp with the hash of the inputs and of the
# fairseq-preprocess arguments; if DEST is complete and the stamp matches, nothing is done.
# Otherwise the data is built in a temporary directory next to DEST and only moved into place
# once fairseq-preprocess has succeeded, so an interrupted run never leaves a half-written DEST.
#
# DEST must be absent, empty, or an earlier build of this script (recognised by its stamp and
# holding nothing else): any other directory, e.g. another corpus's binarised data, is refused
# with an error naming it, and nothing in it is touched.
#
# Environment variables:
#   DEFAULT_CORPUS_DIR  read train.txt / valid.txt / test.txt from here instead of
#                       data_prep/default_corpus
#   PREPROCESS_WORKERS  fairseq-preprocess --workers (default 2)
#
# fairseq-preprocess is taken from PATH, or from the project venv (.venv, see
# scripts/setup_env.sh) when it is not on PATH.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=data_prep/lib/common.sh
. "$repo/data_prep/lib/common.sh"

flags=("+ words") words=()
parse_flags flags "$@"
[ "${#words[@]}" -le 1 ] || die "expected at most one argument (DEST), got ${#words[@]}: ${words[*]}"
src="${DEFAULT_CORPUS_DIR:-$here}"
dest="${words[0]:-$repo/data-bin/default_corpus}"
workers="${PREPROCESS_WORKERS:-2}"
posint PREPROCESS_WORKERS "$workers"

# --- inputs -----------------------------------------------------------------------------------
for split in train valid test; do
    f="$src/$split.txt"
    [ -e "$f" ] || die "missing input file $f (regenerate it with data_prep/default_corpus/make.sh)"
    if [ ! -f "$f" ] || [ ! -r "$f" ]; then die "input $f is not a readable file"; fi
    [ -s "$f" ] || die "input file $f is empty"
done
preprocess="$(find_tool fairseq-preprocess "$repo")"

# Everything that determines the output: the three input files and the options (the number of
# workers does not change the result, so it is left out).
args_desc="fairseq-preprocess --only-source --trainpref train --validpref valid --testpref test"
stamp_value="$(
    {
        printf '%s\n' "$args_desc"
        cd "$src" && sha256sum train.txt valid.txt test.txt
    } | sha256sum | cut -d' ' -f1
)"
stamp_name=".prepared_sha256"
expected_files=(dict.txt train.bin train.idx valid.bin valid.idx test.bin test.idx)
# Everything a build of ours holds (fairseq-preprocess also writes its log).
own_files=("${expected_files[@]}" preprocess.log "$stamp_name")

is_complete() {  # dir -> 0 if it holds a finished build of exactly these inputs
    local d="$1" f
    [ -f "$d/$stamp_name" ] && [ "$(cat "$d/$stamp_name")" = "$stamp_value" ] || return 1
    for f in "${expected_files[@]}"; do
        [ -s "$d/$f" ] || return 1
    done
}

if is_complete "$dest"; then
    log "$dest is complete and up to date; nothing to do"
    exit 0
fi

# Never replace a directory we did not create: DEST must be absent, empty, or an earlier build of
# ours (its stamp present, and nothing in it but the files a build writes).
if [ -e "$dest" ]; then
    [ -d "$dest" ] || die "$dest exists and is not a directory; refusing to replace it"
    if [ -n "$(ls -A "$dest")" ]; then
        [ -f "$dest/$stamp_name" ] || die "$dest exists, is not empty and is not a build of this script" \
            "(no $stamp_name stamp: e.g. another corpus's data); refusing to overwrite it, choose another DEST"
        foreign="$(cd "$dest" && ls -A | grep -vxF "$(printf '%s\n' "${own_files[@]}")" || true)"
        [ -z "$foreign" ] || die "$dest is an earlier build but also holds files this script did not write" \
            "($(echo $foreign)); refusing to replace it: move them away first"
    fi
    log "$dest is incomplete or out of date; rebuilding it"
fi

parent="$(dirname "$dest")"
mkdir -p "$parent" || die "cannot create $parent"
# The temp dir sits next to DEST so that the final `mv` is a rename on one filesystem.
tmp="$(mktemp -d "$parent/.$(basename "$dest").tmp.XXXXXX")"
old=""
cleanup() { rm -rf "$tmp"; [ -z "$old" ] || rm -rf "$old"; }  # both were created by this run
trap cleanup EXIT

log "binarising $src -> $dest (via $tmp)"
"$preprocess" \
    --only-source \
    --trainpref "$src/train.txt" \
    --validpref "$src/valid.txt" \
    --testpref "$src/test.txt" \
    --destdir "$tmp" \
    --workers "$workers" \
    || die "fairseq-preprocess failed (see its output above)"

for f in "${expected_files[@]}"; do
    [ -s "$tmp/$f" ] || die "fairseq-preprocess finished but did not write $f"
done
printf '%s\n' "$stamp_value" >"$tmp/$stamp_name"
chmod u=rwx,go=rx "$tmp"  # mktemp -d makes it private; the result should not be

# Swap the new build in. A directory cannot be renamed over a non-empty one, so an old DEST (a
# build of ours, checked above) is first renamed aside (and deleted on exit); between the two
# renames DEST briefly does not exist, but it is never half-written.
if [ -e "$dest" ]; then
    old="$(mktemp -d "$parent/.$(basename "$dest").old.XXXXXX")"
    mv "$dest" "$old/"
fi
mv "$tmp" "$dest"
log "done: $dest ($(wc -l <"$dest/dict.txt") word types in dict.txt)"
