# shellcheck shell=bash
# Shared bash helpers of the MT recipes (sourced, not executed).
#
# A recipe is a chain of stages. Each stage writes into a fresh temporary directory next to its
# output directory and is moved into place only when it completed, together with a stamp file
# holding a key: the hash of the stage's name, its parameters and the keys of the stages it
# reads. Rerunning a recipe skips every stage whose output carries the expected key; changing a
# parameter (or an input) changes the key of that stage and of everything downstream, which are
# then rebuilt. An interrupted stage leaves only its temporary directory, removed on the next run.

STAGE_STAMP=".stage_key"

mt_log() { printf '%s: %s\n' "${MT_RECIPE:-mt}" "$*" >&2; }
mt_die() { printf '%s: ERROR: %s\n' "${MT_RECIPE:-mt}" "$*" >&2; exit 1; }

# hash_key WORD... -> a sha256 of the words (one per line)
hash_key() { printf '%s\n' "$@" | sha256sum | cut -d' ' -f1; }

# stage_key DIR -> the key of a completed stage (empty if DIR is not a completed stage)
stage_key() { cat "$1/$STAGE_STAMP" 2>/dev/null || true; }

# run_stage NAME DIR KEY FUNCTION [ARGS...]
#   Runs "FUNCTION TMPDIR ARGS..." unless DIR is complete with KEY, then moves TMPDIR to DIR.
run_stage() {
    local name="$1" dir="$2" key="$3" fn="$4"
    shift 4
    if [ "$(stage_key "$dir")" = "$key" ]; then
        mt_log "stage $name: up to date ($dir)"
        return 0
    fi
    local parent base tmp t0
    parent="$(dirname "$dir")"
    base="$(basename "$dir")"
    mkdir -p "$parent"
    # Leftovers of an interrupted run of this stage.
    rm -rf "$parent/.$base.tmp."* "$parent/.$base.old."*
    tmp="$(mktemp -d "$parent/.$base.tmp.XXXXXX")"
    mt_log "stage $name: building $dir"
    t0=$SECONDS
    "$fn" "$tmp" "$@" || { rm -rf "$tmp"; mt_die "stage $name failed (see the messages above)"; }
    printf '%s\n' "$key" >"$tmp/$STAGE_STAMP"
    chmod u=rwx,go=rx "$tmp"  # mktemp -d makes it private; the result should not be
    if [ -e "$dir" ]; then
        # An out-of-date result: rename it aside first (a directory cannot replace a non-empty one).
        local old
        old="$(mktemp -d "$parent/.$base.old.XXXXXX")"
        mv "$dir" "$old/"
        mv "$tmp" "$dir"
        rm -rf "$old"
    else
        mv "$tmp" "$dir"
    fi
    mt_log "stage $name: done in $((SECONDS - t0))s"
}

# find_tool NAME -> path of a console script (PATH first, then the project venv)
find_tool() {
    local name="$1" repo="$2"
    if command -v "$name" >/dev/null 2>&1; then
        command -v "$name"
    elif [ -x "${ABC_VENV:-$repo/.venv}/bin/$name" ]; then
        printf '%s\n' "${ABC_VENV:-$repo/.venv}/bin/$name"
    else
        mt_die "$name not found on PATH nor in ${ABC_VENV:-$repo/.venv}; run 'bash scripts/setup_env.sh' and activate the venv"
    fi
}

# require_python_modules PYTHON MODULE... -> dies naming the missing module and the pip package
require_python_modules() {
    local py="$1" mod
    shift
    for mod in "$@"; do
        "$py" -c "import $mod" 2>/dev/null || mt_die "python module '$mod' is missing for $py (pip install $mod)"
    done
}

# check_positive_int FLAG VALUE
check_positive_int() {
    [[ "$2" =~ ^[1-9][0-9]*$ ]] || mt_die "$1 expects a positive integer, got '$2'"
}

# find_python REPO -> a python that can import sentencepiece (the recipes' common requirement):
# $PYTHON if set, else python3/python on PATH (an activated venv), else the project venv.
find_python() {
    local repo="$1" candidate
    for candidate in "${PYTHON:-}" python3 python "${ABC_VENV:-$repo/.venv}/bin/python"; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sentencepiece' 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    mt_die "no python with sentencepiece found (set PYTHON, activate the venv, or run 'bash scripts/setup_env.sh')"
}

# lock_dir DIR: hold an exclusive lock on DIR/.lock for the rest of the script, so that two runs
# of a recipe on one destination do not remove each other's temporary directories.
# A recipe that calls another on the same directory (IWSLT -> prepare_doc_corpus.sh) passes the
# lock on through MT_LOCKED_DIR instead of deadlocking on it.
lock_dir() {
    mkdir -p "$1"
    local dir
    dir="$(cd "$1" && pwd)"
    [ "${MT_LOCKED_DIR:-}" != "$dir" ] || return 0
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$dir/.lock"
        flock -n 9 || mt_die "another preparation is running on $dir (lock $dir/.lock is held)"
    fi
    export MT_LOCKED_DIR="$dir"
}

# files_key FILE... -> a sha256 over the names and contents of the files
files_key() {
    local f
    for f in "$@"; do
        [ -f "$f" ] || mt_die "missing input file $f"
        printf '%s %s\n' "$(basename "$f")" "$(sha256sum "$f" | cut -d' ' -f1)"
    done | sha256sum | cut -d' ' -f1
}
