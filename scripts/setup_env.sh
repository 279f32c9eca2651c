#!/usr/bin/env bash
# Build (or refresh) the project's Python virtual environment.
#
#   bash scripts/setup_env.sh      # create / update the venv
#   . scripts/setup_env.sh         # same, then activate it in the current shell
#   bash scripts/setup_env.sh --dry-run   # say which Python and torch build it would use; change nothing
#   bash scripts/setup_env.sh --help      # this text
#
# Idempotent: a stamp file inside the venv records a hash of everything that decides its
# contents (this script, requirements.txt, setup.py, TORCH_PIP_ARGS); when the
# hash matches, nothing is reinstalled and the script returns in well under a second.
#
# Environment variables:
#   ABC_VENV        where the venv lives (default: <repo>/.venv)
#   ABC_PYTHON      interpreter used to create it (default: the first of python3, python3.12,
#                   python3.11 that is Python 3.11 or 3.12, the versions ve-fairseq ships wheels for)
#   ABC_TORCH       which torch build: auto (default, see below), cpu (the CPU build from
#                   https://download.pytorch.org/whl/cpu) or cuda (pip's default index, which
#                   gives Linux the CUDA build)
#   ABC_TORCH_CPU=1 the same as ABC_TORCH=cpu (kept for earlier instructions)
#   TORCH_PIP_ARGS  extra arguments for the `pip install torch` step only, e.g. another index;
#                   used as given (not together with ABC_TORCH=cpu|cuda or ABC_TORCH_CPU=1)
#   ABC_FORCE_SETUP=1  reinstall everything even if the stamp matches
#
# Which torch build (auto): pip's default index gives Linux x86_64 machines torch's CUDA build
# (several GB) whether or not they have a GPU. So on Linux with an NVIDIA GPU (nvidia-smi, or
# /proc/driver/nvidia) the script takes that CUDA build; without one it takes the CPU build from
# the CPU index when that index answers within a few seconds, and otherwise falls back to pip's
# default index with a message (a machine may reach only its own package index or a local wheel
# of torch, as CI does). macOS and Windows use the default index (a CPU build). The choice is
# printed before anything is installed; --dry-run prints it and stops.

# Pins that are installed here rather than from requirements.txt (see the comment there).
_ABC_TORCH_SPEC="torch==2.13.0"
_ABC_FAIRSEQ_SPEC="ve-fairseq==0.12.3"

_ABC_TORCH_CPU_INDEX="https://download.pytorch.org/whl/cpu"

_abc_log() { printf '[setup_env] %s\n' "$*" >&2; }
_abc_die() { printf '[setup_env] ERROR: %s\n' "$*" >&2; exit 1; }

# _abc_pick_python -> the interpreter to build the venv with: ABC_PYTHON if set (it must be 3.11
# or 3.12), else the first of python3, python3.12, python3.11 that is one of those versions.
_abc_pick_python() {
    local candidates=(python3 python3.12 python3.11) cand ver seen=()
    [ -z "${ABC_PYTHON:-}" ] || candidates=("$ABC_PYTHON")
    for cand in "${candidates[@]}"; do
        command -v "$cand" >/dev/null 2>&1 || continue
        ver="$("$cand" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo "?")"
        case "$ver" in
            3.11|3.12) printf '%s\n' "$cand"; return 0 ;;
        esac
        seen+=("$cand is Python $ver")
    done
    if [ -n "${ABC_PYTHON:-}" ]; then
        _abc_die "ABC_PYTHON=$ABC_PYTHON: ${seen[*]:-not found}; ve-fairseq ships wheels for Python 3.11 and 3.12 only"
    fi
    _abc_die "no Python 3.11 or 3.12 found (tried python3, python3.12, python3.11${seen:+: ${seen[*]}}); \
install one (ve-fairseq ships wheels for these two only) or set ABC_PYTHON"
}

# _abc_has_nvidia_gpu: true when the machine shows an NVIDIA driver.
_abc_has_nvidia_gpu() {
    command -v nvidia-smi >/dev/null 2>&1 || [ -e "${_ABC_NVIDIA_PROC:-/proc/driver/nvidia}" ]
}

# _abc_cpu_index_reachable: true when the CPU index answers within a few seconds.
_abc_cpu_index_reachable() {
    if [ -n "${_ABC_CPU_INDEX_REACHABLE:-}" ]; then  # the tests decide
        [ "$_ABC_CPU_INDEX_REACHABLE" = 1 ]
        return
    fi
    local python wait=()
    python="$(command -v python3 || true)"
    [ -n "$python" ] || return 1
    ! command -v timeout >/dev/null 2>&1 || wait=(timeout 8)
    "${wait[@]}" "$python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' \
        "$_ABC_TORCH_CPU_INDEX/torch/" >/dev/null 2>&1
}

# _abc_torch_args -> the extra arguments of the torch install, on one line (see the header for the
# rules); says on stderr which build it chose and why.
_abc_torch_args() {
    local choice="${ABC_TORCH:-auto}" cpu_args="--index-url $_ABC_TORCH_CPU_INDEX"
    if [ "${ABC_TORCH_CPU:-0}" = 1 ]; then
        case "$choice" in auto|cpu) choice=cpu ;; *) _abc_die "ABC_TORCH_CPU=1 and ABC_TORCH=$choice disagree" ;; esac
    fi
    case "$choice" in auto|cpu|cuda) ;; *) _abc_die "ABC_TORCH must be auto, cpu or cuda, got '$choice'" ;; esac
    if [ -n "${TORCH_PIP_ARGS:-}" ]; then
        [ "$choice" = auto ] || _abc_die "set either ABC_TORCH=$choice (or ABC_TORCH_CPU=1) or TORCH_PIP_ARGS, not both"
        _abc_log "torch: TORCH_PIP_ARGS as given ($TORCH_PIP_ARGS)"
        printf '%s\n' "$TORCH_PIP_ARGS"
        return 0
    fi
    if [ "$choice" = auto ] && [ "$(uname -s)" != Linux ]; then
        _abc_log "torch: pip's default index ($(uname -s) gets a CPU build from it)"
        choice=default
    elif [ "$choice" = auto ] && _abc_has_nvidia_gpu; then
        _abc_log "torch: NVIDIA GPU found (nvidia-smi or /proc/driver/nvidia): the CUDA build from pip's default \
index (ABC_TORCH=cpu for the CPU build)"
        choice=default
    elif [ "$choice" = auto ] && _abc_cpu_index_reachable; then
        _abc_log "torch: no NVIDIA GPU found: the CPU build from $_ABC_TORCH_CPU_INDEX (ABC_TORCH=cuda for the CUDA build)"
        choice=cpu_auto
    elif [ "$choice" = auto ]; then
        _abc_log "torch: no NVIDIA GPU found, but $_ABC_TORCH_CPU_INDEX cannot be reached from here: falling back \
to pip's default index (it may hold a local wheel; on Linux it otherwise gives the CUDA build, several GB). \
ABC_TORCH=cpu insists on the CPU index, TORCH_PIP_ARGS names another one."
        choice=default
    fi
    case "$choice" in
        cpu) _abc_log "torch: the CPU build from $_ABC_TORCH_CPU_INDEX (asked for)"; printf '%s\n' "$cpu_args" ;;
        cpu_auto) printf '%s\n' "$cpu_args" ;;
        cuda) _abc_log "torch: pip's default index (ABC_TORCH=cuda: the CUDA build on Linux)"; printf '\n' ;;
        *) printf '\n' ;;
    esac
}

_abc_setup_main() {  # [--dry-run]
    set -euo pipefail

    local repo venv python stamp want have pyver torch_args dry_run=0
    [ "${1:-}" != --dry-run ] || dry_run=1
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    venv="${ABC_VENV:-$repo/.venv}"
    stamp="$venv/.abc_setup_stamp"
    # An automatic choice is made once per venv (and kept in it), so that a network that comes and
    # goes does not flip the build and reinstall torch.
    if [ "$dry_run" = 0 ] && [ -f "$venv/.abc_torch_args" ] && [ -z "${ABC_TORCH:-}${TORCH_PIP_ARGS:-}" ] \
        && [ "${ABC_TORCH_CPU:-0}" != 1 ]; then
        torch_args="$(cat "$venv/.abc_torch_args")"
        _abc_log "torch: as chosen when $venv was built (${torch_args:-the default index}; ABC_TORCH=cpu|cuda changes it)"
    else
        torch_args="$(_abc_torch_args)" || exit 1
    fi

    if [ "$dry_run" = 1 ]; then
        python="$(_abc_pick_python)"
        _abc_log "dry run: would build $venv with $python ($("$python" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])'))"
        _abc_log "dry run: would run pip install $_ABC_TORCH_SPEC${torch_args:+ $torch_args}"
        return 0
    fi

    [ -f "$repo/requirements.txt" ] || _abc_die "missing $repo/requirements.txt"
    [ -f "$repo/setup.py" ] || _abc_die "missing $repo/setup.py"

    # The hash covers everything that decides what ends up in the venv, this script included (its
    # pins and install steps); TORCH_PIP_ARGS can change which torch build is picked.
    want="$(
        {
            printf '%s\n%s\n%s\n' "$_ABC_TORCH_SPEC" "$_ABC_FAIRSEQ_SPEC" "$torch_args"
            cat "$repo/requirements.txt" "$repo/setup.py" "$repo/scripts/setup_env.sh"
        } | sha256sum | cut -d' ' -f1
    )"

    # A venv whose interpreter no longer runs (e.g. the base Python was removed) is useless:
    # rebuild it. Only ever delete a directory that is recognisably a venv.
    if [ -e "$venv" ] && ! "$venv/bin/python" -c '' >/dev/null 2>&1; then
        [ -f "$venv/pyvenv.cfg" ] \
            || _abc_die "$venv exists but is not a working virtualenv (no pyvenv.cfg); move it away or set ABC_VENV"
        _abc_log "venv at $venv is broken (its python does not run); recreating it"
        rm -rf "$venv"
    fi

    if [ -f "$stamp" ] && [ "${ABC_FORCE_SETUP:-0}" != 1 ]; then
        have="$(cat "$stamp")"
        if [ "$have" = "$want" ]; then
            _abc_log "venv $venv is up to date (stamp $want); nothing to do"
            return 0
        fi
        _abc_log "setup_env.sh, requirements.txt, setup.py or the torch install arguments changed since the venv was built; updating it"
    fi

    if [ ! -x "$venv/bin/python" ]; then
        python="$(_abc_pick_python)"
        pyver="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
        _abc_log "creating venv $venv with $python (Python $pyver)"
        "$python" -m venv "$venv" \
            || _abc_die "'$python -m venv' failed; on Debian/Ubuntu install the python3-venv package"
    fi

    local pip=("$venv/bin/python" -m pip)
    # Never prompt (CI runs with no stdin); no progress bars, they turn CI logs into noise.
    export PIP_NO_INPUT=1 PIP_PROGRESS_BAR=off

    _abc_log "upgrading pip"
    "${pip[@]}" install --upgrade pip

    _abc_log "installing $_ABC_TORCH_SPEC${torch_args:+ (extra args: $torch_args)}"
    # shellcheck disable=SC2086  # the torch arguments are a list of words on purpose
    "${pip[@]}" install "$_ABC_TORCH_SPEC" $torch_args \
        || _abc_die "could not install $_ABC_TORCH_SPEC; set TORCH_PIP_ARGS to point pip at a suitable index"

    _abc_log "installing $_ABC_FAIRSEQ_SPEC without its declared dependencies (they would pull torchaudio + CUDA torch)"
    "${pip[@]}" install --no-deps "$_ABC_FAIRSEQ_SPEC"

    _abc_log "installing pinned requirements from requirements.txt"
    "${pip[@]}" install -r "$repo/requirements.txt"

    _abc_log "installing abc-fairseq itself in editable mode"
    "${pip[@]}" install -e "$repo"

    # Check the environment, not the project's code: abc_fairseq must be found (in this checkout)
    # but is not imported, so a bug in it is reported by the tests rather than by a failed
    # (and, lacking a stamp, endlessly repeated) setup.
    _abc_log "checking that torch and fairseq import and that abc_fairseq resolves to $repo"
    # (Run from / so that the checkout itself is not on sys.path: the editable install must work.)
    (cd / && "$venv/bin/python" - "$repo") <<'PY' || _abc_die "the new venv is not usable (see the message above)"
import importlib.util, os, sys
import torch, fairseq
spec = importlib.util.find_spec("abc_fairseq")
origin = os.path.realpath(spec.origin) if spec and spec.origin else None
if origin is None or not origin.startswith(os.path.realpath(sys.argv[1]) + os.sep):
    sys.exit("abc_fairseq resolves to %s, not to the checkout %s" % (origin, sys.argv[1]))
print("torch", torch.__version__, "| fairseq", fairseq.__version__, "| abc_fairseq", origin)
PY
    for tool in fairseq-preprocess fairseq-train fairseq-eval-lm; do
        [ -x "$venv/bin/$tool" ] || _abc_die "$venv/bin/$tool is missing after installing $_ABC_FAIRSEQ_SPEC"
    done

    printf '%s\n' "$torch_args" >"$venv/.abc_torch_args"
    printf '%s\n' "$want" >"$stamp"
    _abc_log "venv $venv is ready"
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
    # Sourced: do the work in a separate bash process, so that `set -euo pipefail` and `exit`
    # cannot leak into (or kill) the caller's shell, then activate the venv here. (A subshell
    # would not do: inside `if ! (...)` bash ignores `set -e`, so failures would go unnoticed.)
    if ! _ABC_SOURCED=1 bash "${BASH_SOURCE[0]}"; then
        printf '[setup_env] ERROR: environment setup failed (see above)\n' >&2
        return 1
    fi
    _abc_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    # shellcheck disable=SC1091
    . "${ABC_VENV:-$_abc_repo/.venv}/bin/activate"
    unset _abc_repo
else
    set -euo pipefail
    if [ -z "${_ABC_SOURCED:-}" ]; then
        case "${1:-}" in
            -h|--help) awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
            --dry-run|"") [ $# -le 1 ] || _abc_die "unexpected argument '$2' (see --help)" ;;
            *) _abc_die "unknown option '$1' (see --help)" ;;
        esac
    fi
    _abc_setup_main "$@"
    [ -n "${_ABC_SOURCED:-}" ] || [ "${1:-}" = --dry-run ] || _abc_log "activate it with: . ${ABC_VENV:-$(cd "$(dirname "$0")/.." && pwd)/.venv}/bin/activate"
fi
