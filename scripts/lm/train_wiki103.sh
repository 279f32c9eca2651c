#!/usr/bin/env bash
# Train one WikiText-103 language model of the paper's Table 2.
#
#   bash scripts/lm/train_wiki103.sh --row ROW [options] [-- extra fairseq-train flags]
#
# ROW names an experiment of scripts/lm/rows.tsv (base, linformer, abc_rd, abc_n32, abc_n64, and
# the 32-layer base_32l, elu_32l, rfa_32l, t2r_32l, abc_n64_32l). Flags after '--' go to
# fairseq-train last, so they override anything set here (e.g. '-- --max-update 1000').
#
# Launching: scripts/lib/launch.py, the launcher of every training recipe (its --help has the
# details). One process runs fairseq-train; --nproc-per-node N > 1 runs torchrun on one node;
# --nnodes N > 1 runs srun + torchrun (c10d rendezvous) inside a SLURM allocation: submit
# scripts/lm/train_wiki103.sbatch with the same arguments (outside an allocation the launcher
# refuses and prints the sbatch command; a dry run shows the command with placeholders).
#
# Batch: the paper's 64 segments x 512 tokens = 32768 tokens per update (--batch-tokens), held
# exactly on every process count by the launchers' one rule (scripts/lib/launch.py --help):
#   tokens per process = batch tokens / (processes x update_freq), whole 512-token segments, at
#   most --max-tokens, update_freq the smallest that allows it
# (1 GPU: 8192 x 4; 4 GPUs: 8192 x 1; 8: 4096 x 1; 32: 1024 x 1). A layout that cannot hold it
# (more than 64 processes, or a count that does not divide the 64 segments) is refused with the
# flags to change, unless --allow-batch-mismatch.
#
# Optimisation, as fairseq's Baevski & Auli WikiText-103 recipe (fairseq
# examples/language_model/README.adaptive_inputs.md) and Table 9 of the paper (lr 1.0):
# NAG, lr 1.0 with a cosine schedule (period 270k updates, t-mult 2, shrink 0.75) after 16k
# linear warm-up updates from 1e-7, min lr 1e-4, stop below 1e-9, 286k updates, clip norm 0.1,
# adaptive softmax loss.
#
# Resuming: checkpoints go to --save-dir; rerunning the same command continues from its
# checkpoint_last.pt (fairseq's default), and does nothing once --max-update is reached.
# The save dir is this row's own: one that holds another row's run or files of something else is
# refused (SAVE_DIR/.run names the row), and so is one in use by a live run (SAVE_DIR/.lock).
#
# Options:
#   --row ROW            experiment (required)
#   --data DIR           binarised data (default <repo>/data-bin/wikitext-103/bin, made by
#                        data_prep/wikitext/prepare.sh)
#   --save-dir DIR       checkpoints (default <repo>/checkpoints/lm/ROW)
#   --nproc-per-node N   processes per node (default: with --cpu 1, else the GPUs of
#                        CUDA_VISIBLE_DEVICES, else of nvidia-smi -L)
#   --nnodes N           nodes (default 1; more run inside a SLURM allocation)
#   --rdzv-port P        the rendezvous port on the first node (several nodes; default 29500)
#   --max-tokens N       the most tokens per process and forward pass (default 8192); each process
#                        takes whole 512-token segments
#   --batch-tokens N     tokens per update (default 32768 = 64 x 512, the paper's batch)
#   --allow-batch-mismatch  where the batch cannot be held exactly, train the nearest one (a
#                        warning says which) instead of refusing
#   --cpu                train on CPU (small runs; gloo with several processes)
#   --no-fp16            GPU training in fp32 (default: --fp16, as Baevski & Auli)
#   --no-tensorboard     do not write TensorBoard logs (default: SAVE_DIR/tensorboard)
#   --dry-run            print the command instead of running it
#   -h, --help           this help
# Deprecated aliases (every launcher): --nodes (--nnodes), --gpus, --cpu-procs, --nproc
# (--nproc-per-node).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
SCRIPT_NAME=train_wiki103  # the name of its messages
# shellcheck source=scripts/lm/common.sh
. "$here/common.sh"
# shellcheck source=scripts/lib/launcher.sh
. "$repo/scripts/lib/launcher.sh"

row="" data="$repo/data-bin/wikitext-103/bin" save_dir="" max_tokens=8192
batch_tokens=$((64 * TOKENS_PER_SAMPLE)) fp16=1 tensorboard=1
extra=()
flags=(
    "${LAUNCH_FLAGS[@]}"
    "--row row an experiment name" "--data data a directory" "--save-dir save_dir a directory"
    "--max-tokens max_tokens a number" "--batch-tokens batch_tokens a number"
    "--no-tensorboard tensorboard=0" "--no-fp16 fp16=0"
    "-- extra fairseq flags go after '--'"
)
parse_flags flags "$@"
[ -n "$row" ] || die "--row is required; one of: $(lm_rows | tr '\n' ' ')"
lm_row "$row"
posint --max-tokens "$max_tokens"
posint --batch-tokens "$batch_tokens"
# Each process takes whole segments, at least one.
LAUNCH_OPTS+=(--quantum "$TOKENS_PER_SAMPLE" --per-process-flag=--max-tokens --target-flag=--batch-tokens)

# A dry run needs no data: it shows the command a prepared --data would get.
[ ! -f "$data/dict.txt" ] || data="$(cd "$data" && pwd)"
save_dir="${save_dir:-$repo/checkpoints/lm/$row}"

args=(
    "$data"
    --user-dir "$repo/abc_fairseq"
    --task language_modeling --tokens-per-sample "$TOKENS_PER_SAMPLE" --sample-break-mode none
    --arch "$ROW_ARCH" "${ROW_FLAGS[@]}"
    --criterion adaptive_loss
    --optimizer nag --lr 1.0 --lr-scheduler cosine --lr-period-updates 270000 --t-mult 2
    --lr-shrink 0.75 --warmup-updates 16000 --warmup-init-lr 1e-07 --min-lr 0.0001
    --stop-min-lr 1e-09 --max-update 286000 --clip-norm 0.1
    --seed 1 --skip-invalid-size-inputs-valid-test
    # fairseq's adaptive softmax loss refuses PyTorch DDP (even with one process); Baevski & Auli
    # train with the legacy one (then called no_c10d).
    --ddp-backend legacy_ddp
    --save-dir "$save_dir" --log-format simple --log-interval 100
)
[ "$tensorboard" = 0 ] || args+=(--tensorboard-logdir "$save_dir/tensorboard")
[ "$cpu" = 1 ] || [ "$fp16" = 0 ] || args+=(--fp16)  # as Baevski & Auli
plan_launch tokens "$batch_tokens" "$max_tokens" scripts/lm/train_wiki103.sbatch "${args[@]}" -- "${extra[@]}"

[ -f "$data/dict.txt" ] || die "--data $data has no dict.txt (run data_prep/wikitext/prepare.sh first)"
# One run per save dir: it must be this row's (or new), and not in use by a live run.
claim_launch "$save_dir" lm-train "--row $row"
log "$row: $ROW_LABEL (n=$ROW_N, $ROW_SETTING)"
exec_launch
