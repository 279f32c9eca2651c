#!/usr/bin/env bash
# Continue training ("uptrain") a pretrained language model converted to bounded-memory attention.
#
#   python -m abc_fairseq.convert --input checkpoints/lm/base/checkpoint_best.pt --output abc.pt \
#       --decoder-self-attn gsa --decoder-self-memory 64
#   bash scripts/lm/uptrain.sh --checkpoint abc.pt --data data-bin/wikitext-103/bin \
#       --save-dir checkpoints/lm/uptrain_gsa64 [-- extra fairseq-train flags]
#
# The model is the checkpoint's: its architecture, dimensions, attention flags and
# --tokens-per-sample are read from it (python -m abc_fairseq.convert.train_flags); flags after
# '--' go to fairseq-train last and win. The criterion is adaptive_loss for a model with an
# adaptive softmax (the WikiText-103 models), else cross_entropy.
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
# Optimisation (ours, a starting point; the paper uptrains only RoBERTa): Adam (0.9, 0.98),
# eps 1e-8, inverse square-root schedule with --warmup linear warm-up updates from 1e-7 to --lr,
# clip norm 0.1, legacy DDP (fairseq's adaptive softmax loss refuses PyTorch DDP).
#
# Launching and batch: scripts/lib/launch.py, the one launcher (its --help): one process runs
# fairseq-train; --nproc-per-node N > 1 runs torchrun on one node; --nnodes N > 1 runs srun +
# torchrun inside a SLURM allocation (submit scripts/lm/uptrain.sbatch with the same arguments).
# --batch-tokens per update are held exactly on every process count by the launchers' one rule
# (tokens per process = batch tokens / (processes x update_freq), whole segments of the model's
# --tokens-per-sample, at most --max-tokens); a layout that cannot hold them is refused with the
# flags to change, unless --allow-batch-mismatch.
#
# Options:
#   --checkpoint FILE    the converted checkpoint (python -m abc_fairseq.convert; required)
#   --data DIR           binarised language-modelling data with its dict.txt (required)
#   --save-dir DIR       checkpoints and logs (required)
#   --lr X               peak learning rate (default 5e-4)
#   --warmup N           warm-up updates (default 1000)
#   --max-update N       uptraining updates (default 20000)
#   --seed N             (default 1)
#   --max-tokens N       the most tokens per process and forward pass (default 8192)
#   --batch-tokens N     tokens per update (default 32768)
#   --nproc-per-node N   processes per node (default: with --cpu 1, else the GPUs of
#                        CUDA_VISIBLE_DEVICES, else of nvidia-smi -L)
#   --nnodes N           nodes (default 1; more run inside a SLURM allocation)
#   --rdzv-port P        the rendezvous port on the first node (several nodes; default 29500)
#   --allow-batch-mismatch  train the nearest batch where --batch-tokens cannot be held exactly
#   --cpu                train on CPU (gloo with several processes)
#   --no-fp16            GPU training in fp32 (default: --fp16)
#   --no-tensorboard     no TensorBoard logs (default: SAVE_DIR/tensorboard)
#   --dry-run            print the command instead of running it (without the checkpoint, the
#                        model flags are shown as --arch abc_lm)
#   -h, --help           this help
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
SCRIPT_NAME=uptrain.sh
# shellcheck source=scripts/lib/launcher.sh
. "$repo/scripts/lib/launcher.sh"
# shellcheck source=scripts/lib/uptrain.sh
. "$repo/scripts/lib/uptrain.sh"

max_tokens=8192 batch_tokens=32768 fp16=1 tensorboard=1
extra=()
flags=(
    "${LAUNCH_FLAGS[@]}"
    "${UPTRAIN_FLAGS[@]}"
    "--max-tokens max_tokens a number" "--batch-tokens batch_tokens a number"
    "--no-fp16 fp16=0" "--no-tensorboard tensorboard=0"
    "-- extra fairseq-train arguments go after --"
)
parse_flags flags "$@"
check_uptrain_flags "binarised language-modelling data"
posint --max-tokens "$max_tokens"
posint --batch-tokens "$batch_tokens"
restore_args abc_lm

criterion=cross_entropy
[[ " ${run_args[*]} " != *" --adaptive-softmax-cutoff "* ]] || criterion=adaptive_loss
args=(
    "$data" --user-dir "$repo/abc_fairseq" --task language_modeling "${run_args[@]}"
    --criterion "$criterion"
    --optimizer adam --adam-betas "(0.9, 0.98)" --adam-eps 1e-08 --clip-norm 0.1
    --lr-scheduler inverse_sqrt --warmup-updates "$warmup" --warmup-init-lr 1e-07 --lr "$lr"
    --max-update "$max_update" --seed "$seed" --skip-invalid-size-inputs-valid-test --ddp-backend legacy_ddp
    --save-dir "$save_dir" --log-format simple --log-interval 100
)
[ "$tensorboard" = 0 ] || args+=(--tensorboard-logdir "$save_dir/tensorboard")
[ "$cpu" = 1 ] || [ "$fp16" = 0 ] || args+=(--fp16)
# Each process takes whole segments of the model's --tokens-per-sample (fairseq's default 1024 when
# the checkpoint does not set it).
segment=1024
for i in "${!run_args[@]}"; do
    [ "${run_args[$i]}" != --tokens-per-sample ] || segment="${run_args[$((i + 1))]}"
done
LAUNCH_OPTS+=(--quantum "$segment" --per-process-flag=--max-tokens --target-flag=--batch-tokens)
plan_launch tokens "$batch_tokens" "$max_tokens" scripts/lm/uptrain.sbatch "${args[@]}" -- "${extra[@]}"

[ -f "$data/dict.txt" ] || die "--data $data has no dict.txt (binarised language-modelling data)"
claim_launch "$save_dir" lm-uptrain "checkpoint=$checkpoint"
exec_launch
