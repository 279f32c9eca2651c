# shellcheck shell=bash
# Shared pieces of the shell entry points under scripts/ and data_prep/ (sourced, never executed;
# data_prep/lib/common.sh sources this file and adds only the data_prep-specific helpers):
#
#   die MSG...            print "NAME: ERROR: MSG" to stderr and exit 1
#   log MSG...            print "NAME: MSG" to stderr
#   warn MSG...           print "NAME: WARNING: MSG" to stderr
#   usage                 print the calling script's header comment (its --help text)
#   answer_help ARGS...   if -h or --help is among ARGS (before a '--'), print usage and exit 0
#   unknown_option ARG [HINT]  die naming ARG as an unknown option
#   deprecated OLD NEW    warn that flag OLD is a deprecated alias of NEW (it still works)
#   parse_flags SPEC ARGS...   the one option parser of every shell entry point (see below)
#   posint FLAG VALUE     die unless VALUE is a positive integer
#   nonneg_int FLAG VALUE die unless VALUE is an integer >= 0
#   need_tool TOOL        die unless TOOL is on PATH
#   find_tool TOOL REPO   print the path of TOOL (PATH first, else the project venv), or die
#   find_tools TOOL REPO  set BINDIR (where TOOL is: PATH, else the project venv) and PY (its python)
#   take_lock DIR CMD...  refuse to share DIR with a live run (see below); CMD is recorded
#   release_lock          mark the lock free at a normal end
#   lock_dir DIR          take_lock for a whole script run, inherited by a nested run on DIR
#   claim_dir DIR KIND ID [KNOWN...]  the one owner rule of output folders (see below)
#
# NAME is $SCRIPT_NAME, by default the basename of the script that sourced this file.

SCRIPT_NAME="${SCRIPT_NAME:-$(basename "${BASH_SOURCE[${#BASH_SOURCE[@]}-1]}")}"

die() { printf '%s: ERROR: %s\n' "$SCRIPT_NAME" "$*" >&2; exit 1; }
log() { printf '%s: %s\n' "$SCRIPT_NAME" "$*" >&2; }
warn() { printf '%s: WARNING: %s\n' "$SCRIPT_NAME" "$*" >&2; }

# The help text is the header comment of the main script: from line 2 to the first line that is
# not a comment (or an #SBATCH directive), with the leading '# ' removed.
usage_of() {  # FILE
    awk 'NR == 1 { next } /^#SBATCH/ || !/^#/ { exit } { sub(/^# ?/, ""); print }' "$1"
}
usage() { usage_of "${BASH_SOURCE[${#BASH_SOURCE[@]}-1]}"; }

answer_help() {  # ARGS...
    local arg
    for arg in "$@"; do
        case "$arg" in
            --) return 0 ;;
            -h|--help) usage; exit 0 ;;
        esac
    done
}

unknown_option() {  # ARG [HINT]
    die "unknown option '$1' (see --help${2:+; $2})"
}

deprecated() {  # OLD NEW
    warn "$1 is a deprecated alias of $2 (the launchers of scripts/lm, scripts/mt and scripts/roberta share $2)"
}

# parse_flags SPEC ARGS...: parse ARGS against the array named SPEC, one entry per flag:
#   "FLAG VAR [WHAT...]"     FLAG takes a value, stored in $VAR; a missing or empty one, or one that
#                            looks like an option ('-...'), is an error "FLAG needs WHAT"
#   "FLAG VAR=VALUE"         a switch: sets $VAR to VALUE
#   "FLAG !FUNCTION"         a switch: runs FUNCTION (e.g. a preset of several settings)
#   "FLAG @FUNCTION"         FLAG takes a value, handed to FUNCTION (which checks it; empty if missing)
#   "FLAG >NEW"              a deprecated alias of NEW: warns, then acts as NEW (errors name FLAG)
#   "-- VAR [HINT...]"       the arguments after '--' go to the array VAR; HINT ends the error
#                            of an unknown option. Without this entry '--' is an unknown option.
#   "+ VAR"                  words that are no option go to the array VAR (without this entry
#                            they are an error naming them)
# -h or --help anywhere before '--' prints the help and exits 0 before anything is parsed.
parse_flags() {  # SPEC ARGS...
    local -n _flag_spec="$1"
    shift
    answer_help "$@"
    local -A _flag_rule=()
    local _entry _flag _rule _target _what _rest_var="" _hint="" _word_var=""
    for _entry in "${_flag_spec[@]}"; do
        read -r _flag _rule <<<"$_entry"
        _flag_rule[$_flag]="$_rule"
    done
    [ -z "${_flag_rule[--]+set}" ] || read -r _rest_var _hint <<<"${_flag_rule[--]}"
    if [ -n "${_flag_rule[+]+set}" ]; then
        _word_var="${_flag_rule[+]}"
        local -n _flag_words="$_word_var"
    fi
    while [ $# -gt 0 ]; do
        _flag="$1"
        if [ "$_flag" = -- ] && [ -n "$_rest_var" ]; then
            shift
            local -n _flag_rest="$_rest_var"
            _flag_rest=("$@")
            return 0
        fi
        if [[ "$_flag" != -* ]] && [ "$_flag" != + ]; then
            [ -n "$_word_var" ] || die "unexpected argument '$_flag' (see --help)"
            _flag_words+=("$_flag")
            shift
            continue
        fi
        if [ -z "${_flag_rule[$_flag]+set}" ] || [ "$_flag" = + ]; then
            unknown_option "$_flag" ${_hint:+"$_hint"}
        fi
        _rule="${_flag_rule[$_flag]}"
        if [[ "$_rule" == '>'* ]]; then
            deprecated "$_flag" "${_rule#>}"
            _rule="${_flag_rule[${_rule#>}]}"
        fi
        read -r _target _what <<<"$_rule"
        if [[ "$_target" == '!'* ]]; then
            "${_target#!}"
            shift
        elif [[ "$_target" == '@'* ]]; then
            "${_target#@}" "${2:-}"
            shift 2
        elif [[ "$_target" == *=* ]]; then
            printf -v "${_target%%=*}" '%s' "${_target#*=}"
            shift
        else
            [ -n "${2:-}" ] || die "$_flag needs ${_what:-a value} (see --help)"
            [[ "$2" != -* ]] || die "$_flag needs ${_what:-a value}, got the option-like '$2' (see --help)"
            printf -v "$_target" '%s' "$2"
            shift 2
        fi
    done
}

posint() {  # FLAG VALUE
    [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 expects a positive integer, got '$2'"
}

nonneg_int() {  # FLAG VALUE
    [[ "$2" =~ ^[0-9]+$ ]] || die "$1 expects an integer >= 0, got '$2'"
}

need_tool() {  # TOOL
    command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH (activate the project venv: . .venv/bin/activate)"
}

find_tool() {  # TOOL REPO -> prints its path
    local venv="${ABC_VENV:-$2/.venv}"
    if command -v "$1" >/dev/null 2>&1; then
        command -v "$1"
    elif [ -x "$venv/bin/$1" ]; then
        printf '%s\n' "$venv/bin/$1"
    else
        die "$1 not found on PATH nor in $venv; build it (bash scripts/setup_env.sh) and activate it (. .venv/bin/activate)"
    fi
}

find_tools() {  # TOOL REPO -> sets BINDIR and PY
    local tool
    tool="$(find_tool "$1" "$2")" || exit 1
    BINDIR="$(dirname "$tool")"
    PY="$BINDIR/python"
    [ -x "$PY" ] || PY="$(command -v python3)"
}

# take_lock DIR: one run per output folder. DIR/.lock is locked (flock) on a descriptor that this
# shell and every process it starts or execs (fairseq-train, torchrun and its workers) inherit,
# so the lock lasts exactly as long as the run, and a run killed with -9 releases it. The file
# says who holds it (pid, host, start time, command). A second run refuses and names the holder;
# a lock file left by a run that is gone is taken over, with a message naming that run. Without
# flock(1) (e.g. macOS) the recorded pid is checked instead (on this host only).
lock_holder() {  # LOCK_FILE -> its record on one line
    tr '\n' ' ' <"$1" 2>/dev/null | sed 's/ *$//'
}

take_lock() {  # DIR COMMAND...
    local dir="$1" file="$1/.lock" previous=""
    shift
    mkdir -p "$dir" || die "cannot create $dir"
    if command -v flock >/dev/null 2>&1; then
        exec {ABC_LOCK_FD}>>"$file" || die "cannot open the lock file $file"
        if ! flock -n "$ABC_LOCK_FD"; then
            die "$dir is in use by another run ($(lock_holder "$file")); wait for it to end or choose another folder (lock: $file)"
        fi
    elif [ -s "$file" ]; then
        local pid host
        read -r pid host _ <<<"$(sed -n 's/^pid=\([0-9]*\) host=\([^ ]*\) .*/\1 \2/p' "$file")"
        if [ "${host:-}" != "$(hostname)" ]; then
            die "$dir is locked by a run on host ${host:-?} ($(lock_holder "$file")); if that run is gone, delete $file"
        elif kill -0 "${pid:-0}" 2>/dev/null; then
            die "$dir is in use by another run ($(lock_holder "$file")); wait for it to end or choose another folder (lock: $file)"
        fi
    fi
    previous="$(lock_holder "$file")"
    if [ -n "$previous" ]; then
        log "taking over the lock of $dir from a run that is no longer running ($previous)"
    fi
    printf 'pid=%s host=%s started=%s command=%s\n' "$$" "$(hostname)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        "$SCRIPT_NAME $*" >"$file"
    ABC_LOCK_FILE="$file"
}

# release_lock: empty the lock file at a normal end (for scripts that do not exec their run);
# the flock itself ends with the process.
release_lock() {
    [ -z "${ABC_LOCK_FILE:-}" ] || : >"$ABC_LOCK_FILE" 2>/dev/null || true
}

# lock_dir DIR: take_lock on DIR for the rest of the script (the record is emptied at its exit). A
# script run by another on the same DIR (IWSLT -> mt/prepare_doc_corpus.sh) inherits the lock
# through DATA_PREP_LOCKED_DIR instead of refusing its own parent.
lock_dir() {  # DIR
    mkdir -p "$1" || die "cannot create $1"
    local dir
    dir="$(cd "$1" && pwd)"
    [ "${DATA_PREP_LOCKED_DIR:-}" != "$dir" ] || return 0
    take_lock "$dir"
    trap release_lock EXIT
    export DATA_PREP_LOCKED_DIR="$dir"
}

# claim_dir DIR KIND ID [KNOWN...]: DIR holds the output of one run, named by its owner mark
# DIR/$OWNER_MARK (.run, for every script and data recipe, and their Python twin
# data_prep/lib/dest.py; a data folder from before it carries $LEGACY_OWNER_MARK, read as the same
# mark and rewritten as .run), which holds "KIND ID": what made it (e.g. "lm-train --row abc_n64";
# ID may be empty). The one rule of every script that writes into a folder:
#   - absent or empty (a lock file aside): claimed, the mark written;
#   - marked with the same KIND ID: used as it is (resume);
#   - marked by anything else: an error naming both;
#   - unmarked, every entry one of KNOWN (an output from before the mark; run_stage's leftovers
#     .NAME.tmp.* and .NAME.old.* count as NAME): adopted, the mark written;
#   - anything else: an error naming DIR and what it holds; nothing in it is touched.
OWNER_MARK=.run
LEGACY_OWNER_MARK=.data_prep_owner
claim_dir() {  # DIR KIND ID [KNOWN...]
    local dir="$1" want="$2${3:+ $3}" have entry base foreign=()
    shift 3
    [ ! -e "$dir" ] || [ -d "$dir" ] || die "$dir exists and is not a directory; choose another folder"
    if [ ! -f "$dir/$OWNER_MARK" ] && [ -f "$dir/$LEGACY_OWNER_MARK" ]; then
        have="$(head -n 1 "$dir/$LEGACY_OWNER_MARK")"
        [ "$have" = "$want" ] || die "$dir holds another run ($have, see $dir/$LEGACY_OWNER_MARK), not this one ($want); choose another folder"
        mv "$dir/$LEGACY_OWNER_MARK" "$dir/$OWNER_MARK" || die "cannot rename $dir/$LEGACY_OWNER_MARK"
    fi
    if [ -f "$dir/$OWNER_MARK" ]; then
        have="$(head -n 1 "$dir/$OWNER_MARK")"
        [ "$have" = "$want" ] || die "$dir holds another run ($have, see $dir/$OWNER_MARK), not this one ($want); choose another folder"
        return 0
    fi
    if [ -d "$dir" ]; then
        while IFS= read -r entry; do
            base="${entry#.}" base="${base%.tmp.*}" base="${base%.old.*}"
            case " $* .lock " in *" $entry "* | *" $base "*) ;; *) foreign+=("$entry") ;; esac
        done < <(ls -A "$dir")
    fi
    [ "${#foreign[@]}" -eq 0 ] || die "$dir is not empty and was not created by $SCRIPT_NAME (no $OWNER_MARK;" \
        "it holds ${foreign[*]:0:5}$([ "${#foreign[@]}" -le 5 ] || echo " ...")); refusing to write into it:" \
        "choose another folder (if it holds an earlier run of this very command, resume it with:" \
        "echo '$want' > $dir/$OWNER_MARK)"
    mkdir -p "$dir" || die "cannot create $dir"
    printf '%s\n' "$want" >"$dir/$OWNER_MARK"
}
