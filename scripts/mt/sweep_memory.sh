#!/usr/bin/env bash
# Table 5 of the ABC paper: WMT14 EN-DE development BLEU of ABC_MLP for cross/causal memory sizes
# in {8, 16, 32, 64} with cross >= causal (10 models), greedy decoding, no checkpoint averaging.
#
#   bash scripts/mt/sweep_memory.sh --data data-bin/wmt14_en_de/bin --root ckpt/table5 [-- TRAIN_ARGS...]
#   python scripts/mt/collect_results.py ckpt/table5            # the table, in Markdown
#
# Each configuration trains into ROOT/abc_cross<C>_causal<K> with scripts/mt/train.sh
# (--dataset wmt14, the Table 3 setup; arguments after -- go to train.sh, e.g. --nproc-per-node 4 or
# --max-update N) and is then evaluated on the development set (newstest2013) with
# scripts/mt/evaluate.sh --split valid --checkpoint checkpoint_last.pt --beam 1. Both steps
# resume or skip when already done, so the sweep can be rerun after an interruption. To spread
# the configurations over a cluster instead, --dry-run prints one command line per step.
#
# Options:
#   --data DIR         WMT14 data (the recipe's DEST/bin; required)
#   --root DIR         parent directory of the runs (required)
#   --configs LIST     subset, as CROSS:CAUSAL pairs, e.g. "32:8 64:64" (default: all 10)
#   --dataset NAME     train.sh dataset preset (default wmt14; tiny for a smoke test)
#   --train-only / --eval-only
#   --cpu              train and decode on CPU
#   --dry-run          print the commands instead of running them
#   -h, --help         this help
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SCRIPT_NAME=sweep_memory.sh
# shellcheck source=scripts/lib/common.sh
. "$here/../lib/common.sh"

data="" root="" configs="" dataset=wmt14 do_train=1 do_eval=1 cpu=0 dry_run=0
train_extra=()
flags=(
    "--data data a directory" "--root root a directory" "--configs configs a list" "--dataset dataset a name"
    "--train-only do_eval=0" "--eval-only do_train=0" "--cpu cpu=1" "--dry-run dry_run=1"
    "-- train_extra train.sh arguments go after --"
)
parse_flags flags "$@"
[ -n "$data" ] || die "--data is required"
[ -n "$root" ] || die "--root is required"
[ "$do_train$do_eval" != 00 ] || die "--train-only and --eval-only exclude each other"

if [ -z "$configs" ]; then
    for cross in 8 16 32 64; do
        for causal in 8 16 32 64; do
            [ "$causal" -le "$cross" ] && configs+="$cross:$causal "
        done
    done
fi
device=()
[ "$cpu" = 0 ] || device=(--cpu)

run() {
    if [ "$dry_run" = 1 ]; then printf '%q ' "$@"; printf '\n'; else "$@"; fi
}

for pair in $configs; do
    [[ "$pair" =~ ^([1-9][0-9]*):([1-9][0-9]*)$ ]] || die "--configs entries must be CROSS:CAUSAL, got '$pair'"
    cross="${BASH_REMATCH[1]}" causal="${BASH_REMATCH[2]}"
    dir="$root/abc_cross${cross}_causal${causal}"
    if [ "$do_train" = 1 ]; then
        run bash "$here/train.sh" --dataset "$dataset" --data "$data" --save-dir "$dir" \
            --cross-memory "$cross" --causal-memory "$causal" "${device[@]}" "${train_extra[@]}"
    fi
    if [ "$do_eval" = 1 ]; then
        run bash "$here/evaluate.sh" --data "$data" --save-dir "$dir" --split valid \
            --checkpoint "$dir/checkpoint_last.pt" --beam 1 --lenpen 1.0 "${device[@]}"
    fi
done
