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
#   TORCH_PIP_ARGS  extra arguments for the `pip install torch` step only, e.g. another index
#   ABC_TORCH_CPU=1 install torch's CPU build from https://download.pytorch.org/whl/cpu
#                   (the same as TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu")
#   ABC_FORCE_SETUP=1  reinstall everything even if the stamp matches
#
# Which torch build: pip's default index gives Linux x86_64 machines torch's CUDA build (several
# GB), whether or not they have a GPU; macOS and Windows get a CPU build. On a Linux machine
# without an NVIDIA GPU (no nvidia-smi, no /proc/driver/nvidia) this script says so before the
# download, and how to get the CPU build (ABC_TORCH_CPU=1); it does not switch index by itself,
# because a machine may have its own package index or a local wheel of torch (CI does).

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

# _abc_torch_args -> the extra arguments of the torch install (TORCH_PIP_ARGS, or the CPU index
# with ABC_TORCH_CPU=1), on one line.
_abc_torch_args() {
    if [ "${ABC_TORCH_CPU:-0}" = 1 ]; then
        [ -z "${TORCH_PIP_ARGS:-}" ] || _abc_die "set either ABC_TORCH_CPU=1 or TORCH_PIP_ARGS, not both"
        printf '%s\n' "--index-url $_ABC_TORCH_CPU_INDEX"
    else
        printf '%s\n' "${TORCH_PIP_ARGS:-}"
    fi
}

# _abc_torch_advice TORCH_ARGS: on Linux without an NVIDIA GPU, with the default index, say that
# the CUDA build is coming and how to get the CPU build instead.
_abc_torch_advice() {
    [ -z "$1" ] || return 0
    [ "$(uname -s)" = Linux ] || return 0
    _abc_has_nvidia_gpu && return 0
    _abc_log "no NVIDIA GPU here (no nvidia-smi, no /proc/driver/nvidia), but pip's default index gives Linux \
torch's CUDA build (several GB). For the CPU build, stop now (Ctrl-C) and rerun with ABC_TORCH_CPU=1 \
(or TORCH_PIP_ARGS=\"--index-url $_ABC_TORCH_CPU_INDEX\"). Going on with the default index (it may hold a local wheel)."
}

_abc_setup_main() {  # [--dry-run]
    set -euo pipefail

    local repo venv python stamp want have pyver torch_args dry_run=0
    [ "${1:-}" != --dry-run ] || dry_run=1
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    venv="${ABC_VENV:-$repo/.venv}"
    stamp="$venv/.abc_setup_stamp"
    torch_args="$(_abc_torch_args)"

    if [ "$dry_run" = 1 ]; then
        python="$(_abc_pick_python)"
        _abc_log "dry run: would build $venv with $python ($("$python" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])'))"
        _abc_torch_advice "$torch_args"
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

    _abc_torch_advice "$torch_args"
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
