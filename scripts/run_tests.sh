#!/usr/bin/env bash
# Run the test suite inside the project venv (built / refreshed on the way by setup_env.sh).
#
#   bash scripts/run_tests.sh                 # all tests
#   bash scripts/run_tests.sh -k data_prep -x # extra arguments go to pytest
#   bash scripts/run_tests.sh tests/recipes/test_data_prep.py   # a path replaces the default "tests"
#   ABC_TEST_WORKERS=0 bash scripts/run_tests.sh                # one process (default: one per core)
#   bash scripts/run_tests.sh --help          # this text (pytest's own help: python -m pytest --help)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPT_NAME=run_tests
# shellcheck source=scripts/lib/common.sh
. "$repo/scripts/lib/common.sh"
answer_help "$@"
cd "$repo"

# shellcheck source=scripts/setup_env.sh
. scripts/setup_env.sh

# Run tests/ unless the arguments already name a test file or directory (or a node id of one).
targets=(tests)
for arg in "$@"; do
    if [ -e "${arg%%::*}" ]; then
        targets=()
        break
    fi
done

# Triton's bindings (nanobind) list the objects still alive when the interpreter exits after the
# interpreter-run kernel tests ("nanobind: leaked 362 functions!", one line per object). They are
# harmless and cannot be switched off from Python, but they would bury pytest's summary, so only
# those lines are dropped here; every other line passes through unchanged, in order.
drop_nanobind_leak_report() {
    grep -v -E '^nanobind: (leaked [0-9]+ [a-z_]+!|this is likely caused by a reference counting issue)|^ - leaked [a-z_]+ |^ - \.\.\. skipped remainder$|^See https://nanobind\.readthedocs\.io/en/latest/refleaks\.html$' || true
}

# Every test runs on one thread (tests/conftest.py), so pytest-xdist runs one test process per
# core, a file's tests in one process (its module fixtures built once). ABC_TEST_WORKERS=N sets the
# count; 0, or -n / -p no:xdist among the arguments, runs everything in this process.
workers=("-n" "${ABC_TEST_WORKERS:-$(nproc 2>/dev/null || echo 1)}" "--dist" "loadfile")
for arg in "$@"; do
    case "$arg" in -n|-n*|--numprocesses*|no:xdist) workers=() ;; esac
done
if [ "${ABC_TEST_WORKERS:-}" = 0 ] || ! python -c 'import xdist' 2>/dev/null; then
    workers=()
fi

# The 15 slowest tests are printed so that a growing CI time shows where it goes.
set +e
python -m pytest -q --durations=15 "${workers[@]}" "${targets[@]}" "$@" 2>&1 | drop_nanobind_leak_report
status=${PIPESTATUS[0]}
set -e

# pytest exits 5 when it collected no tests (a mistyped -k or path): that is a failure, not a pass.
if [ "$status" -eq 5 ]; then
    log "pytest collected no tests: check the -k expression or the paths given"
fi
exit "$status"
