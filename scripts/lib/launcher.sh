# shellcheck shell=bash
# The launch steps of the training recipes of scripts/lm, scripts/mt and scripts/roberta (sourced,
# never executed), on top of scripts/lib/common.sh (parse_flags, locks, claim_dir). The command
# itself is built by scripts/lib/launch.py, the one launcher: its --help states the batch rule
# (--update-freq) and the launch shape (one process, torchrun on one node, srun + torchrun with a
# c10d rendezvous on several). A recipe is: parse its flags with LAUNCH_FLAGS among them, build
# its fairseq-train arguments, then
#
#   plan_launch UNIT TARGET PER_PROCESS SBATCH ARGS... [-- EXTRA...]
#       UNIT tokens or sentences, TARGET units per update (held exactly: launch.py's batch rule,
#       refused where it cannot be), PER_PROCESS the most units per process and pass (empty: the
#       target), SBATCH the recipe's .sbatch (named when several nodes need one), ARGS the data
#       and the recipe's flags, EXTRA the user's. Sets LAUNCH (the command, shell-quoted); with
#       --dry-run prints it and exits 0. A recipe states its batch constraints in LAUNCH_OPTS
#       before: --quantum Q (per-process units in multiples of Q), --min-per-process M, and the
#       flags that set the maximum and the target (--per-process-flag, --target-flag), which a
#       refusal names.
#   claim_launch SAVE_DIR KIND ID
#       SAVE_DIR becomes this run's (claim_dir: marked by SAVE_DIR/.run) and is locked (take_lock).
#   exec_launch
#       runs LAUNCH in place of the script (the project venv's tools when they are not on PATH).
#
# LAUNCH_FLAGS, the parse_flags entries every launcher shares, set (defaults here):
#   --nnodes N (nnodes=1), --nproc-per-node N (nproc: empty = launch.py's count), --cpu (cpu=1),
#   --dry-run (dry_run=1), --rdzv-port P (rdzv_port=29500), --allow-batch-mismatch
#   (allow_mismatch=1: train the nearest batch where the target cannot be held exactly, with a
#   warning; without it such a launch is refused); the deprecated aliases --nodes,
#   --gpus, --cpu-procs and --nproc. LAUNCH_OPTS takes further launch.py options
#   (--train-module MODULE). LAUNCH_ARGV holds the script's own arguments (this file is sourced
#   without arguments, so "$@" is still the script's), for messages and the lock.

# shellcheck source=scripts/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LAUNCH_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LAUNCH_REPO="$(cd "$LAUNCH_LIB/../.." && pwd)"
LAUNCH_ARGV=("$@")
LAUNCH_OPTS=()
LAUNCH=""
# The variables below are the shared flags' values, read by the sourcing recipe.
# shellcheck disable=SC2034
nnodes=1 nproc="" cpu=0 dry_run=0 rdzv_port=29500 allow_mismatch=0
# shellcheck disable=SC2034
LAUNCH_FLAGS=(
    "--nnodes nnodes a number" "--nproc-per-node nproc a number" "--cpu cpu=1" "--dry-run dry_run=1"
    "--rdzv-port rdzv_port a port" "--allow-batch-mismatch allow_mismatch=1"
    "--nodes >--nnodes" "--gpus >--nproc-per-node" "--cpu-procs >--nproc-per-node" "--nproc >--nproc-per-node"
)

plan_launch() {  # UNIT TARGET PER_PROCESS SBATCH ARGS... [-- EXTRA...]
    local unit="$1" target="$2" per_process="$3" sbatch="$4" opts=() argv=() arg
    shift 4
    for arg in "${LAUNCH_ARGV[@]}"; do  # the arguments to submit: the same, less --dry-run
        [ "$arg" = --dry-run ] || argv+=("$arg")
    done
    posint --nnodes "$nnodes"
    [ -z "$nproc" ] || posint --nproc-per-node "$nproc"
    posint --rdzv-port "$rdzv_port"
    opts=(--unit "$unit" --target "$target" --nnodes "$nnodes" --rdzv-port "$rdzv_port" --sbatch "$sbatch"
          --recipe-argv "$(printf '%q ' "${argv[@]}")" "${LAUNCH_OPTS[@]}")
    [ -z "$per_process" ] || opts+=(--per-process "$per_process")
    [ -z "$nproc" ] || opts+=(--nproc-per-node "$nproc")
    [ "$cpu" = 0 ] || opts+=(--cpu)
    [ "$dry_run" = 0 ] || opts+=(--dry-run)
    [ "$allow_mismatch" = 0 ] || opts+=(--allow-batch-mismatch)
    LAUNCH="$(python3 "$LAUNCH_LIB/launch.py" "${opts[@]}" -- "$@")" || exit 1
    if [ "$dry_run" = 1 ]; then
        printf '%s\n' "$LAUNCH"
        exit 0
    fi
}

claim_launch() {  # SAVE_DIR KIND ID
    claim_dir "$1" "$2" "$3"
    take_lock "$1" "${LAUNCH_ARGV[@]}"
    [ ! -f "$1/checkpoint_last.pt" ] || log "resuming from $1/checkpoint_last.pt"
}

exec_launch() {
    local cmd=() tool
    # LAUNCH is launch.py's shlex.join: POSIX quoting, which the shell reads back word for word.
    eval "cmd=($LAUNCH)"
    if ! command -v fairseq-train >/dev/null 2>&1; then
        tool="$(find_tool fairseq-train "$LAUNCH_REPO")" || exit 1
        PATH="$(dirname "$tool"):$PATH"
        export PATH
    fi
    need_tool "${cmd[0]}"
    export PYTHONPATH="$LAUNCH_REPO${PYTHONPATH:+:$PYTHONPATH}"  # for --train-module's modules
    exec "${cmd[@]}"
}
