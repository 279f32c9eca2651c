#!/usr/bin/env bash
# Evaluate a WikiText-103 language model of Table 2 with fairseq-eval-lm: perplexity on the
# valid and test splits for each evaluation context size of the row's setting (0 and 480 tokens
# for the 16-layer models, 256 for the 32-layer ones). Segments are 512 tokens; with a context
# size C, each evaluated block of 512 - C new tokens is preceded by the C tokens before it
# (fairseq's --context-window).
#
#   bash scripts/lm/evaluate_wiki103.sh --row ROW [options] [-- extra fairseq-eval-lm flags]
#
# Each (split, context) writes OUT/{valid,test}_ctx{C}.log; a log that already holds a result
# newer than the checkpoint is kept (rerunning resumes), --force redoes it.
# scripts/lm/collect_lm_results.py turns the logs of all rows into the Markdown of Table 2.
#
# Options:
#   --row ROW          experiment of scripts/lm/rows.tsv (required)
#   --data DIR         binarised data (default <repo>/data-bin/wikitext-103/bin)
#   --checkpoint FILE  model (default <repo>/checkpoints/lm/ROW/checkpoint_best.pt)
#   --out DIR          where the logs go (default <repo>/results/lm/ROW)
#   --contexts "C..."  context sizes (default: the paper's for the row's setting)
#   --splits "S..."    splits (default "valid test")
#   --max-tokens N     tokens per batch (default 4096)
#   --cpu              evaluate on CPU
#   --force            re-evaluate even when a log is up to date
#   --dry-run          print the fairseq-eval-lm commands instead of running them
#   -h, --help         this help
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
SCRIPT_NAME=evaluate_wiki103  # the name of its messages
# shellcheck source=scripts/lm/common.sh
. "$here/common.sh"

row="" data="$repo/data-bin/wikitext-103/bin" checkpoint="" out="" contexts="" splits="valid test"
max_tokens=4096 cpu=0 force=0 dry_run=0 extra=()
flags=(
    "--row row an experiment name" "--data data a directory" "--checkpoint checkpoint a file"
    "--out out a directory" "--contexts contexts sizes" "--splits splits split names"
    "--max-tokens max_tokens a number" "--cpu cpu=1" "--force force=1" "--dry-run dry_run=1"
    "-- extra fairseq flags go after '--'"
)
parse_flags flags "$@"
[ -n "$row" ] || die "--row is required; one of: $(lm_rows | tr '\n' ' ')"
lm_row "$row"
posint --max-tokens "$max_tokens"
contexts="${contexts:-$(lm_contexts "$ROW_SETTING")}"
for c in $contexts; do
    if ! [[ "$c" =~ ^[0-9]+$ ]] || [ "$c" -ge "$TOKENS_PER_SAMPLE" ]; then
        die "--contexts: each size must be a whole number below $TOKENS_PER_SAMPLE, got '$c'"
    fi
done
[ -n "$splits" ] || die "--splits is empty"
[ -f "$data/dict.txt" ] || [ "$dry_run" = 1 ] || die "--data $data has no dict.txt (run data_prep/wikitext/prepare.sh first)"
checkpoint="${checkpoint:-$repo/checkpoints/lm/$row/checkpoint_best.pt}"
[ -f "$checkpoint" ] || [ "$dry_run" = 1 ] || die "--checkpoint $checkpoint does not exist (train with scripts/lm/train_wiki103.sh --row $row)"
out="${out:-$repo/results/lm/$row}"
[ "$dry_run" = 1 ] || { need_tool fairseq-eval-lm; mkdir -p "$out"; }

device=()
[ "$cpu" = 0 ] || device=(--cpu)
for split in $splits; do
    [ -f "$data/$split.bin" ] || [ "$dry_run" = 1 ] || die "--data $data has no split '$split' ($data/$split.bin)"
    for c in $contexts; do
        logfile="$out/${split}_ctx${c}.log" tmp="$out/${split}_ctx${c}.log.$$.tmp"
        cmd=(fairseq-eval-lm "$data" --user-dir "$repo/abc_fairseq" --path "$checkpoint"
             --task language_modeling --gen-subset "$split" --tokens-per-sample "$TOKENS_PER_SAMPLE"
             --context-window "$c" --sample-break-mode none --max-tokens "$max_tokens"
             --softmax-batch 1024 --log-format simple "${device[@]}" "${extra[@]}")
        if [ "$dry_run" = 1 ]; then printf '%q ' "${cmd[@]}"; echo; continue; fi
        if [ "$force" = 0 ] && [ "$logfile" -nt "$checkpoint" ] && grep -q 'Perplexity:' "$logfile"; then
            log "$split, context $c: up to date ($logfile)"
            continue
        fi
        log "$split, context $c -> $logfile"
        # Written aside (a name of this process's own, so two evaluations cannot mix their output)
        # and moved when complete, so a log with a result is always a whole run.
        "${cmd[@]}" >"$tmp" 2>&1 \
            || { tail -n 20 "$tmp" >&2; die "fairseq-eval-lm failed on $split with context $c (full log: $tmp)"; }
        mv "$tmp" "$logfile"
        log "$split, context $c: $(grep -o 'Perplexity: [0-9.]*' "$logfile" | tail -n 1)"
    done
done
