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
#   --nproc-per-node G  processes per node [with --cpu 1, else the GPUs of CUDA_VISIBLE_DEVICES,
#                       else of nvidia-smi -L]
#   --nnodes M          nodes [1]; more run inside a SLURM allocation: submit
#                       scripts/roberta/pretrain_mlm.sbatch (srun + torchrun, c10d rendezvous)
#   --rdzv-port P       the rendezvous port on the first node (several nodes) [29500]
#   --batch-seqs B      sequences per update [2048], held exactly on every G x M by the launchers'
#                       one rule: B / (G x M x update_freq) sequences per process and step, at
#                       most S, update_freq the smallest that allows it (1 GPU: 16 x 128; 8: 16 x
#                       16; 128: 16 x 1); a layout that cannot hold B is refused with the flags to
#                       change, unless --allow-batch-mismatch
#   --max-sentences S   the most sequences per process per step [16]
#   --total-updates U   updates [125000]     --warmup-updates W  [10000]     --lr LR  [0.0005]
#   --allow-batch-mismatch  train the nearest batch where B cannot be held exactly (a warning
#                       says which)
#   --cpu               run on CPU (tests; no fp16; gloo with several processes)
#   --dry-run           print the command and exit
#   -- ARGS             anything after -- goes to fairseq-train as is
#   -h, --help          this text
# The launching flags are those of every training recipe (scripts/lib/launch.py, the one launcher:
# fairseq-train, torchrun on one node, srun + torchrun on several); deprecated aliases: --nodes
# (--nnodes), --gpus, --cpu-procs, --nproc (--nproc-per-node).
#
# Hyperparameters are RoBERTa-base's (Liu et al.; fairseq's pretraining recipe) as the paper
# states: 12 layers, 12 heads, dim 768, FFN 3072, dropout 0.1, 512 tokens per sample, batch 2048
# sequences, Adam (0.9, 0.98) eps 1e-6, weight decay 0.01, peak lr 5e-4 with polynomial decay.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SCRIPT_NAME=pretrain_mlm
# shellcheck source=scripts/lib/launcher.sh
. "$repo/scripts/lib/launcher.sh"
data="" restore="none" attn="abc" memory=64 arch="abc_roberta_base" save_dir=""
batch_seqs=2048 max_sentences=16 total_updates=125000 warmup_updates=10000 lr=0.0005
extra=()
flags=(
    "${LAUNCH_FLAGS[@]}"
    "--data data a path" "--restore restore a file" "--attn attn a name" "--memory memory a number"
    "--arch arch a name" "--save-dir save_dir a directory"
    "--batch-seqs batch_seqs a number" "--max-sentences max_sentences a number"
    "--total-updates total_updates a number" "--warmup-updates warmup_updates a number" "--lr lr"
    "-- extra fairseq-train arguments go after --"
)
parse_flags flags "$@"
[ -n "$data" ] || die "--data is required (prepare it with data_prep/mlm/prepare.sh)"
for pair in "--memory:$memory" "--batch-seqs:$batch_seqs" "--max-sentences:$max_sentences" \
            "--total-updates:$total_updates"; do
    posint "${pair%%:*}" "${pair#*:}"
done
nonneg_int --warmup-updates "$warmup_updates"
save_dir="${save_dir:-checkpoints/mlm_${attn}_${memory}}"

train_args=(
    "$data" --user-dir "$repo/abc_fairseq"
    --task masked_lm --criterion masked_lm --arch "$arch"
    --encoder-attn "$attn" --encoder-memory "$memory"
    --sample-break-mode complete --tokens-per-sample 512
    --optimizer adam --adam-betas "(0.9,0.98)" --adam-eps 1e-6 --clip-norm 0.0
    --lr-scheduler polynomial_decay --lr "$lr" --warmup-updates "$warmup_updates" --total-num-update "$total_updates"
    --dropout 0.1 --attention-dropout 0.1 --weight-decay 0.01 --max-update "$total_updates"
    --skip-invalid-size-inputs-valid-test
    --save-dir "$save_dir" --tensorboard-logdir "$save_dir/tensorboard" --log-file "$save_dir/train.log"
    --log-format simple --log-interval 100
)
if [ "$restore" != "none" ]; then
    train_args+=(--restore-file "$restore" --reset-optimizer --reset-dataloader --reset-meters)
fi
[ "$cpu" = 1 ] || train_args+=(--fp16)
LAUNCH_OPTS+=(--per-process-flag=--max-sentences --target-flag=--batch-seqs)
plan_launch sentences "$batch_seqs" "$max_sentences" scripts/roberta/pretrain_mlm.sbatch "${train_args[@]}" \
    -- "${extra[@]}"

IFS=: read -r -a shard_dirs <<< "$data"
for d in "${shard_dirs[@]}"; do
    [ -f "$d/dict.txt" ] || die "--data: $d has no dict.txt (not a binarised corpus)"
done
[ "$restore" = "none" ] || [ -f "$restore" ] || die "--restore $restore does not exist (download roberta.base, or pass --restore none)"
# The save dir is this run's own (SAVE_DIR/.run) and used by one run at a time (SAVE_DIR/.lock).
claim_launch "$save_dir" mlm-pretrain "attn=$attn memory=$memory arch=$arch restore=$restore"
exec_launch
