#!/usr/bin/env bash
# Build (or refresh) the project's Python virtual environment.
#
#   bash scripts/setup_env.sh      # create / update the venv
#   . scripts/setup_env.sh         # same, then activate it in the current shell
#
# Idempotent: a stamp file inside the venv records a hash of everything that decides its
# contents (this script, requirements.txt, setup.py, TORCH_PIP_ARGS); when the
# hash matches, nothing is reinstalled and the script returns in well under a second.
#
# Environment variables:
#   ABC_VENV        where the venv lives (default: <repo>/.venv)
#   ABC_PYTHON      interpreter used to create it (default: python3; must be 3.11 or 3.12,
#                   the versions ve-fairseq ships wheels for)
#   TORCH_PIP_ARGS  extra arguments for the `pip install torch` step only. On machines where
#                   the default index would give a CUDA build you don't want, e.g.
#                     TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
#   ABC_FORCE_SETUP=1  reinstall everything even if the stamp matches

# Pins that are installed here rather than from requirements.txt (see the comment there).
_ABC_TORCH_SPEC="torch==2.13.0"
_ABC_FAIRSEQ_SPEC="ve-fairseq==0.12.3"

_abc_log() { printf '[setup_env] %s\n' "$*" >&2; }
_abc_die() { printf '[setup_env] ERROR: %s\n' "$*" >&2; exit 1; }

_abc_setup_main() {
    set -euo pipefail

    local repo venv python stamp want have pyver
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    venv="${ABC_VENV:-$repo/.venv}"
    python="${ABC_PYTHON:-python3}"
    stamp="$venv/.abc_setup_stamp"

    [ -f "$repo/requirements.txt" ] || _abc_die "missing $repo/requirements.txt"
    [ -f "$repo/setup.py" ] || _abc_die "missing $repo/setup.py"

    # The hash covers everything that decides what ends up in the venv, this script included (its
    # pins and install steps); TORCH_PIP_ARGS can change which torch build is picked.
    want="$(
        {
            printf '%s\n%s\n%s\n' "$_ABC_TORCH_SPEC" "$_ABC_FAIRSEQ_SPEC" "${TORCH_PIP_ARGS:-}"
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
        _abc_log "setup_env.sh, requirements.txt, setup.py or TORCH_PIP_ARGS changed since the venv was built; updating it"
    fi

    if [ ! -x "$venv/bin/python" ]; then
        command -v "$python" >/dev/null 2>&1 \
            || _abc_die "interpreter '$python' not found; install Python 3.11/3.12 or set ABC_PYTHON"
        pyver="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
        case "$pyver" in
            3.11|3.12) ;;
            *) _abc_die "$python is Python $pyver; ve-fairseq ships wheels for 3.11 and 3.12 only (set ABC_PYTHON)" ;;
        esac
        _abc_log "creating venv $venv with $python (Python $pyver)"
        "$python" -m venv "$venv" \
            || _abc_die "'$python -m venv' failed; on Debian/Ubuntu install the python3-venv package"
    fi

    local pip=("$venv/bin/python" -m pip)
    # Never prompt (CI runs with no stdin); no progress bars, they turn CI logs into noise.
    export PIP_NO_INPUT=1 PIP_PROGRESS_BAR=off

    _abc_log "upgrading pip"
    "${pip[@]}" install --upgrade pip

    _abc_log "installing $_ABC_TORCH_SPEC${TORCH_PIP_ARGS:+ (extra args: $TORCH_PIP_ARGS)}"
    # shellcheck disable=SC2086  # TORCH_PIP_ARGS is a list of words on purpose
    "${pip[@]}" install "$_ABC_TORCH_SPEC" ${TORCH_PIP_ARGS:-} \
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
    _abc_setup_main
    [ -n "${_ABC_SOURCED:-}" ] || _abc_log "activate it with: . ${ABC_VENV:-$(cd "$(dirname "$0")/.." && pwd)/.venv}/bin/activate"
fi
