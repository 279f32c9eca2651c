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
#   --nproc-per-node G  processes (GPUs; torchrun on one node) [all visible, or 1]
#   --nnodes N          nodes: fine-tuning runs on one node, only 1 is accepted [1]
#   --max-sentences S   sentences per GPU per step [the task's batch / G]; the task's batch is kept
#                       whatever G and S: --update-freq = batch / (G x S), which must be whole
#   --cpu               run on CPU (tests; no fp16)
#   --dry-run           print the command and exit
#   -- ARGS             passed to fairseq-train as is (e.g. -- --max-update 10)
#   -h, --help          this text
# Deprecated alias: --gpus (--nproc-per-node). The flag names are those of every launcher of
# scripts/lm, scripts/mt and scripts/roberta.
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
answer_help "$@"  # before TASK is looked for
original_args=("$@")
case "${1:-}" in ""|-*) die "TASK is required as the first argument (see --help)" ;; esac
task="$1"; shift
checkpoint="" attn="abc" memory=64 arch="abc_roberta_base" data_root="data-bin/glue" save_dir="" seed=1 cpu=0 dry_run=0
gpus="" max_sentences=""
extra=()
one_node() {  # --nnodes: accepted for the launchers' shared flags, but only as 1
    [ "${1:-}" = 1 ] || die "--nnodes: fine-tuning runs on one node (--nnodes 1), got '${1:-}'"
}
flags=(
    "--checkpoint checkpoint a file" "--attn attn a name" "--memory memory a number" "--arch arch a name"
    "--data-root data_root a directory" "--save-dir save_dir a directory" "--seed seed a number"
    "--nproc-per-node gpus a number" "--gpus >--nproc-per-node" "--nnodes @one_node"
    "--max-sentences max_sentences a number" "--cpu cpu=1" "--dry-run dry_run=1"
    "-- extra fairseq-train arguments go after --"
)
parse_flags flags "$@"

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
[ -f "$checkpoint" ] || [ "$dry_run" = 1 ] || die "--checkpoint $checkpoint does not exist"
[[ "$memory" =~ ^[1-9][0-9]*$ ]] || die "--memory must be a positive integer, got '$memory'"
data="$data_root/$task-bin"
[ -d "$data/input0" ] || [ "$dry_run" = 1 ] || die "$data/input0 is missing: run bash data_prep/glue/prepare.sh --dest $data_root --tasks $task"
save_dir="${save_dir:-checkpoints/glue/${attn}_${memory}/$task}"

# Keep the task's batch (hp[1] sentences per update) whatever the number of GPUs.
if [ -z "$gpus" ]; then
    if [ "$cpu" = 1 ]; then gpus=1
    else gpus="$(python -c 'import torch; print(max(1, torch.cuda.device_count()))' 2>/dev/null || echo 1)"; fi
fi
posint --nproc-per-node "$gpus"
[ $((hp[1] % gpus)) = 0 ] || [ -n "$max_sentences" ] || die "the $task batch of ${hp[1]} sentences does not split \
over $gpus GPUs; give --max-sentences S with ${hp[1]} a multiple of $gpus x S"
max_sentences="${max_sentences:-$((hp[1] / gpus))}"
posint --max-sentences "$max_sentences"
[ $((hp[1] % (gpus * max_sentences))) = 0 ] || die "the $task batch of ${hp[1]} sentences is not a multiple of \
$gpus GPU(s) x --max-sentences $max_sentences"
update_freq=$((hp[1] / (gpus * max_sentences)))

args=(
    "$data" --user-dir "$repo/abc_fairseq"
    --restore-file "$checkpoint" --reset-optimizer --reset-dataloader --reset-meters
    --task sentence_prediction --criterion sentence_prediction --num-classes "${hp[4]}"
    --init-token 0 --separator-token 2 --max-positions 512 --shorten-method truncate
    --arch "$arch" --encoder-attn "$attn" --encoder-memory "$memory"
    --dropout 0.1 --attention-dropout 0.1 --weight-decay 0.1
    --optimizer adam --adam-betas "(0.9,0.98)" --adam-eps 1e-06 --clip-norm 0.0
    --lr-scheduler polynomial_decay --lr "${hp[0]}" --total-num-update "${hp[2]}" --warmup-updates "${hp[3]}"
    --batch-size "$max_sentences" --update-freq "$update_freq" --required-batch-size-multiple 1
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
if [ "$cpu" = 1 ]; then args+=(--cpu); else args+=(--fp16 --fp16-init-scale 4 --threshold-loss-scale 1 --fp16-scale-window 128); fi
args+=("${extra[@]}")

launcher=(python -m fairseq_cli.train)
[ "$gpus" = 1 ] || launcher=(torchrun --standalone --nproc_per_node "$gpus" -m fairseq_cli.train)
if [ "$dry_run" = 1 ]; then
    printf '%q ' "${launcher[@]}" "${args[@]}"; echo
    exit 0
fi
# The save dir is this run's own (SAVE_DIR/.run) and used by one run at a time (SAVE_DIR/.lock).
claim_dir "$save_dir" glue-finetune "task=$task checkpoint=$checkpoint attn=$attn memory=$memory arch=$arch seed=$seed"
take_lock "$save_dir" "${original_args[@]}"
exec "${launcher[@]}" "${args[@]}"
