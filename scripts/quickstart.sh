#!/usr/bin/env bash
# Quickstart: train a small ABC language model and a softmax-attention transformer baseline of the
# same size on the embedded default corpus (KJV Genesis-2 Kings), on CPU, with the same budget;
# evaluate both with fairseq-eval-lm; print a comparison table.
#
#   bash scripts/setup_env.sh && bash scripts/quickstart.sh
#
# Outputs go to work_dirs/quickstart/ (one directory per model with checkpoints/, train.log and
# eval_*.log, plus results.md). Re-running resumes: a finished model is not retrained, an
# interrupted one continues from its checkpoint_last.pt (fairseq does that by itself when the
# save dir already holds one), and raising QUICKSTART_MAX_UPDATE continues training.
#
# Nothing it did not create is touched: QUICKSTART_DIR must be absent, empty or an earlier
# quickstart output (marked by its .run file), and QUICKSTART_DATA absent, empty or an earlier
# build of the default corpus (marked by .prepared_sha256). A second quickstart on the same
# QUICKSTART_DIR refuses while the first is running (QUICKSTART_DIR/.lock names it).
#
# Options: -h, --help prints this text. Everything else is set by the variables below.
#
# Budget and size, all optional (defaults: about 3 minutes of training per model on an idle 2-core
# CPU, docs/quickstart/results.md; a shared machine can take several times as long):
#   QUICKSTART_MAX_UPDATE=300        optimizer steps per model (fairseq --max-update)
#   QUICKSTART_MAX_EPOCH=0           epoch limit (0: none)
#   QUICKSTART_MAX_TOKENS=2048       tokens per batch (8 sequences of 256)
#   QUICKSTART_TOKENS_PER_SAMPLE=256 sequence length
#   QUICKSTART_LAYERS=4 QUICKSTART_EMBED_DIM=256 QUICKSTART_FFN_DIM=1024 QUICKSTART_HEADS=4
#   QUICKSTART_ABC_MEMORY=64         ABC memory slots (--decoder-self-memory)
#   QUICKSTART_CONTEXT_WINDOW=128    context for the sliding-window test evaluation
#   QUICKSTART_LR=0.001 QUICKSTART_WARMUP=100 QUICKSTART_SEED=1
#   QUICKSTART_MODELS="abc softmax"  which models to run: abc, softmax and gsa (gated slot attention,
#                                    the same model with --decoder-self-attn gsa; not run by default)
#   QUICKSTART_DIR=work_dirs/quickstart    QUICKSTART_DATA=data-bin/default_corpus
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPT_NAME=quickstart
# shellcheck source=scripts/lib/common.sh
. "$repo/scripts/lib/common.sh"
answer_help "$@"
[ $# -eq 0 ] || unknown_option "$1"
# Relative QUICKSTART_DIR / QUICKSTART_DATA are taken relative to where the script is called from.
abspath() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
out="$(abspath "${QUICKSTART_DIR:-$repo/work_dirs/quickstart}")"
data="$(abspath "${QUICKSTART_DATA:-$repo/data-bin/default_corpus}")"
cd "$repo"
max_update="${QUICKSTART_MAX_UPDATE:-300}"
max_epoch="${QUICKSTART_MAX_EPOCH:-0}"
max_tokens="${QUICKSTART_MAX_TOKENS:-2048}"
tps="${QUICKSTART_TOKENS_PER_SAMPLE:-256}"
layers="${QUICKSTART_LAYERS:-4}"
dim="${QUICKSTART_EMBED_DIM:-256}"
ffn="${QUICKSTART_FFN_DIM:-1024}"
heads="${QUICKSTART_HEADS:-4}"
memory="${QUICKSTART_ABC_MEMORY:-64}"
ctx="${QUICKSTART_CONTEXT_WINDOW:-128}"
lr="${QUICKSTART_LR:-0.001}"
warmup="${QUICKSTART_WARMUP:-100}"
seed="${QUICKSTART_SEED:-1}"
read -ra models <<<"${QUICKSTART_MODELS:-abc softmax}"

for v in max_update max_epoch max_tokens tps layers dim ffn heads memory ctx warmup seed; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || die "the setting for $v must be a non-negative integer, got '${!v}'"
done
# fairseq reads 0 as "no limit": with both at 0 training would never stop.
[ "$max_update" -gt 0 ] || [ "$max_epoch" -gt 0 ] || die "QUICKSTART_MAX_UPDATE and QUICKSTART_MAX_EPOCH cannot both be 0"
[ "$ctx" -lt "$tps" ] || die "QUICKSTART_CONTEXT_WINDOW ($ctx) must be smaller than QUICKSTART_TOKENS_PER_SAMPLE ($tps)"
[ "${#models[@]}" -gt 0 ] || die "QUICKSTART_MODELS is empty"
for m in "${models[@]}"; do
    case "$m" in abc|softmax|gsa) ;; *) die "QUICKSTART_MODELS may contain 'abc', 'softmax' and 'gsa', got '$m'" ;; esac
done

# The two folders: only ever our own output (see the header).
if [ -d "$data" ] && [ -n "$(ls -A "$data")" ] && [ ! -f "$data/.prepared_sha256" ]; then
    die "QUICKSTART_DATA=$data holds something that is not a build of the default corpus (no .prepared_sha256); \
it is left as it is: choose another folder"
fi
if [ ! -f "$out/.run" ] && { [ -f "$out/abc/config.sha256" ] || [ -f "$out/softmax/config.sha256" ]; }; then
    printf 'quickstart lm-comparison\n' >"$out/.run"  # an output of a quickstart that predates the .run mark
fi
claim_dir "$out" quickstart lm-comparison
take_lock "$out" "QUICKSTART_DIR=$out QUICKSTART_DATA=$data"
trap release_lock EXIT

# Use the active environment if it has fairseq; otherwise build/activate the project venv.
if ! command -v fairseq-train >/dev/null 2>&1; then
    # shellcheck source=scripts/setup_env.sh
    . "$repo/scripts/setup_env.sh"
fi
for tool in fairseq-train fairseq-eval-lm fairseq-preprocess; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found; run 'bash scripts/setup_env.sh'"
done

log "preparing the corpus in $data"
bash "$repo/data_prep/default_corpus/prepare.sh" "$data"

# --user-dir is given to every fairseq command, the baseline's too: importing abc_fairseq also
# lets fairseq load its own checkpoints under torch's weights-only torch.load.
user_dir=(--user-dir "$repo/abc_fairseq")

# Identical for both models, so the comparison isolates the attention mechanism.
common=(
    "$data" "${user_dir[@]}"
    --task language_modeling --tokens-per-sample "$tps" --sample-break-mode none
    --decoder-layers "$layers" --decoder-embed-dim "$dim" --decoder-ffn-embed-dim "$ffn"
    --decoder-attention-heads "$heads" --share-decoder-input-output-embed
    # Without these two, transformer_lm's config defaults give a 512-wide input/output projection
    # around the 256-wide decoder (its default is not tied to --decoder-embed-dim).
    --decoder-input-dim "$dim" --decoder-output-dim "$dim"
    --dropout 0.1 --attention-dropout 0.0
    --optimizer adam --adam-betas "(0.9, 0.98)" --weight-decay 0.01 --clip-norm 1.0
    --lr "$lr" --lr-scheduler inverse_sqrt --warmup-updates "$warmup" --warmup-init-lr 1e-07
    --criterion cross_entropy --max-tokens "$max_tokens" --update-freq 1
    --seed "$seed" --cpu --num-workers 0
    --log-format simple --log-interval 25
    --no-epoch-checkpoints
)

train() {  # NAME ARCH [extra fairseq-train args...]
    local name="$1" arch="$2"
    shift 2
    local dir="$out/$name"
    local args=("${common[@]}" --arch "$arch" "$@")
    # The run's identity: everything except the budget, so raising the budget resumes training
    # while changing anything else refuses to mix two different runs in one directory.
    local config
    config="$(printf '%s\n' "${args[@]}" | sha256sum | cut -d' ' -f1)"
    local budget="max_update=$max_update max_epoch=$max_epoch"

    mkdir -p "$dir"
    if [ -f "$dir/config.sha256" ] && [ "$(cat "$dir/config.sha256")" != "$config" ]; then
        die "$dir holds a run with different settings; remove it or set QUICKSTART_DIR to start elsewhere"
    fi
    printf '%s\n' "$config" >"$dir/config.sha256"
    printf '%s\n' "${args[@]}" >"$dir/train_args.txt"

    if [ -f "$dir/done" ] && [ "$(cat "$dir/done")" = "$budget" ] && [ -f "$dir/checkpoints/checkpoint_best.pt" ]; then
        log "$name: already trained ($budget); skipping training"
        return 0
    fi
    if [ -f "$dir/checkpoints/checkpoint_last.pt" ]; then
        log "$name: resuming from $dir/checkpoints/checkpoint_last.pt ($budget)"
    else
        log "$name: training --arch $arch ($budget); log: $dir/train.log"
    fi
    rm -f "$dir/done"
    # Training time is measured here, summed over resumed runs (fairseq's own "wall" meter
    # restarts from 0 when it resumes). It includes fairseq's start-up and validation.
    local start status=0 spent
    start="$(date +%s)"
    fairseq-train "${args[@]}" \
        --max-update "$max_update" --max-epoch "$max_epoch" \
        --save-dir "$dir/checkpoints" \
        2>&1 | tee -a "$dir/train.log" || status=$?
    spent="$(cat "$dir/train_seconds" 2>/dev/null || echo 0)"
    echo $((spent + $(date +%s) - start)) >"$dir/train_seconds"
    [ "$status" -eq 0 ] || die "$name: fairseq-train failed with status $status (log: $dir/train.log)"
    [ -f "$dir/checkpoints/checkpoint_best.pt" ] || die "$name: fairseq-train wrote no $dir/checkpoints/checkpoint_best.pt"
    printf '%s\n' "$budget" >"$dir/done"
}

evaluate() {  # NAME
    local name="$1" dir="$out/$1"
    local eval_args=("$data" "${user_dir[@]}" --path "$dir/checkpoints/checkpoint_best.pt"
        --tokens-per-sample "$tps" --max-tokens 4096 --cpu --num-workers 0 --log-format simple)
    # Skip if all three logs are newer than the checkpoint and hold a result.
    local f fresh=1
    for f in eval_valid eval_test eval_test_ctx; do
        [ "$dir/$f.log" -nt "$dir/checkpoints/checkpoint_best.pt" ] && grep -q 'Perplexity' "$dir/$f.log" || fresh=0
    done
    if [ "$fresh" = 1 ] && [ "$(cat "$dir/eval_settings" 2>/dev/null)" = "tps=$tps ctx=$ctx" ]; then
        log "$name: evaluation logs are up to date; not re-evaluating"
        return 0
    fi
    log "$name: evaluating checkpoint_best.pt on valid, test, and test with --context-window $ctx"
    fairseq-eval-lm "${eval_args[@]}" --gen-subset valid >"$dir/eval_valid.log" 2>&1 \
        || { tail -20 "$dir/eval_valid.log" >&2; die "$name: fairseq-eval-lm on valid failed (log: $dir/eval_valid.log)"; }
    fairseq-eval-lm "${eval_args[@]}" --gen-subset test >"$dir/eval_test.log" 2>&1 \
        || { tail -20 "$dir/eval_test.log" >&2; die "$name: fairseq-eval-lm on test failed (log: $dir/eval_test.log)"; }
    fairseq-eval-lm "${eval_args[@]}" --gen-subset test --context-window "$ctx" >"$dir/eval_test_ctx.log" 2>&1 \
        || { tail -20 "$dir/eval_test_ctx.log" >&2; die "$name: fairseq-eval-lm --context-window on test failed (log: $dir/eval_test_ctx.log)"; }
    printf '%s\n' "tps=$tps ctx=$ctx" >"$dir/eval_settings"
}

for m in "${models[@]}"; do
    case "$m" in
        abc)
            train abc abc_lm_small --decoder-self-attn abc --decoder-self-memory "$memory"
            ;;
        softmax)
            train softmax transformer_lm
            ;;
        gsa)
            train gsa abc_lm_small --decoder-self-attn gsa --decoder-self-memory "$memory"
            ;;
    esac
    evaluate "$m"
done

# Summary table, from the logs. Params: fairseq-train's "num. shared model params" line; updates:
# the last num_updates logged; train time: train_seconds written by train() above.
python - "$out" "$ctx" "${models[@]}" <<'EOF' | tee "$out/results.md"
import os
import re
import sys

out, ctx, names = sys.argv[1], sys.argv[2], sys.argv[3:]
labels = {"abc": "abc_lm_small (ABC)", "softmax": "transformer_lm (softmax)", "gsa": "abc_lm_small (GSA)"}


def last(pattern, path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            found = re.findall(pattern, f.read())
    except FileNotFoundError:
        return None
    return found[-1] if found else None


rows = []
for name in names:
    d = os.path.join(out, name)
    params = last(r"num\. shared model params: ([\d,]+)", os.path.join(d, "train.log"))
    try:
        with open(os.path.join(d, "train_seconds")) as f:
            wall = f.read().strip()
    except FileNotFoundError:
        wall = None
    upd = last(r"(?:\| num_updates |num_updates=)(\d+)", os.path.join(d, "train.log"))
    ppl = [last(r"Perplexity: ([\d.]+)", os.path.join(d, f)) for f in ("eval_valid.log", "eval_test.log", "eval_test_ctx.log")]
    rows.append([labels[name], params or "?", upd or "?"] + [p or "?" for p in ppl] + [wall + " s" if wall else "?"])

head = ["model", "params", "updates", "valid ppl", "test ppl", f"test ppl (context {ctx})", "train time"]
widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
print()
print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |")
print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
for r in rows:
    print("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")
EOF
log "results written to $out/results.md"
