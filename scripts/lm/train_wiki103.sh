#!/usr/bin/env bash
# Train one WikiText-103 language model of the paper's Table 2.
#
#   bash scripts/lm/train_wiki103.sh --row ROW [options] [-- extra fairseq-train flags]
#
# ROW names an experiment of scripts/lm/rows.tsv (base, linformer, abc_rd, abc_n32, abc_n64, and
# the 32-layer base_32l, elu_32l, rfa_32l, t2r_32l, abc_n64_32l). Flags after '--' go to
# fairseq-train last, so they override anything set here (e.g. '-- --max-update 1000').
#
# Launching (the same flags as scripts/mt/train.sh and scripts/roberta/*.sh): one process on 1 GPU
# (or on CPU with --cpu); torchrun with --nproc-per-node processes on one node; with --nnodes N > 1,
# inside a SLURM allocation srun starts one torchrun per node. Outside an allocation several nodes
# are refused with the sbatch command to submit (scripts/lm/train_wiki103.sbatch, same arguments).
#
# Batch: the paper's 64 segments x 512 tokens = 32768 tokens per update are kept whatever the
# hardware: --update-freq = batch tokens / (processes x --max-tokens), which must divide evenly.
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
#   --nproc-per-node N   processes per node: GPUs (default: all that nvidia-smi lists), or with
#                        --cpu CPU processes (default 1; > 1 runs torchrun with gloo)
#   --nnodes N           nodes (default 1; more runs inside a SLURM allocation)
#   --max-tokens N       tokens per process and forward pass, a multiple of 512 (default 8192)
#   --batch-tokens N     tokens per update (default 32768 = 64 x 512, the paper's batch)
#   --cpu                train on CPU (small runs)
#   --no-fp16            GPU training in fp32 (default: --fp16, as Baevski & Auli)
#   --no-tensorboard     do not write TensorBoard logs (default: SAVE_DIR/tensorboard)
#   --dry-run            print the command instead of running it
#   -h, --help           this help
# Deprecated aliases: --nodes (--nnodes), --gpus and --cpu-procs (--nproc-per-node).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
SCRIPT_NAME=train_wiki103  # the name of its messages
# shellcheck source=scripts/lm/common.sh
. "$here/common.sh"

row="" data="$repo/data-bin/wikitext-103/bin" save_dir="" nproc="" nodes=1 max_tokens=8192
batch_tokens=$((64 * TOKENS_PER_SAMPLE)) fp16=1 cpu=0 tensorboard=1 dry_run=0
original_args=("$@")
extra=()
flags=(
    "--row row an experiment name" "--data data a directory" "--save-dir save_dir a directory"
    "--nproc-per-node nproc a number" "--nnodes nodes a number"
    "--gpus >--nproc-per-node" "--cpu-procs >--nproc-per-node" "--nodes >--nnodes"
    "--max-tokens max_tokens a number" "--batch-tokens batch_tokens a number"
    "--cpu cpu=1" "--no-tensorboard tensorboard=0" "--no-fp16 fp16=0" "--dry-run dry_run=1"
    "-- extra fairseq flags go after '--'"
)
parse_flags flags "$@"
[ -n "$row" ] || die "--row is required; one of: $(lm_rows | tr '\n' ' ')"
lm_row "$row"
posint --nnodes "$nodes"
posint --max-tokens "$max_tokens"
posint --batch-tokens "$batch_tokens"
[ $((max_tokens % TOKENS_PER_SAMPLE)) = 0 ] \
    || die "--max-tokens $max_tokens is not a multiple of the $TOKENS_PER_SAMPLE-token segment"

if [ "$cpu" = 1 ]; then
    [ "$nodes" = 1 ] || die "--cpu runs on one machine; drop --nnodes"
    procs="${nproc:-1}"
    posint --nproc-per-node "$procs"
else
    gpus="$nproc"
    if [ -z "$gpus" ]; then
        gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)"
        if ! [ "$gpus" -gt 0 ] 2>/dev/null && [ "$dry_run" = 1 ]; then
            gpus=1
            log "dry run: no GPU found, showing one process per node (--nproc-per-node N sets it)"
        fi
        [ "$gpus" -gt 0 ] 2>/dev/null || die "no GPU found (nvidia-smi); give --nproc-per-node N, or --cpu for a small CPU run"
    fi
    posint --nproc-per-node "$gpus"
    procs=$((nodes * gpus))
fi

# Keep the paper's batch: every process contributes --max-tokens per forward pass.
per_pass=$((procs * max_tokens))
[ $((batch_tokens % per_pass)) = 0 ] || die "the batch of $batch_tokens tokens is not a multiple of \
$procs process(es) x --max-tokens $max_tokens; choose --max-tokens so that $batch_tokens / ($procs x max-tokens) \
is a whole number (or change --batch-tokens)"
update_freq=$((batch_tokens / per_pass))

# A dry run needs no data: it shows the command a prepared --data would get.
if [ -f "$data/dict.txt" ]; then
    data="$(cd "$data" && pwd)"
elif [ "$dry_run" = 0 ]; then
    die "--data $data has no dict.txt (run data_prep/wikitext/prepare.sh first)"
fi
save_dir="${save_dir:-$repo/checkpoints/lm/$row}"

cmd=(
    "$data"
    --user-dir "$repo/abc_fairseq"
    --task language_modeling --tokens-per-sample "$TOKENS_PER_SAMPLE" --sample-break-mode none
    --arch "$ROW_ARCH" "${ROW_FLAGS[@]}"
    --criterion adaptive_loss
    --optimizer nag --lr 1.0 --lr-scheduler cosine --lr-period-updates 270000 --t-mult 2
    --lr-shrink 0.75 --warmup-updates 16000 --warmup-init-lr 1e-07 --min-lr 0.0001
    --stop-min-lr 1e-09 --max-update 286000 --clip-norm 0.1
    --max-tokens "$max_tokens" --update-freq "$update_freq"
    --seed 1 --skip-invalid-size-inputs-valid-test
    # fairseq's adaptive softmax loss refuses PyTorch DDP (even with one process); Baevski & Auli
    # train with the legacy one (then called no_c10d).
    --ddp-backend legacy_ddp
    --save-dir "$save_dir" --log-format simple --log-interval 100
)
[ "$tensorboard" = 0 ] || cmd+=(--tensorboard-logdir "$save_dir/tensorboard")

if [ "$cpu" = 1 ]; then
    cmd+=(--cpu)
    if [ "$procs" -gt 1 ]; then
        # fairseq 0.12 infers torchrun's environment only with CUDA devices: on CPU the rank is
        # forwarded from torchrun's RANK.
        cmd+=(--distributed-backend gloo --distributed-world-size "$procs"
              --distributed-init-method env:// --distributed-no-spawn)
        # shellcheck disable=SC2016 # "$@" and $RANK are expanded by the sh that torchrun starts
        launch=(torchrun --standalone --nproc_per_node "$procs" --no-python
                sh -c 'exec fairseq-train "$@" --distributed-rank "$RANK"' sh)
    else
        launch=(fairseq-train)
    fi
else
    [ "$fp16" = 0 ] || cmd+=(--fp16)  # as Baevski & Auli
    if [ "$procs" = 1 ]; then
        launch=(fairseq-train)
    elif [ "$nodes" = 1 ]; then
        launch=(torchrun --standalone --nproc_per_node "$gpus" --no-python fairseq-train)
    elif [ -n "${SLURM_JOB_ID:-}" ]; then
        # Inside the allocation: one torchrun per node, meeting at the first node.
        master="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
        launch=(srun --nodes "$nodes" --ntasks-per-node 1
                torchrun --nnodes "$nodes" --nproc_per_node "$gpus" --rdzv_backend c10d
                --rdzv_id "$SLURM_JOB_ID" --rdzv_endpoint "$master:${LM_RDZV_PORT:-29500}"
                --no-python fairseq-train)
    else
        die "--nnodes $nodes needs a SLURM allocation; submit: sbatch --nodes $nodes --ntasks-per-node 1 \
--gpus-per-node $gpus scripts/lm/train_wiki103.sbatch $(printf '%q ' "${original_args[@]}")"
    fi
fi

full=("${launch[@]}" "${cmd[@]}" "${extra[@]}")
if [ "$dry_run" = 1 ]; then printf '%q ' "${full[@]}"; echo; exit 0; fi

need_tool fairseq-train
[ "${launch[0]}" = fairseq-train ] || need_tool "${launch[0]}"
# One run per save dir: it must be this row's (or new), and not in use by a live run.
claim_dir "$save_dir" lm-train "--row $row"
take_lock "$save_dir" "${original_args[@]}"
if [ -f "$save_dir/checkpoint_last.pt" ]; then
    log "resuming from $save_dir/checkpoint_last.pt"
fi
log "$row: $ROW_LABEL (n=$ROW_N, $ROW_SETTING) on $procs process(es), update-freq $update_freq"
exec "${full[@]}"
