#!/usr/bin/env bash
# Fine-tune an (ABC) RoBERTa checkpoint on one GLUE task with RoBERTa's published per-task
# hyperparameters, evaluating on the dev set after every epoch.
#
#   bash scripts/roberta/finetune_glue.sh TASK --checkpoint checkpoints/abc64_mlm/checkpoint_best.pt \
#       --attn abc --memory 64 [--data-root data-bin/glue] [--save-dir DIR]
#
# TASK: MNLI QNLI QQP SST-2 RTE MRPC CoLA STS-B (data from data_prep/glue/prepare.sh).
# Options (defaults in brackets):
#   --checkpoint FILE   the pretrained model (continued-MLM abc_roberta checkpoint, a converted one,
#                       or the original roberta.base/model.pt with --attn softmax)
#   --attn NAME / --memory N   encoder attention and slots; must match the checkpoint [abc / 64]
#   --arch NAME         [abc_roberta_base]
#   --data-root DIR     where TASK-bin lives [data-bin/glue]
#   --save-dir DIR      checkpoints and train.log [checkpoints/glue/ATTN_N/TASK]
#   --seed S            [1]
#   --nproc-per-node G  processes per node [with --cpu 1, else the GPUs of CUDA_VISIBLE_DEVICES,
#                       else of nvidia-smi -L]
#   --nnodes N          nodes [1]; more run inside a SLURM allocation: submit
#                       scripts/roberta/finetune_glue.sbatch (srun + torchrun, c10d rendezvous)
#   --rdzv-port P       the rendezvous port on the first node (several nodes) [29500]
#   --max-sentences S   the most sentences per process per step [the task's batch]; the task's
#                       batch is held exactly by the launchers' one rule: batch / (processes x
#                       update_freq) sentences per process, at most S, update_freq the smallest
#                       that allows it; a layout that cannot hold it (e.g. 32 processes for a
#                       batch of 16) is refused with the flags to change, unless
#                       --allow-batch-mismatch (the nearest batch, with a warning)
#   --cpu               run on CPU (tests; no fp16; gloo with several processes)
#   --dry-run           print the command and exit
#   -- ARGS             passed to fairseq-train as is (e.g. -- --max-update 10)
#   -h, --help          this text
# The launching flags are those of every training recipe (scripts/lib/launch.py, the one launcher:
# fairseq-train, torchrun on one node, srun + torchrun on several); deprecated aliases: --nodes
# (--nnodes), --gpus, --cpu-procs, --nproc (--nproc-per-node).
#
# Per-task values (RoBERTa's GLUE recipe, Liu et al. 2019 / fairseq's examples/roberta):
#   task   lr    batch  total updates  warmup  classes
#   MNLI   1e-5  32     123873         7432    3
#   QNLI   1e-5  32     33112          1986    2
#   QQP    1e-5  32     113272         28318   2
#   RTE    2e-5  16     2036           122     2
#   SST-2  1e-5  32     20935          1256    2
#   MRPC   1e-5  16     2296           137     2
#   CoLA   1e-5  16     5336           320     2
#   STS-B  2e-5  16     3598           214     1 (regression)
# Shared: 10 epochs, Adam (0.9, 0.98) eps 1e-6, weight decay 0.1, polynomial decay, dropout 0.1,
# max 512 positions. The classification head is new and the LM head unused, so the run (several
# GPUs included) uses --find-unused-parameters. The dev metrics of every epoch are in
# SAVE_DIR/train.log (MNLI: matched 'valid' and mismatched 'valid1'; STS-B: Pearson and Spearman;
# CoLA: MCC); collect them with scripts/roberta/collect_glue.py.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SCRIPT_NAME=finetune_glue
# shellcheck source=scripts/lib/launcher.sh
. "$repo/scripts/lib/launcher.sh"
checkpoint="" attn="abc" memory=64 arch="abc_roberta_base" data_root="data-bin/glue" save_dir="" seed=1
max_sentences=""
extra=() words=()
flags=(
    "${LAUNCH_FLAGS[@]}" "+ words"
    "--checkpoint checkpoint a file" "--attn attn a name" "--memory memory a number" "--arch arch a name"
    "--data-root data_root a directory" "--save-dir save_dir a directory" "--seed seed a number"
    "--max-sentences max_sentences a number"
    "-- extra fairseq-train arguments go after --"
)
parse_flags flags "$@"
[ "${#words[@]}" -gt 0 ] || die "TASK is required (the first argument; see --help)"
[ "${#words[@]}" = 1 ] || die "one TASK per run, got '${words[*]}'"
task="${words[0]}"

#            lr     batch total   warmup classes
case "$task" in
    MNLI)  hp=(1e-5 32 123873 7432 3) ;;
    QNLI)  hp=(1e-5 32 33112 1986 2) ;;
    QQP)   hp=(1e-5 32 113272 28318 2) ;;
    RTE)   hp=(2e-5 16 2036 122 2) ;;
    SST-2) hp=(1e-5 32 20935 1256 2) ;;
    MRPC)  hp=(1e-5 16 2296 137 2) ;;
    CoLA)  hp=(1e-5 16 5336 320 2) ;;
    STS-B) hp=(2e-5 16 3598 214 1) ;;
    *) die "unknown TASK '$task'; choose from MNLI QNLI QQP RTE SST-2 MRPC CoLA STS-B" ;;
esac
[ -n "$checkpoint" ] || die "--checkpoint is required"
posint --memory "$memory"
[ -z "$max_sentences" ] || posint --max-sentences "$max_sentences"
data="$data_root/$task-bin"
save_dir="${save_dir:-checkpoints/glue/${attn}_${memory}/$task}"

args=(
    "$data" --user-dir "$repo/abc_fairseq"
    --restore-file "$checkpoint" --reset-optimizer --reset-dataloader --reset-meters
    --task sentence_prediction --criterion sentence_prediction --num-classes "${hp[4]}"
    --init-token 0 --separator-token 2 --max-positions 512 --shorten-method truncate
    --arch "$arch" --encoder-attn "$attn" --encoder-memory "$memory"
    --dropout 0.1 --attention-dropout 0.1 --weight-decay 0.1
    --optimizer adam --adam-betas "(0.9,0.98)" --adam-eps 1e-06 --clip-norm 0.0
    --lr-scheduler polynomial_decay --lr "${hp[0]}" --total-num-update "${hp[2]}" --warmup-updates "${hp[3]}"
    --required-batch-size-multiple 1
    --max-epoch 10 --max-update "${hp[2]}" --find-unused-parameters
    --seed "$seed" --save-dir "$save_dir" --no-epoch-checkpoints --no-last-checkpoints
    --log-format simple --log-interval 100 --log-file "$save_dir/train.log"
    --tensorboard-logdir "$save_dir/tensorboard"
)
if [ "$task" = "STS-B" ]; then
    args+=(--regression-target --report-pearson-and-spearman --best-checkpoint-metric loss)
else
    args+=(--best-checkpoint-metric accuracy --maximize-best-checkpoint-metric)
fi
[ "$task" != "CoLA" ] || args+=(--report-mcc)
[ "$task" != "MNLI" ] || args+=(--valid-subset "valid,valid1")
[ "$cpu" = 1 ] || args+=(--fp16 --fp16-init-scale 4 --threshold-loss-scale 1 --fp16-scale-window 128)
LAUNCH_OPTS+=(--per-process-flag=--max-sentences)
plan_launch sentences "${hp[1]}" "$max_sentences" scripts/roberta/finetune_glue.sbatch "${args[@]}" -- "${extra[@]}"

[ -f "$checkpoint" ] || die "--checkpoint $checkpoint does not exist"
[ -d "$data/input0" ] || die "$data/input0 is missing: run bash data_prep/glue/prepare.sh --dest $data_root --tasks $task"
# The save dir is this run's own (SAVE_DIR/.run) and used by one run at a time (SAVE_DIR/.lock).
claim_launch "$save_dir" glue-finetune "task=$task checkpoint=$checkpoint attn=$attn memory=$memory arch=$arch seed=$seed"
exec_launch
