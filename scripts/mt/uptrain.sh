#!/usr/bin/env bash
# Continue training ("uptrain") a pretrained translation model converted to bounded-memory attention.
#
#   python -m abc_fairseq.convert --input checkpoints/mt/softmax/checkpoint_best.pt --output abc.pt \
#       --decoder-cross-attn abc --decoder-cross-memory 32 --decoder-self-attn abc --decoder-self-memory 8
#   bash scripts/mt/uptrain.sh --checkpoint abc.pt --data data-bin/wmt14_en_de/bin \
#       --save-dir checkpoints/mt/uptrain_abc [-- extra fairseq-train flags]
#
# The model is the checkpoint's: its architecture, dimensions, embedding sharing, attention flags,
# languages and maximum positions are read from it (python -m abc_fairseq.convert.train_flags);
# flags after '--' go to fairseq-train last and win. Criterion: label-smoothed cross entropy (0.1).
#
# Restoring: the first run starts from --checkpoint with
#   --restore-file CHECKPOINT --reset-optimizer --reset-dataloader --reset-meters --reset-lr-scheduler
# (the weights only: the optimizer, the schedule, the data position and the update count start
# afresh, so --max-update counts the uptraining updates). Rerunning the same command resumes:
# once SAVE_DIR holds checkpoint_last.pt that file is the run (model, optimizer, schedule, data
# position) and --checkpoint is not restored again (fairseq restores an explicit --restore-file
# on every start, which would restart the run). The save dir is this run's own (SAVE_DIR/.run
# names the checkpoint; another run's or a folder of other files is refused) and one run at a
# time uses it (SAVE_DIR/.lock).
#
# Optimisation: as scripts/mt/train.sh (Adam (0.9, 0.98) eps 1e-9, inverse square-root schedule
# with --warmup linear warm-up updates from 1e-7 to --lr, no clipping, label smoothing 0.1); the
# defaults of --lr, --warmup and --max-update are ours, a starting point (the paper uptrains
# only RoBERTa).
#
# Launching and batch: scripts/lib/launch.py, the one launcher (its --help): one process runs
# fairseq-train; --nproc-per-node N > 1 runs torchrun on one node; --nnodes N > 1 runs srun +
# torchrun inside a SLURM allocation (submit scripts/mt/uptrain.sbatch with the same arguments).
# --total-tokens per update are held on every process count by the launchers' one rule:
#   tokens per process = total tokens / (processes x update_freq), at most --max-tokens, with
#   update_freq the smallest that allows it; a layout that cannot hold the total exactly is refused
#   with the flags to change, unless --allow-batch-mismatch
#
# Options:
#   --checkpoint FILE    the converted checkpoint (python -m abc_fairseq.convert; required)
#   --data DIR           binarised translation data with its dict.SRC.txt / dict.TGT.txt (required)
#   --save-dir DIR       checkpoints and logs (required)
#   --lr X               peak learning rate (default 5e-4)
#   --warmup N           warm-up updates (default 1000)
#   --max-update N       uptraining updates (default 20000)
#   --seed N             (default 1)
#   --max-tokens N       the most tokens per process and forward pass (default 4096)
#   --total-tokens N     tokens per update (default 32768)
#   --nproc-per-node N   processes per node (default: with --cpu 1, else the GPUs of
#                        CUDA_VISIBLE_DEVICES, else of nvidia-smi -L)
#   --nnodes N           nodes (default 1; more run inside a SLURM allocation)
#   --rdzv-port P        the rendezvous port on the first node (several nodes; default 29500)
#   --allow-batch-mismatch  train the nearest batch where --total-tokens cannot be held exactly
#   --cpu                train on CPU (gloo with several processes)
#   --no-tensorboard     no TensorBoard logs (default: SAVE_DIR/tensorboard)
#   --dry-run            print the command instead of running it (without the checkpoint, the
#                        model flags are shown as --arch abc_transformer)
#   -h, --help           this help
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
SCRIPT_NAME=uptrain.sh
# shellcheck source=scripts/lib/launcher.sh
. "$repo/scripts/lib/launcher.sh"
# shellcheck source=scripts/lib/uptrain.sh
. "$repo/scripts/lib/uptrain.sh"

max_tokens=4096 total_tokens=32768 tensorboard=1
extra=()
flags=(
    "${LAUNCH_FLAGS[@]}"
    "${UPTRAIN_FLAGS[@]}"
    "--max-tokens max_tokens a number" "--total-tokens total_tokens a number" "--no-tensorboard tensorboard=0"
    "-- extra fairseq-train arguments go after --"
)
parse_flags flags "$@"
check_uptrain_flags "binarised translation data"
posint --max-tokens "$max_tokens"
posint --total-tokens "$total_tokens"
restore_args abc_transformer

# --required-batch-size-multiple 1: as scripts/mt/train.sh (small development sets keep every sentence).
args=(
    "$data" --user-dir "$repo/abc_fairseq" --task translation "${run_args[@]}"
    --criterion label_smoothed_cross_entropy --label-smoothing 0.1
    --optimizer adam --adam-betas "(0.9, 0.98)" --adam-eps 1e-09 --clip-norm 0.0
    --lr-scheduler inverse_sqrt --warmup-updates "$warmup" --warmup-init-lr 1e-07 --lr "$lr"
    --max-update "$max_update" --seed "$seed" --required-batch-size-multiple 1
    --save-dir "$save_dir" --log-format simple --log-interval 100
)
[ "$tensorboard" = 0 ] || args+=(--tensorboard-logdir "$save_dir/tensorboard")
LAUNCH_OPTS+=(--per-process-flag=--max-tokens --target-flag=--total-tokens)
plan_launch tokens "$total_tokens" "$max_tokens" scripts/mt/uptrain.sbatch "${args[@]}" -- "${extra[@]}"

compgen -G "$data/dict.*.txt" >/dev/null || die "--data $data has no dict.*.txt (binarised translation data)"
claim_launch "$save_dir" mt-uptrain "checkpoint=$checkpoint"
exec_launch
