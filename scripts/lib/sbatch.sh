# shellcheck shell=bash
# The body of every recipe's .sbatch (sourced by it, never executed), on top of
# scripts/lib/common.sh:
#
#   sbatch_run REPO SCRIPT ARGS...   answer --help with the .sbatch's header; inside a SLURM job,
#                                    run REPO/SCRIPT --nnodes <the allocation's nodes> ARGS
#
# The recipe then runs once, on the job's first node: it claims and locks its save dir and starts
# srun + torchrun with a c10d rendezvous at that node (scripts/lib/launch.py), one torchrun per
# node. A --nnodes among ARGS comes later and wins.

# shellcheck source=scripts/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

sbatch_run() {  # REPO SCRIPT ARGS...
    local repo="$1" script="$2"
    shift 2
    answer_help "$@"
    [ -n "${SLURM_JOB_ID:-}" ] || die "not inside a SLURM job: submit this file with sbatch (see --help), or run $script"
    [ -f "$repo/$script" ] || die "$repo/$script not found: submit from the repository root"
    exec bash "$repo/$script" --nnodes "${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-1}}" "$@"
}
