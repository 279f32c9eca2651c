#!/usr/bin/env bash
# Continued MLM pretraining of RoBERTa-base with ABC (or Linformer, ...) self attention, warm
# started from a pretrained RoBERTa checkpoint (the paper's Section 5.3 / Table 11 setting).
#
#   bash scripts/roberta/pretrain_mlm.sh --data data-bin/mlm/shard0:data-bin/mlm/shard1 \
#       --restore roberta.base/model.pt --attn abc --memory 64 --save-dir checkpoints/abc64_mlm
#
# Options (defaults in brackets):
#   --data PATHS        binarised corpus (data_prep/mlm/prepare.sh), shards joined by ':'
#   --restore FILE      checkpoint to start from: the original roberta.base/model.pt (W_phi is
#                       added while loading) or one converted by abc_fairseq.convert_roberta;
#                       'none' trains from scratch [none]
#   --attn NAME         encoder attention: abc, linformer, softmax or any registered strategy [abc]
#   --memory N          memory slots n (the paper: 64 and 128) [64]
#   --arch NAME         abc_roberta_base or abc_roberta_large [abc_roberta_base]
#   --save-dir DIR      checkpoints; tensorboard logs go to DIR/tensorboard [checkpoints/mlm_ATTN_N]
#   --nproc-per-node G  processes (GPUs) per node [all visible GPUs, or 1]
#   --nnodes M          nodes; under SLURM the default is $SLURM_NNODES: submit
#                       scripts/roberta/pretrain_mlm.sbatch by hand, which runs this script once per
#                       node (srun) [1]
#   --batch-seqs B      sequences per update, kept whatever G x M: --update-freq is derived [2048]
#   --max-sentences S   sequences per GPU per step [16]
#   --total-updates U   updates [125000]     --warmup-updates W  [10000]     --lr LR  [0.0005]
#   --cpu               run on CPU (tests; no fp16)
#   --dry-run           print the command and exit
#   -h, --help          this text
# Deprecated aliases: --gpus (--nproc-per-node), --nodes (--nnodes). The flag names are those of
# every launcher of scripts/lm, scripts/mt and scripts/roberta.
#   -- ARGS             anything after -- goes to fairseq-train as is
#
# Hyperparameters are RoBERTa-base's (Liu et al.; fairseq's pretraining recipe) as the paper
# states: 12 layers, 12 heads, dim 768, FFN 3072, dropout 0.1, 512 tokens per sample, batch 2048
# sequences, Adam (0.9, 0.98) eps 1e-6, weight decay 0.01, peak lr 5e-4 with polynomial decay.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SCRIPT_NAME=pretrain_mlm
# shellcheck source=scripts/lib/launcher.sh
. "$repo/scripts/lib/launcher.sh"
original_args=("$@")
data="" restore="none" attn="abc" memory=64 arch="abc_roberta_base" save_dir="" gpus="" nodes="${SLURM_NNODES:-1}"
batch_seqs=2048 max_sentences=16 total_updates=125000 warmup_updates=10000 lr=0.0005 cpu=0 dry_run=0
extra=()
flags=(
    "--data data a path" "--restore restore a file" "--attn attn a name" "--memory memory a number"
    "--arch arch a name" "--save-dir save_dir a directory" "--nproc-per-node gpus a number"
    "--nnodes nodes a number" "--gpus >--nproc-per-node" "--nodes >--nnodes"
    "--batch-seqs batch_seqs a number" "--max-sentences max_sentences a number"
    "--total-updates total_updates a number" "--warmup-updates warmup_updates a number" "--lr lr"
    "--cpu cpu=1" "--dry-run dry_run=1" "-- extra fairseq-train arguments go after --"
)
parse_flags flags "$@"
[ -n "$data" ] || die "--data is required (prepare it with data_prep/mlm/prepare.sh)"
for pair in "memory:$memory" "nnodes:$nodes" "batch-seqs:$batch_seqs" "max-sentences:$max_sentences" \
            "total-updates:$total_updates"; do
    [[ "${pair#*:}" =~ ^[1-9][0-9]*$ ]] || die "--${pair%%:*} must be a positive integer, got '${pair#*:}'"
done
[[ "$warmup_updates" =~ ^[0-9]+$ ]] || die "--warmup-updates must be an integer >= 0, got '$warmup_updates'"
if [ "$nodes" -gt 1 ] && [ -z "${SLURM_JOB_ID:-}" ] && [ -z "${MASTER_ADDR:-}" ] && [ "$dry_run" = 0 ]; then
    die "--nnodes $nodes needs one launch per node: submit sbatch --nodes $nodes scripts/roberta/pretrain_mlm.sbatch ARGS (or set MASTER_ADDR and NODE_RANK on each node)"
fi
IFS=: read -r -a shard_dirs <<< "$data"
for d in "${shard_dirs[@]}"; do
    [ -f "$d/dict.txt" ] || [ "$dry_run" = 1 ] || die "--data: $d has no dict.txt (not a binarised corpus)"
done
if [ "$restore" != "none" ] && [ ! -f "$restore" ] && [ "$dry_run" = 0 ]; then
    die "--restore $restore does not exist (download roberta.base, or pass --restore none)"
fi
if [ -z "$gpus" ]; then
    if [ "$cpu" = 1 ]; then gpus=1
    else gpus="$(python -c 'import torch; print(max(1, torch.cuda.device_count()))' 2>/dev/null || echo 1)"; fi
fi
[[ "$gpus" =~ ^[1-9][0-9]*$ ]] || die "--nproc-per-node must be a positive integer, got '$gpus'"
save_dir="${save_dir:-checkpoints/mlm_${attn}_${memory}}"

# Keep batch_seqs sequences per update whatever the number of processes.
world=$((gpus * nodes))
per_step=$((max_sentences * world))
update_freq=$(((batch_seqs + per_step - 1) / per_step))
[ $((update_freq * per_step)) -eq "$batch_seqs" ] || printf 'pretrain_mlm: note: %d x %d x %d = %d sequences per update (asked %d)\n' \
    "$max_sentences" "$world" "$update_freq" $((update_freq * per_step)) "$batch_seqs" >&2

train_args=(
    "$data" --user-dir "$repo/abc_fairseq"
    --task masked_lm --criterion masked_lm --arch "$arch"
    --encoder-attn "$attn" --encoder-memory "$memory"
    --sample-break-mode complete --tokens-per-sample 512
    --optimizer adam --adam-betas "(0.9,0.98)" --adam-eps 1e-6 --clip-norm 0.0
    --lr-scheduler polynomial_decay --lr "$lr" --warmup-updates "$warmup_updates" --total-num-update "$total_updates"
    --dropout 0.1 --attention-dropout 0.1 --weight-decay 0.01
    --batch-size "$max_sentences" --update-freq "$update_freq" --max-update "$total_updates"
    --skip-invalid-size-inputs-valid-test
    --save-dir "$save_dir" --tensorboard-logdir "$save_dir/tensorboard" --log-file "$save_dir/train.log"
    --log-format simple --log-interval 100
)
if [ "$restore" != "none" ]; then
    train_args+=(--restore-file "$restore" --reset-optimizer --reset-dataloader --reset-meters)
fi
if [ "$cpu" = 1 ]; then train_args+=(--cpu); else train_args+=(--fp16); fi
train_args+=("${extra[@]}")

launcher=(python -m fairseq_cli.train)
if [ "$world" -gt 1 ]; then
    master_addr="${MASTER_ADDR:-}"
    if [ -z "$master_addr" ] && [ -n "${SLURM_JOB_NODELIST:-}" ]; then
        master_addr="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
    fi
    launcher=(torchrun --nnodes "$nodes" --nproc_per_node "$gpus" --node_rank "${SLURM_NODEID:-${NODE_RANK:-0}}"
              --master_addr "${master_addr:-127.0.0.1}" --master_port "${MASTER_PORT:-29500}"
              -m fairseq_cli.train)
fi
if [ "$dry_run" = 1 ]; then
    printf '%q ' "${launcher[@]}" "${train_args[@]}"; echo
    exit 0
fi
# The save dir is this run's own (SAVE_DIR/.run) and used by one run at a time (SAVE_DIR/.lock);
# with one launch per node, the first node claims and locks it for all.
if [ "${SLURM_NODEID:-${NODE_RANK:-0}}" = 0 ]; then
    claim_dir "$save_dir" mlm-pretrain "attn=$attn memory=$memory arch=$arch restore=$restore"
    take_lock "$save_dir" "${original_args[@]}"
fi
exec "${launcher[@]}" "${train_args[@]}"
