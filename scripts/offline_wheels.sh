#!/usr/bin/env bash
# The packages an offline GPU machine needs to run the plugin and scripts/gpu_checks.sh, as files
# to copy there: fairseq (ve-fairseq) and what it needs beyond a CUDA PyTorch image (hydra-core,
# omegaconf, antlr4's runtime, bitarray), and fla-core for the peer timings. The image is assumed
# to hold torch, triton and what fairseq and fla import from the common stack: numpy, scipy,
# scikit-learn, sacrebleu (with portalocker, tabulate, colorama, lxml), regex, PyYAML, tqdm,
# packaging, cython and einops (python3 -c 'import sklearn, sacrebleu, einops' there tells; any
# missing one is `pip download`ed the same way). Every file is checked by pip against the sha256
# pinned in scripts/lib/offline_wheels.txt; antlr4's runtime, published only as a source archive,
# is built into a pure-Python wheel here. A second run keeps what the
# first fetched (pip checks it again) and fetches the rest.
#
#   bash scripts/offline_wheels.sh --out wheels                # for CPython 3.12 on x86_64 Linux
#   bash scripts/offline_wheels.sh --out wheels --python 3.11
#   bash scripts/offline_wheels.sh --out wheels --dry-run      # print the pip commands only
#   bash scripts/offline_wheels.sh --help
#
# On the GPU machine, from the repository's root (nothing fetched there, nothing resolved):
#   python3 -m pip install --no-index --no-deps --target /tmp/site wheels/*.whl
#   export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
#   bash scripts/gpu_checks.sh --out gpu_results
#
# Options:
#   --out DIR      where the wheels go: new, or one this script made before (its .run mark)
#   --python X.Y   the GPU machine's CPython: 3.11 or 3.12 (default 3.12)
#   --dry-run      print the pip commands and exit
# PYTHON=... names the Python whose pip fetches and builds (default: the project's .venv, else
# python3); building antlr4's wheel needs setuptools >= 70.1 there, or setuptools and wheel.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPT_NAME=offline_wheels
# shellcheck source=scripts/lib/common.sh
. "$repo/scripts/lib/common.sh"

PINS="$repo/scripts/lib/offline_wheels.txt"
SOURCE_ONLY=antlr4-python3-runtime  # no wheel published: fetched as its source archive, built here
out="" python=3.12 dry_run=0
set_dry_run() { dry_run=1; }
check_python() {
    case "$1" in
        3.11 | 3.12) python="$1" ;;
        "") die "--python needs a version (3.11 or 3.12)" ;;
        *) die "--python $1: the pinned files are for CPython 3.11 and 3.12 only" ;;
    esac
}
spec=("--out out" "--python @check_python" "--dry-run !set_dry_run")
parse_flags spec "$@"
[ -n "$out" ] || die "--out DIR is required (see --help)"
PY="${PYTHON:-}"
[ -n "$PY" ] || { [ -x "$repo/.venv/bin/python" ] && PY="$repo/.venv/bin/python"; } || PY=python3

# Wheels where published, the source archive where not; --no-deps: the pins list every package;
# --no-build-isolation: the archive's metadata is read with this Python's setuptools, not with one
# fetched unpinned into an isolated build.
fetch=("$PY" -m pip download --no-deps --no-build-isolation --require-hashes -r "$PINS" -d "$out"
       --python-version "$python" --implementation cp --abi "cp${python/./}" --abi none --abi abi3
       --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
       --platform any)
source_version="$(sed -n "s/^$SOURCE_ONLY==\([^ ]*\) .*/\1/p" "$PINS")"
[ -n "$source_version" ] || die "$PINS pins no version of $SOURCE_ONLY"
archive="$out/$SOURCE_ONLY-$source_version.tar.gz"
build=("$PY" -m pip wheel --no-deps --no-build-isolation --no-index -w "$out" "$archive")
if [ "$dry_run" = 1 ]; then
    printf '%q ' "${fetch[@]}"; printf '\n'
    printf '%q ' "${build[@]}"; printf '\n'
    exit 0
fi
command -v "$PY" >/dev/null || die "no $PY on PATH (set PYTHON)"
claim_dir "$out" offline_wheels "cp$python"
log "fetching the pinned files for CPython $python into $out"
"${fetch[@]}" || die "pip could not fetch or verify the files pinned in $PINS (see above)"
[ -f "$archive" ] || die "pip fetched no $archive"
log "building $SOURCE_ONLY's wheel from its verified source archive"
"${build[@]}" || die "could not build a wheel of $archive: $PY needs setuptools >= 70.1, or setuptools and wheel"
log "done: $(ls "$out"/*.whl | wc -l) wheels in $out; install them on the GPU machine as --help shows"
