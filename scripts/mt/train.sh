#!/usr/bin/env bash
# Train an ABC (or softmax baseline) translation model with the paper's settings per dataset.
#
#   bash scripts/mt/train.sh --dataset wmt14 --data data-bin/wmt14_en_de/bin --save-dir ckpt/wmt14_abc
#   bash scripts/mt/train.sh --dataset iwslt14_doc --data data-bin/iwslt14_es_en_doc/bin --save-dir ckpt/iwslt
#   bash scripts/mt/train.sh --dataset tiny --data data-bin/bible_es_en/bin --save-dir /tmp/ck --cpu
#
# Launching (the same flags as scripts/lm/train_wiki103.sh and scripts/roberta/*.sh)
#   - one process:          fairseq-train directly (1 GPU, or --cpu)
#   - N GPUs of one node:   torchrun --nproc_per_node N (--nproc-per-node N; default: all visible GPUs)
#   - several nodes:        submit scripts/mt/train.sbatch by hand, which runs this script once per
#                           node under srun with --nnodes/--node-rank/--master-addr taken from SLURM
#   - N CPU processes:      --cpu --nproc-per-node N (gloo backend; for testing the distributed path)
# Every process gets its rank from torchrun's environment (fairseq 0.12 only infers it itself
# on GPU nodes, so it is passed explicitly: --distributed-rank/--device-id/--distributed-world-size
# with --distributed-init-method env://).
#
# Batch size: --update-freq is computed so that max_tokens x processes x update_freq reaches the
# dataset's total tokens per update (below), whatever the number of GPUs.
#
# Resuming: fairseq restores SAVE_DIR/checkpoint_last.pt (model, optimizer, scheduler, data
# position) when it exists, so rerunning the same command continues an interrupted run.
# SAVE_DIR is the run's own: one holding another model's run (SAVE_DIR/.run says which) or
# files of something else is refused, and so is one in use by a live run (SAVE_DIR/.lock).
# TensorBoard logs go to SAVE_DIR/tensorboard.
#
# Hyperparameters (ABC paper Table 10 and Appendix C; "(ours)" = not given in the paper):
#   all          Adam betas (0.9, 0.98) eps 1e-9 (Vaswani et al. 2017), inverse_sqrt schedule,
#                label smoothing 0.1, shared (joined) embeddings, ABC in the decoder (cross and
#                causal attention), softmax in the encoder (paper section 5.2)
#   wmt14        abc_transformer_wmt_en_de: 6+6 layers, dim 512, 8 heads, FFN 2048; dropout 0.1;
#                warmup 6000; cross/causal memory 32/8; lr 7e-4 (ours: the paper gives none;
#                the usual fairseq value for transformer-base at ~32k-token batches);
#                32768 tokens per update (ours: ~ Vaswani et al.'s 25k source + 25k target tokens,
#                counted fairseq's way); 100k updates (Vaswani et al. base)
#   iwslt14_doc  abc_transformer_iwslt_doc: 6+6 layers, dim 512, 8 heads, FFN 1024; dropout 0.3;
#                warmup 4000; cross/causal memory 128/64; lr 5e-4 and weight decay 1e-4 (ours:
#                fairseq's IWSLT14 transformer recipe); 16384 tokens per update (ours: 4096 on
#                each of the paper's 4 GPUs); 50k updates (ours)
#   tiny         abc_transformer_tiny (2+2 layers, dim 128) for CPU smoke tests: lr 3e-3 (a small
#                model takes a large rate; on the embedded Bible corpus 300 updates reach a
#                validation perplexity of ~40, while 1e-2 diverges), warmup 100, dropout 0.1,
#                4096 tokens per update, memory 16/8, 300 updates
#
# Options:
#   --dataset NAME         wmt14 | iwslt14_doc | tiny (required)
#   --data DIR             fairseq data directory, the recipes' DEST/bin (required)
#   --save-dir DIR         checkpoints and logs (required)
#   --model NAME           attention of the decoder (cross and causal): abc (ABC_MLP, default),
#                          random (ABC_RD), linformer, or another strategy of abc_transformer
#                          (window, cluster, abc-relu, ...); softmax = the BASE model (same
#                          architecture, every attention softmax)
#   --cross-memory N       memory size of cross attention (default per dataset)
#   --causal-memory N      memory size of decoder causal attention (default per dataset)
#   --encoder-memory N     also use --model in the encoder, memory N (the "-all" variant, App. C.2)
#   --arch ARCH            override the architecture; a non-ABC arch gets no ABC flags
#   --nproc-per-node N     processes per node: GPUs (default: all visible), or with --cpu CPU
#                          processes (default 1)
#   --cpu                  train on CPU
#   --nnodes N --node-rank R --master-addr HOST --master-port P
#                          multi-node (set by train.sbatch; default single node)
#   --max-tokens N         tokens per process per step (default per dataset)
#   --total-tokens N       tokens per update to reach (default per dataset)
#   --lr X --warmup N --max-update N --seed N   override the defaults
#   --train-module MODULE  run training as 'python -m MODULE' instead of fairseq-train: a module
#                          that runs fairseq_cli.train with a change (an experiment's, e.g.
#                          experiments.bible_mt.phi_init_train); it gets the same arguments
#   --dry-run              print the command instead of running it
#   -- ARGS...             further arguments for fairseq-train
#   -h, --help             this help
# Deprecated aliases: --gpus and --nproc (--nproc-per-node).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
SCRIPT_NAME=train.sh
# shellcheck source=scripts/lib/launcher.sh
. "$repo/scripts/lib/launcher.sh"
original_args=("$@")

dataset="" data="" save_dir="" model=abc cross_mem="" causal_mem="" encoder_mem="" arch=""
cpu=0 nproc="" nnodes=1 node_rank=0 master_addr=127.0.0.1 master_port=29500
max_tokens="" total_tokens="" lr="" warmup="" max_update="" seed=1 dry_run=0 train_module=""
extra=()
flags=(
    "--dataset dataset a name" "--data data a directory" "--save-dir save_dir a directory"
    "--model model a name" "--cross-memory cross_mem a number" "--causal-memory causal_mem a number"
    "--encoder-memory encoder_mem a memory size" "--arch arch a name"
    "--nproc-per-node nproc a number" "--gpus >--nproc-per-node" "--nproc >--nproc-per-node" "--cpu cpu=1"
    "--nnodes nnodes a number" "--node-rank node_rank a number" "--master-addr master_addr a host"
    "--master-port master_port a port" "--max-tokens max_tokens a number"
    "--total-tokens total_tokens a number" "--lr lr" "--warmup warmup a number"
    "--max-update max_update a number" "--seed seed a number"
    "--train-module train_module a Python module name" "--dry-run dry_run=1"
    "-- extra fairseq-train arguments go after --"
)
parse_flags flags "$@"
[ -n "$dataset" ] || die "--dataset is required (wmt14, iwslt14_doc or tiny)"
[ -n "$data" ] || die "--data is required (the recipe's DEST/bin directory)"
[ -n "$save_dir" ] || die "--save-dir is required"
[ -d "$data" ] || [ "$dry_run" = 1 ] || die "--data $data is not a directory"
[ -f "$data/eval/prep.json" ] || [ "$dry_run" = 1 ] || die "--data $data has no eval/prep.json; is it a recipe's DEST/bin?"
[[ "$model" =~ ^[a-z][a-z0-9-]*$ ]] || die "--model expects a name such as abc, random, linformer or softmax, got '$model'"

# --- per-dataset settings ---------------------------------------------------------------------
# --required-batch-size-multiple 1: the fairseq build in use (ve-fairseq 0.12.3) drops the last
# (size % multiple) examples of every split when batch sizes are rounded to a multiple (default 8);
# a development set smaller than 8 examples would even be empty.
common=(--optimizer adam --adam-betas '(0.9, 0.98)' --adam-eps 1e-9 --clip-norm 0.0
        --lr-scheduler inverse_sqrt --warmup-init-lr 1e-07
        --criterion label_smoothed_cross_entropy --label-smoothing 0.1
        --share-all-embeddings --required-batch-size-multiple 1)
case "$dataset" in
    wmt14)
        d_arch=abc_transformer_wmt_en_de d_cross=32 d_causal=8 d_lr=7e-4 d_warmup=6000
        d_max_tokens=4096 d_total=32768 d_max_update=100000
        d_args=(--dropout 0.1 --weight-decay 0.0 --save-interval-updates 2000 --keep-interval-updates 1
                --keep-last-epochs 5) ;;
    iwslt14_doc)
        d_arch=abc_transformer_iwslt_doc d_cross=128 d_causal=64 d_lr=5e-4 d_warmup=4000
        d_max_tokens=4096 d_total=16384 d_max_update=50000
        d_args=(--dropout 0.3 --weight-decay 0.0001 --keep-last-epochs 5
                --max-source-positions 1024 --max-target-positions 1024
                --skip-invalid-size-inputs-valid-test) ;;
    tiny)
        d_arch=abc_transformer_tiny d_cross=16 d_causal=8 d_lr=3e-3 d_warmup=100
        d_max_tokens=4096 d_total=4096 d_max_update=300
        d_args=(--dropout 0.1 --weight-decay 0.0 --keep-last-epochs 5) ;;
    *) die "--dataset must be wmt14, iwslt14_doc or tiny, got '$dataset'" ;;
esac
arch="${arch:-$d_arch}"
cross_mem="${cross_mem:-$d_cross}" causal_mem="${causal_mem:-$d_causal}"
lr="${lr:-$d_lr}" warmup="${warmup:-$d_warmup}" max_update="${max_update:-$d_max_update}"
max_tokens="${max_tokens:-$d_max_tokens}" total_tokens="${total_tokens:-$d_total}"
for pair in "--cross-memory:$cross_mem" "--causal-memory:$causal_mem" "--warmup:$warmup" \
            "--max-update:$max_update" "--max-tokens:$max_tokens" "--total-tokens:$total_tokens" \
            "--nnodes:$nnodes" "--master-port:$master_port"; do
    posint "${pair%%:*}" "${pair#*:}"
done
[ -z "$encoder_mem" ] || posint --encoder-memory "$encoder_mem"
if ! [[ "$node_rank" =~ ^[0-9]+$ ]] || [ "$node_rank" -ge "$nnodes" ]; then
    die "--node-rank must be in 0..$((nnodes - 1)), got '$node_rank'"
fi

# --- tools ------------------------------------------------------------------------------------
find_tools fairseq-train "$repo"
bindir="$BINDIR" py="$PY"
train_prog=("$bindir/fairseq-train")
if [ -n "$train_module" ]; then
    [[ "$train_module" =~ ^[A-Za-z_][A-Za-z0-9_.]*$ ]] || die "--train-module expects a module name such as pkg.module, got '$train_module'"
    (cd "$repo" && "$py" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)' \
        "$train_module" 2>/dev/null) || die "--train-module $train_module: no such module (run from $repo)"
    train_prog=("$py" -m "$train_module")
fi

# ABC options only for ABC architectures; a plain fairseq arch (e.g. --arch transformer) is
# trained as it is, as the softmax baseline.
abc_args=()
if [[ "$arch" == abc_* ]]; then
    # --user-dir imports the plugin, which registers its architectures and attention strategies;
    # check both before launching anything.
    choices="$(cd "$repo" && "$py" - "$arch" 2>/dev/null <<'PY'
import sys
import abc_fairseq  # noqa: F401
from fairseq.models import ARCH_MODEL_REGISTRY
from abc_fairseq.models.abc_options import ATTENTION_CHOICES
if sys.argv[1] not in ARCH_MODEL_REGISTRY:
    sys.exit(1)
print(" ".join(ATTENTION_CHOICES))
PY
)" || die "architecture '$arch' is not registered by abc_fairseq in this checkout (or the plugin does not import)"
    [[ " $choices " == *" $model "* ]] || die "--model must be one of: $choices; got '$model'"
    abc_args=(--user-dir "$repo/abc_fairseq")
    if [ "$model" = softmax ]; then
        [ -z "$encoder_mem" ] || die "--encoder-memory needs an ABC --model, not softmax"
        abc_args+=(--decoder-cross-attn softmax --decoder-self-attn softmax --encoder-attn softmax)
    else
        abc_args+=(--decoder-cross-attn "$model" --decoder-cross-memory "$cross_mem"
                   --decoder-self-attn "$model" --decoder-self-memory "$causal_mem")
        if [ -n "$encoder_mem" ]; then
            abc_args+=(--encoder-attn "$model" --encoder-memory "$encoder_mem")
        else
            abc_args+=(--encoder-attn softmax)
        fi
    fi
elif [ "$model" != softmax ]; then
    die "--arch $arch is not an ABC architecture: only --model softmax can train it"
fi

# --- processes and batch ----------------------------------------------------------------------
if [ "$cpu" = 1 ]; then
    per_node="${nproc:-1}"
elif [ -n "$nproc" ]; then
    per_node="$nproc"
else
    per_node="$("$py" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)"
    if [ "$per_node" = 0 ] && [ "$dry_run" = 1 ]; then
        per_node=1
        log "dry run: no GPU visible, showing one process per node (--nproc-per-node N sets it)"
    fi
    [ "$per_node" -gt 0 ] || die "no GPU visible; pass --cpu to train on CPU (or --nproc-per-node N)"
fi
posint --nproc-per-node "$per_node"
world=$((per_node * nnodes))
update_freq=$(( (total_tokens + max_tokens * world - 1) / (max_tokens * world) ))
log "$world process(es) x $max_tokens tokens x update-freq $update_freq = $((world * max_tokens * update_freq)) tokens per update (target $total_tokens)"


train_args=("$data" --arch "$arch" "${abc_args[@]}" "${common[@]}" "${d_args[@]}"
            --lr "$lr" --warmup-updates "$warmup" --max-update "$max_update"
            --max-tokens "$max_tokens" --update-freq "$update_freq" --seed "$seed"
            --save-dir "$save_dir" --tensorboard-logdir "$save_dir/tensorboard"
            --log-format simple --log-interval 100 "${extra[@]}")
[ "$cpu" = 0 ] || train_args+=(--cpu)

if [ "$world" -eq 1 ]; then
    cmd=("${train_prog[@]}" "${train_args[@]}")
else
    if [ "$cpu" = 1 ]; then
        train_args+=(--distributed-backend gloo --ddp-backend legacy_ddp)
    fi
    train_args+=(--distributed-world-size "$world" --distributed-init-method env:// --distributed-no-spawn)
    # torchrun exports RANK / LOCAL_RANK / WORLD_SIZE to each process; sh forwards them.
    # shellcheck disable=SC2016  # expanded by that sh, not here
    cmd=("$bindir/torchrun" --nnodes "$nnodes" --node_rank "$node_rank" --nproc_per_node "$per_node"
         --master_addr "$master_addr" --master_port "$master_port" --no-python
         sh -c 'exec "$0" "$@" --distributed-rank "$RANK" --device-id "$LOCAL_RANK"'
         "${train_prog[@]}" "${train_args[@]}")
    [ -x "$bindir/torchrun" ] || cmd[0]="torchrun"
fi

if [ "$dry_run" = 1 ]; then
    printf '%q ' "${cmd[@]}"
    printf '\n'
    exit 0
fi
run_json="{\"dataset\": \"$dataset\", \"model\": \"$model\", \"arch\": \"$arch\", \"cross_memory\": $([ "$model" != softmax ] && echo "$cross_mem" || echo null), \"causal_memory\": $([ "$model" != softmax ] && echo "$causal_mem" || echo null), \"encoder_memory\": ${encoder_mem:-null}, \"data\": \"$data\"}"
# The save dir is this run's own (SAVE_DIR/.run names the model; a dir of another model, or one
# holding anything else, is refused) and one run at a time uses it (SAVE_DIR/.lock). Under
# train.sbatch every node runs this script: the first node claims and locks for all.
identity="dataset=$dataset model=$model arch=$arch cross=$cross_mem causal=$causal_mem encoder=${encoder_mem:--}"
[ "$model" != softmax ] || identity="dataset=$dataset model=softmax arch=$arch"
if [ "$node_rank" = 0 ]; then
    # A save dir of this script from before the .run mark: its run.json says what it holds.
    if [ ! -f "$save_dir/.run" ] && [ "$(cat "$save_dir/run.json" 2>/dev/null)" = "$run_json" ]; then
        printf 'mt-train %s\n' "$identity" >"$save_dir/.run"
    fi
    claim_dir "$save_dir" mt-train "$identity"
    take_lock "$save_dir" "${original_args[@]}"
    # Recorded next to the checkpoints, for collect_results.py and for the record.
    printf '%q ' "${cmd[@]}" >"$save_dir/train_command.txt"
    printf '\n' >>"$save_dir/train_command.txt"
    printf '%s\n' "$run_json" >"$save_dir/run.json"
else
    mkdir -p "$save_dir"
fi
[ ! -f "$save_dir/checkpoint_last.pt" ] || log "resuming from $save_dir/checkpoint_last.pt"
cd "$repo"
exec "${cmd[@]}"
