#!/usr/bin/env bash
# Evaluate a translation model the paper's way and write SAVE_DIR/eval/<tag>/result.json.
#
#   bash scripts/mt/evaluate.sh --data DATA_BIN --save-dir CKPT_DIR              # Table 3 setting
#   bash scripts/mt/evaluate.sh --data DATA_BIN --save-dir CKPT_DIR --split valid \
#        --checkpoint CKPT_DIR/checkpoint_last.pt --beam 1                       # Table 5 setting
#
# Steps
#   1. checkpoint: the average of the last --average-last N (default 5) epoch checkpoints
#      (scripts/mt/average_checkpoints.py; rebuilt when a newer epoch checkpoint appears), or
#      --checkpoint FILE as it is.
#   2. decoding, beam --beam (default 5) with length penalty --lenpen (default 0.6):
#        sentence-level data (window 1): fairseq-generate on the binarised split;
#        document-level data (window > 1): scripts/mt/translate_docs.py, sentence by sentence in
#        document order with the model's own previous translations as target context.
#      --decode sentence|doc overrides the choice made from the data's eval/prep.json.
#   3. scoring: scripts/mt/score.py undoes the preprocessing (de-BPE; detruecase + Moses
#      detokenisation for Moses-preprocessed data) and runs SacreBLEU against the raw references.
# A result whose checkpoint and settings did not change is not recomputed (--force redoes it).
# Two evaluations into the same SAVE_DIR/eval/<tag> do not run at once (its .lock names the first).
#
# Options:
#   --data DIR            the recipe's DEST/bin (required)
#   --save-dir DIR        training directory (required)
#   --split NAME          valid or test (default test)
#   --checkpoint FILE     evaluate this checkpoint instead of an average
#   --average-last N      number of last epoch checkpoints to average (default 5)
#   --beam N              beam size (default 5; 1 = greedy)
#   --lenpen X            length penalty (default 0.6)
#   --decode MODE         auto (default), sentence or doc
#   --batch-size N        sentences (documents for doc decoding) per batch (default 64)
#   --tag NAME            name of the output folder under SAVE_DIR/eval (default derived)
#   --cpu                 decode on CPU
#   --force               recompute even if an up-to-date result exists
#   --dry-run             print the averaging and decoding commands instead of running them (no
#                         data needed: without DATA/eval/prep.json, sentence-level en -> de is shown)
#   -h, --help            this help
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
SCRIPT_NAME=evaluate.sh
# shellcheck source=scripts/lib/common.sh
. "$repo/scripts/lib/common.sh"
original_args=("$@")

data="" save_dir="" split=test checkpoint="" avg=5 beam=5 lenpen=0.6 decode=auto batch=64 tag="" cpu=0 force=0 dry_run=0
flags=(
    "--data data a directory" "--save-dir save_dir a directory" "--split split a name"
    "--checkpoint checkpoint a file" "--average-last avg a number" "--beam beam a number"
    "--lenpen lenpen a number" "--decode decode auto, sentence or doc" "--batch-size batch a number"
    "--tag tag a name" "--cpu cpu=1" "--force force=1" "--dry-run dry_run=1"
)
parse_flags flags "$@"
[ -n "$data" ] || die "--data is required (the recipe's DEST/bin)"
[ -n "$save_dir" ] || die "--save-dir is required"
[ -f "$data/eval/prep.json" ] || [ "$dry_run" = 1 ] || die "--data $data has no eval/prep.json; is it a recipe's DEST/bin?"
[ -d "$save_dir" ] || [ "$dry_run" = 1 ] || die "--save-dir $save_dir is not a directory"
case "$split" in valid|test) ;; *) die "--split must be valid or test, got '$split'" ;; esac
case "$decode" in auto|sentence|doc) ;; *) die "--decode must be auto, sentence or doc, got '$decode'" ;; esac
posint --beam "$beam"
posint --average-last "$avg"
posint --batch-size "$batch"
[[ "$lenpen" =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || die "--lenpen expects a number, got '$lenpen'"

find_tools fairseq-generate "$repo"
bindir="$BINDIR" py="$PY"

meta() { "$py" -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$data/eval/prep.json" "$1"; }
if [ -f "$data/eval/prep.json" ]; then
    src="$(meta src)" tgt="$(meta tgt)" window="$(meta window)"
else  # a dry run without data
    src=en tgt=de window=1
fi
if [ "$decode" = auto ]; then
    if [ "$window" -gt 1 ]; then decode=doc; else decode=sentence; fi
fi

# --- 1. checkpoint ----------------------------------------------------------------------------
if [ -n "$checkpoint" ]; then
    [ -f "$checkpoint" ] || [ "$dry_run" = 1 ] || die "--checkpoint $checkpoint does not exist"
    ckpt_tag="$(basename "$checkpoint" .pt)"
else
    checkpoint="$save_dir/average_last$avg.pt"
    ckpt_tag="avg$avg"
    newest="$(find "$save_dir" -maxdepth 1 -regex '.*/checkpoint[0-9]+\.pt' -newer "$checkpoint" 2>/dev/null | head -1 || true)"
    if [ "$dry_run" = 1 ]; then
        printf '%q ' "$py" "$here/average_checkpoints.py" --save-dir "$save_dir" --last-epochs "$avg" --output "$checkpoint"
        echo
    elif [ ! -f "$checkpoint" ] || [ -n "$newest" ]; then
        "$py" "$here/average_checkpoints.py" --save-dir "$save_dir" --last-epochs "$avg" --output "$checkpoint" \
            || die "checkpoint averaging failed (see above)"
    else
        log "reusing $checkpoint (no newer epoch checkpoint)"
    fi
fi

tag="${tag:-${split}_${ckpt_tag}_beam${beam}_lp${lenpen}_${decode}}"
out="$save_dir/eval/$tag"
max_len_a=1.5 max_len_b=20
device=()
[ "$cpu" = 0 ] || device=(--cpu)
if [ "$decode" = doc ]; then
    decode_cmd=("$py" "$here/translate_docs.py" --data "$data" --path "$checkpoint" --split "$split"
                --beam "$beam" --lenpen "$lenpen" --max-len-a "$max_len_a" --max-len-b "$max_len_b"
                --batch-size "$batch" --output "$out/hyp.$split.bpe" "${device[@]}")
else
    # --required-batch-size-multiple 1: the fairseq build in use drops the last
    # (length % multiple) sentences of a split when batches are rounded to a multiple (default 8).
    decode_cmd=("$bindir/fairseq-generate" "$data" --user-dir "$repo/abc_fairseq" --path "$checkpoint"
                --source-lang "$src" --target-lang "$tgt" --gen-subset "$split"
                --beam "$beam" --lenpen "$lenpen" --batch-size "$batch" --required-batch-size-multiple 1
                --max-len-a "$max_len_a" --max-len-b "$max_len_b" "${device[@]}")
fi
if [ "$dry_run" = 1 ]; then
    printf '%q ' "${decode_cmd[@]}"
    echo
    exit 0
fi
take_lock "$out" "${original_args[@]}"  # one evaluation per output folder at a time
trap release_lock EXIT
# Everything the result depends on; max_len is part of the decoding settings.
stamp="$(printf '%s\n' "$(stat -c '%s %Y' "$checkpoint")" "$data" "$split" "$beam" "$lenpen" "$decode" \
    "$max_len_a" "$max_len_b" | sha256sum | cut -d' ' -f1)"
if [ "$force" = 0 ] && [ -f "$out/result.json" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
    log "up to date: $out/result.json"
    "$py" -c "import json,sys; r=json.load(open(sys.argv[1])); print('evaluate.sh: %s BLEU = %.2f' % (r['split'], r['bleu']))" "$out/result.json"
    exit 0
fi
rm -f "$out/result.json" "$out/.stamp"

# --- 2. decoding ------------------------------------------------------------------------------
t0=$SECONDS
if [ "$decode" = doc ]; then
    "${decode_cmd[@]}" || die "document-level decoding failed (see above)"
    score_input=(--hyp-pieces "$out/hyp.$split.bpe")
else
    "${decode_cmd[@]}" >"$out/generate.$split.txt" || die "fairseq-generate failed (see above)"
    score_input=(--generate-output "$out/generate.$split.txt")
fi
decode_s=$((SECONDS - t0))

# --- 3. scoring -------------------------------------------------------------------------------
info="$("$py" "$repo/scripts/lib/write_json.py" - "checkpoint=$checkpoint" "beam:=$beam" "lenpen:=$lenpen" \
    "decode=$decode" "decode_seconds:=$decode_s")" || die "cannot record the evaluation settings"
"$py" "$here/score.py" --data "$data" --split "$split" "${score_input[@]}" --out-dir "$out" \
    --save-dir "$save_dir" --info "$info" || die "scoring failed (see above)"
printf '%s\n' "$stamp" >"$out/.stamp"
log "wrote $out/result.json"
