#!/usr/bin/env bash
# Train an ABC (or softmax baseline) translation model with the paper's settings per dataset.
#
#   bash scripts/mt/train.sh --dataset wmt14 --data data-bin/wmt14_en_de/bin --save-dir ckpt/wmt14_abc
#   bash scripts/mt/train.sh --dataset iwslt14_doc --data data-bin/iwslt14_es_en_doc/bin --save-dir ckpt/iwslt
#   bash scripts/mt/train.sh --dataset tiny --data data-bin/bible_es_en/bin --save-dir /tmp/ck --cpu
#
# Launching: scripts/lib/launch.py, the launcher of every training recipe (its --help has the
# details). One process runs fairseq-train; --nproc-per-node N > 1 runs torchrun on one node
# (with --cpu, N CPU processes with gloo); --nnodes N > 1 runs srun + torchrun (c10d rendezvous)
# inside a SLURM allocation: submit scripts/mt/train.sbatch with the same arguments (outside an
# allocation the launcher refuses and prints the sbatch command; a dry run shows the command with
# placeholders).
#
# Batch: the dataset's tokens per update (below; --total-tokens) are held exactly on every
# process count by the launchers' one rule (scripts/lib/launch.py --help):
#   tokens per process = total tokens / (processes x update_freq), at most --max-tokens and at
#   least the longest training example (wmt14: 256 = 250 BPE tokens + EOS, the data recipe's
#   --max-len; iwslt14_doc: 1024, its --max-source/target-positions), update_freq the smallest
#   that allows it
# (wmt14 on 1 / 4 / 8 / 32 GPUs: 4096 x 8 / 4096 x 2 / 4096 x 1 / 1024 x 1). A layout that
# cannot hold the total (e.g. wmt14 on 128 GPUs, iwslt14_doc on more than 16) is refused with
# the flags to change, unless --allow-batch-mismatch. fairseq would silently drop the examples
# longer than a process's --max-tokens: hence the floor.
#
# Resuming: fairseq restores SAVE_DIR/checkpoint_last.pt (model, optimizer, scheduler, data
# position) when it exists, so rerunning the same command continues an interrupted run.
# SAVE_DIR is the run's own: one holding another model's run (SAVE_DIR/.run says which) or
# files of something else is refused, and so is one in use by a live run (SAVE_DIR/.lock).
# TensorBoard logs go to SAVE_DIR/tensorboard; SAVE_DIR/run.json records the model and
# SAVE_DIR/train_command.txt the command.
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
#   --causal-model NAME    attention of the decoder's causal self attention when it differs from
#                          --model's: e.g. gsa (causal only) under an abc or softmax cross attention
#   --cross-memory N       memory size of cross attention (default per dataset)
#   --causal-memory N      memory size of decoder causal attention (default per dataset)
#   --encoder-memory N     also use --model in the encoder, memory N (the "-all" variant, App. C.2)
#   --arch ARCH            override the architecture; a non-ABC arch gets no ABC flags
#   --nproc-per-node N     processes per node (default: with --cpu 1, else the GPUs of
#                          CUDA_VISIBLE_DEVICES, else of nvidia-smi -L)
#   --nnodes N             nodes (default 1; more run inside a SLURM allocation: train.sbatch)
#   --rdzv-port P          the rendezvous port on the first node (several nodes; default 29500)
#   --allow-batch-mismatch where --total-tokens cannot be held exactly, train the nearest batch
#                          (a warning says which) instead of refusing
#   --cpu                  train on CPU
#   --max-tokens N         the most tokens per process per step (default per dataset)
#   --total-tokens N       tokens per update to reach (default per dataset)
#   --lr X --warmup N --max-update N --seed N   override the defaults
#   --train-module MODULE  run training as 'python -m MODULE' instead of fairseq-train: a module
#                          that runs fairseq_cli.train with a change (an experiment's, e.g.
#                          experiments.bible_mt.phi_init_train); it gets the same arguments
#   --dry-run              print the command instead of running it
#   -- ARGS...             further arguments for fairseq-train
#   -h, --help             this help
# Deprecated aliases (every launcher): --nodes (--nnodes), --gpus, --cpu-procs, --nproc
# (--nproc-per-node); --master-port (--rdzv-port). --node-rank and --master-addr are gone: the
# rendezvous gives the ranks and the first node of the allocation is the meeting point.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
SCRIPT_NAME=train.sh
# shellcheck source=scripts/lib/launcher.sh
. "$repo/scripts/lib/launcher.sh"

dataset="" data="" save_dir="" model=abc causal_model="" cross_mem="" causal_mem="" encoder_mem="" arch=""
max_tokens="" total_tokens="" lr="" warmup="" max_update="" seed=1 train_module=""
extra=()
per_node_flags() {  # --node-rank, --master-addr: the one multi-node path needs neither
    die "--node-rank and --master-addr are gone: several nodes run through scripts/mt/train.sbatch (srun + torchrun, c10d rendezvous at the allocation's first node; --rdzv-port sets its port)"
}
flags=(
    "${LAUNCH_FLAGS[@]}" "--master-port >--rdzv-port" "--node-rank @per_node_flags" "--master-addr @per_node_flags"
    "--dataset dataset a name" "--data data a directory" "--save-dir save_dir a directory"
    "--model model a name" "--causal-model causal_model a name" "--cross-memory cross_mem a number" "--causal-memory causal_mem a number"
    "--encoder-memory encoder_mem a memory size" "--arch arch a name"
    "--max-tokens max_tokens a number" "--total-tokens total_tokens a number" "--lr lr"
    "--warmup warmup a number" "--max-update max_update a number" "--seed seed a number"
    "--train-module train_module a Python module name"
    "-- extra fairseq-train arguments go after --"
)
parse_flags flags "$@"
[ -n "$dataset" ] || die "--dataset is required (wmt14, iwslt14_doc or tiny)"
[ -n "$data" ] || die "--data is required (the recipe's DEST/bin directory)"
[ -n "$save_dir" ] || die "--save-dir is required"
[[ "$model" =~ ^[a-z][a-z0-9-]*$ ]] || die "--model expects a name such as abc, random, linformer or softmax, got '$model'"
causal_model="${causal_model:-$model}"
[[ "$causal_model" =~ ^[a-z][a-z0-9-]*$ ]] || die "--causal-model expects a name such as gsa, abc or softmax, got '$causal_model'"

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
        d_max_tokens=4096 d_total=32768 d_max_update=100000 d_longest=256
        d_args=(--dropout 0.1 --weight-decay 0.0 --save-interval-updates 2000 --keep-interval-updates 1
                --keep-last-epochs 5) ;;
    iwslt14_doc)
        d_arch=abc_transformer_iwslt_doc d_cross=128 d_causal=64 d_lr=5e-4 d_warmup=4000
        d_max_tokens=4096 d_total=16384 d_max_update=50000 d_longest=1024
        d_args=(--dropout 0.3 --weight-decay 0.0001 --keep-last-epochs 5
                --max-source-positions 1024 --max-target-positions 1024
                --skip-invalid-size-inputs-valid-test) ;;
    tiny)
        d_arch=abc_transformer_tiny d_cross=16 d_causal=8 d_lr=3e-3 d_warmup=100
        d_max_tokens=4096 d_total=4096 d_max_update=300 d_longest=256
        d_args=(--dropout 0.1 --weight-decay 0.0 --keep-last-epochs 5) ;;
    *) die "--dataset must be wmt14, iwslt14_doc or tiny, got '$dataset'" ;;
esac
arch="${arch:-$d_arch}"
cross_mem="${cross_mem:-$d_cross}" causal_mem="${causal_mem:-$d_causal}"
lr="${lr:-$d_lr}" warmup="${warmup:-$d_warmup}" max_update="${max_update:-$d_max_update}"
max_tokens="${max_tokens:-$d_max_tokens}" total_tokens="${total_tokens:-$d_total}"
for pair in "--cross-memory:$cross_mem" "--causal-memory:$causal_mem" "--warmup:$warmup" \
            "--max-update:$max_update" "--max-tokens:$max_tokens" "--total-tokens:$total_tokens"; do
    posint "${pair%%:*}" "${pair#*:}"
done
[ -z "$encoder_mem" ] || posint --encoder-memory "$encoder_mem"

# --- tools ------------------------------------------------------------------------------------
find_tools fairseq-train "$repo"
py="$PY"
if [ -n "$train_module" ]; then
    [[ "$train_module" =~ ^[A-Za-z_][A-Za-z0-9_.]*$ ]] || die "--train-module expects a module name such as pkg.module, got '$train_module'"
    (cd "$repo" && "$py" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)' \
        "$train_module" 2>/dev/null) || die "--train-module $train_module: no such module (run from $repo)"
    LAUNCH_OPTS+=(--train-module "$train_module")
fi

# ABC options only for ABC architectures; a plain fairseq arch (e.g. --arch transformer) is
# trained as it is, as the softmax baseline. Both get --user-dir: the plugin also lets torch >= 2.6
# (weights-only loading) read fairseq checkpoints, which resuming a plain arch's run needs too.
abc_args=(--user-dir "$repo/abc_fairseq")
if [[ "$arch" == abc_* ]]; then
    # --user-dir imports the plugin, which registers its architectures and attention strategies;
    # check both before launching anything, without importing fairseq (abc_fairseq.architectures
    # reads the names from the plugin's source; the strategies' registry needs only torch).
    choices="$(cd "$repo" && "$py" - "$arch" 2>/dev/null <<'PY'
import sys
from abc_fairseq.architectures import architecture_names
from abc_fairseq.strategies import attention_choices
if sys.argv[1] not in architecture_names():
    sys.exit(1)
print(" ".join(attention_choices()))
PY
)" || die "architecture '$arch' is not registered by abc_fairseq in this checkout (or the plugin does not import)"
    [[ " $choices " == *" $model "* ]] || die "--model must be one of: $choices; got '$model'"
    [[ " $choices " == *" $causal_model "* ]] || die "--causal-model must be one of: $choices; got '$causal_model'"
    cross=(--decoder-cross-attn "$model" --decoder-cross-memory "$cross_mem")
    causal=(--decoder-self-attn "$causal_model" --decoder-self-memory "$causal_mem")
    encoder=(--encoder-attn softmax)
    [ "$model" != softmax ] || cross=(--decoder-cross-attn softmax)
    [ "$causal_model" != softmax ] || causal=(--decoder-self-attn softmax)
    if [ -n "$encoder_mem" ]; then
        [ "$model" != softmax ] || die "--encoder-memory needs an ABC --model, not softmax"
        encoder=(--encoder-attn "$model" --encoder-memory "$encoder_mem")
    fi
    abc_args+=("${cross[@]}" "${causal[@]}" "${encoder[@]}")
elif [ "$model" != softmax ] || [ "$causal_model" != softmax ]; then
    die "--arch $arch is not an ABC architecture: only --model softmax can train it"
fi

# --- launch -------------------------------------------------------------------------------------
train_args=("$data" --arch "$arch" "${abc_args[@]}" "${common[@]}" "${d_args[@]}"
            --lr "$lr" --warmup-updates "$warmup" --max-update "$max_update" --seed "$seed"
            --save-dir "$save_dir" --tensorboard-logdir "$save_dir/tensorboard"
            --log-format simple --log-interval 100)
# A process holds at least the dataset's longest training example (fairseq drops longer ones).
LAUNCH_OPTS+=(--min-per-process "$d_longest" --per-process-flag=--max-tokens --target-flag=--total-tokens)
plan_launch tokens "$total_tokens" "$max_tokens" scripts/mt/train.sbatch "${train_args[@]}" -- "${extra[@]}"

[ -d "$data" ] || die "--data $data is not a directory"
[ -f "$data/eval/prep.json" ] || die "--data $data has no eval/prep.json; is it a recipe's DEST/bin?"
# The save dir is this run's own (SAVE_DIR/.run names the model; a dir of another model, or one
# holding anything else, is refused) and one run at a time uses it (SAVE_DIR/.lock).
identity="dataset=$dataset model=$model arch=$arch cross=$cross_mem causal=$causal_mem encoder=${encoder_mem:--}"
[ "$model" != softmax ] || [ "$causal_model" != softmax ] || identity="dataset=$dataset model=softmax arch=$arch"
[ "$causal_model" = "$model" ] || identity+=" causal_model=$causal_model"
claim_launch "$save_dir" mt-train "$identity"
# Recorded next to the checkpoints, for collect_results.py and for the record.
printf '%s\n' "$LAUNCH" >"$save_dir/train_command.txt"
memories=("cross_memory:=null" "causal_memory:=null")
[ "$model" = softmax ] || memories[0]="cross_memory:=$cross_mem"
[ "$causal_model" = softmax ] || memories[1]="causal_memory:=$causal_mem"
"$py" "$repo/scripts/lib/write_json.py" "$save_dir/run.json" "dataset=$dataset" "model=$model" \
    "causal_model=$causal_model" "arch=$arch" \
    "${memories[@]}" "encoder_memory:=${encoder_mem:-null}" "data=$data"
exec_launch
