# shellcheck shell=bash
# Helpers of the data_prep recipes (sourced, never executed). The pieces every shell entry point
# needs come from scripts/lib/common.sh, sourced below: log/warn/die, usage (the script's header
# comment, its --help text), parse_flags (the one option parser of every shell entry point),
# posint FLAG VALUE, find_tool NAME REPO, lock_dir DIR.
# This file adds only what is data_prep's own; each function is documented where it is defined.
#
#   PROG                      name in messages (default: <folder>/<script>, e.g. wikitext/prepare)
#   claim_dest DIR KNOWN...   make DIR this recipe's output directory, or refuse naming what is in it
#   refuse_existing DIR FILE... / copy_new SRC DST FILE...   never overwrite a file
#   publish_corpus SRC CORPUS OUT CHECK FILE...  the corpus makers' compare-or-write step
#   run_stage NAME DIR KEY FN build DIR in a temp directory, move it into place when complete
#   fetch_file URL DEST OPTS  download/copy with resume and checksum verification (lib/fetch.py)
#   hash_key / files_key / stage_key, find_python / require_python_modules
#
# Safety rules these helpers enforce (docs/reliability.md states them):
#   - nothing a recipe did not create is deleted or overwritten: an output directory must be
#     absent, empty, or carry this recipe's owner mark (.run, as every script's); a stage directory is
#     replaced only when it carries a stage stamp (.stage_key);
#   - every stage is built aside and moved into place when complete, so a rerun resumes.

PROG="${PROG:-$(basename "$(dirname "$0")")/$(basename "$0" .sh)}"
STAGE_STAMP=".stage_key"
SCRIPT_NAME="$PROG"
# shellcheck source=scripts/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/common.sh"

# hash_key WORD... -> a sha256 of the words (one per line)
hash_key() { printf '%s\n' "$@" | sha256sum | cut -d' ' -f1; }

# files_key FILE... -> a sha256 over the names and contents of the files
files_key() {
    local f
    for f in "$@"; do
        [ -f "$f" ] || die "missing input file $f"
        printf '%s %s\n' "$(basename "$f")" "$(sha256sum "$f" | cut -d' ' -f1)"
    done | sha256sum | cut -d' ' -f1
}

# stage_key DIR -> the key of a completed stage (empty if DIR is not a completed stage)
stage_key() { cat "$1/$STAGE_STAMP" 2>/dev/null || true; }

# claim_dest DIR KNOWN...: make DIR (created if absent) this recipe's output directory, by the
#   owner rule of every script (claim_dir, with $PROG as the owner and this file's mark): absent,
#   empty or marked by this recipe is accepted, an unmarked DIR whose every entry is one of KNOWN
#   (a build made before the mark existed) is adopted; anything else is an error naming DIR and
#   what is in it. A recipe run by another on the same DIR (IWSLT -> mt/prepare_doc_corpus.sh)
#   inherits the claim through DATA_PREP_CLAIMED_DIR.
claim_dest() {  # DIR KNOWN...
    local dir="$1"
    shift
    [ ! -e "$dir" ] || [ -d "$dir" ] || die "$dir exists and is not a directory; choose another destination"
    mkdir -p "$dir" || die "cannot create $dir"
    dir="$(cd "$dir" && pwd)"
    [ "${DATA_PREP_CLAIMED_DIR:-}" != "$dir" ] || return 0
    claim_dir "$dir" "$PROG" "" "$@"
    export DATA_PREP_CLAIMED_DIR="$dir"
}

# refuse_existing DIR FILE...: dies naming DIR/FILE if one of the FILEs exists in DIR.
refuse_existing() {
    local dir="$1" f
    shift
    for f in "$@"; do
        [ ! -e "$dir/$f" ] || die "refusing to overwrite $dir/$f (it exists already; move it away or choose another directory)"
    done
}

# copy_new SRC_DIR DEST_DIR FILE...: copy the FILEs from SRC_DIR into DEST_DIR (created if
#   needed), refusing (before copying any) if one of them exists there already.
copy_new() {
    local src="$1" dst="$2" f
    shift 2
    refuse_existing "$dst" "$@"
    mkdir -p "$dst"
    for f in "$@"; do cp "$src/$f" "$dst/$f"; done
}

# publish_corpus SRC CORPUS_DIR OUT_DIR CHECK FILE...: the last step of the corpus makers
#   (default_corpus/make.sh, bible_es_en/make_corpus.sh). CHECK=1: compare the FILEs regenerated in
#   SRC with the committed ones in CORPUS_DIR and exit (1 if one differs). Otherwise write them into
#   OUT_DIR, refusing to overwrite (copy_new), or, OUT_DIR empty, rewrite the committed corpus (the
#   script's own output), and print their sha256.
publish_corpus() {
    local src="$1" corpus="$2" out="$3" check="$4" f status=0
    shift 4
    if [ "$check" = 1 ]; then
        for f in "$@"; do
            if cmp -s "$src/$f" "$corpus/$f"; then log "identical: $f"; else log "DIFFERS:   $f"; status=1; fi
        done
        exit "$status"
    fi
    if [ -z "$out" ]; then
        out="$corpus"
        for f in "$@"; do cp "$src/$f" "$out/$f"; done
    else
        copy_new "$src" "$out" "$@"
    fi
    log "wrote $out; sha256 of the files (the corpus README records them):"
    (cd "$out" && sha256sum "$@")
}

# run_stage NAME DIR KEY FUNCTION [ARGS...]
#   Runs "FUNCTION TMPDIR ARGS..." unless DIR is complete with KEY, then moves TMPDIR to DIR.
#   TMPDIR sits next to DIR (.NAME.tmp.XXXXXX; leftovers of an interrupted run are removed). An
#   out-of-date DIR is replaced only if it carries a stage stamp: a directory of the same name
#   that this recipe did not build is an error naming it, never deleted.
run_stage() {
    local name="$1" dir="$2" key="$3" fn="$4"
    shift 4
    if [ "$(stage_key "$dir")" = "$key" ]; then
        log "stage $name: up to date ($dir)"
        return 0
    fi
    if [ -e "$dir" ] && [ ! -f "$dir/$STAGE_STAMP" ]; then
        die "$dir exists but was not built by this recipe (it has no $STAGE_STAMP stamp); move it away and re-run"
    fi
    local parent base tmp t0 old
    parent="$(dirname "$dir")"
    base="$(basename "$dir")"
    mkdir -p "$parent"
    rm -rf "$parent/.$base.tmp."* "$parent/.$base.old."*  # our own leftovers (names only we use)
    tmp="$(mktemp -d "$parent/.$base.tmp.XXXXXX")"
    log "stage $name: building $dir"
    t0=$SECONDS
    # In a subshell with errexit on, outside any '||' (where bash would ignore errexit inside the
    # function): a failing command in FUNCTION fails the stage instead of being skipped over.
    local status=0
    set +e
    (set -e; "$fn" "$tmp" "$@")
    status=$?
    set -e
    [ "$status" = 0 ] || { rm -rf "$tmp"; die "stage $name failed (see the messages above)"; }
    printf '%s\n' "$key" >"$tmp/$STAGE_STAMP"
    chmod u=rwx,go=rx "$tmp"  # mktemp -d makes it private; the result should not be
    if [ -e "$dir" ]; then
        # An out-of-date result of ours: rename it aside first (a directory cannot replace a
        # non-empty one), then delete it.
        old="$(mktemp -d "$parent/.$base.old.XXXXXX")"
        mv "$dir" "$old/"
        mv "$tmp" "$dir"
        rm -rf "$old"
    else
        mv "$tmp" "$dir"
    fi
    log "stage $name: done in $((SECONDS - t0))s"
}

# fetch_file URL DEST [FETCH_OPTIONS...]: make DEST a verified copy of URL through
#   data_prep/lib/fetch.py (resume, checksum, mirror) and print its sha256. FETCH_OPTIONS say
#   where the checksum comes from: --checksums FILE (the recipe's pinned SHA256SUMS; a name it
#   does not list is recorded on first download with a WARNING), --sha256 HEX or --record-sha256.
#   The mirror in $mirror, if set, is passed on. Needs $py and PYTHONPATH including the repository.
fetch_file() {
    local url="$1" dest="$2"
    shift 2
    "$py" -m data_prep.lib.fetch "$url" "$dest" "$@" ${mirror:+--mirror "$mirror"}
}

# require_python_modules PYTHON MODULE... -> dies naming the missing module and the pip package
require_python_modules() {
    local py="$1" mod
    shift
    for mod in "$@"; do
        "$py" -c "import $mod" 2>/dev/null || die "python module '$mod' is missing for $py (pip install $mod)"
    done
}

# find_python REPO [MODULE] -> a python that can import MODULE (default sentencepiece, the MT
# recipes' requirement): $PYTHON if set, else python3/python on PATH, else the project venv.
find_python() {
    local repo="$1" module="${2:-sentencepiece}" candidate
    for candidate in "${PYTHON:-}" python3 python "${ABC_VENV:-$repo/.venv}/bin/python"; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$module') is None)" 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    die "no python with $module found (set PYTHON, activate the venv, or run 'bash scripts/setup_env.sh')"
}
