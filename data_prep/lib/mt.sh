# shellcheck shell=bash
# What the translation recipes (data_prep/wmt14_en_de/prepare.sh, data_prep/mt/prepare_doc_corpus.sh)
# share besides data_prep/lib/common.sh (sourced, never executed). The functions read the recipe's
# settings: src, tgt, workers, bpe_size, and preprocess (the path of fairseq-preprocess).
#
#   mt_binarise TEXT OUT              fairseq-preprocess TEXT/{train,valid,test} into OUT, one dictionary
#   mt_eval_meta OUT PIPELINE WINDOW SEP   OUT/eval/prep.json, how scoring undoes the preprocessing

# mt_binarise TEXT OUT: binarise TEXT/{train,valid,test}.{src,tgt} into OUT with one dictionary for
# both languages (the models share their embeddings), and create OUT/eval for what scoring reads.
mt_binarise() {
    "$preprocess" --source-lang "$src" --target-lang "$tgt" \
        --trainpref "$1/train" --validpref "$1/valid" --testpref "$1/test" \
        --joined-dictionary --destdir "$2" --workers "$workers" \
        || die "fairseq-preprocess failed (see its output above)"
    mkdir -p "$2/eval"
}

# mt_eval_meta OUT PIPELINE WINDOW SEP: write OUT/eval/prep.json, read by scripts/mt (evaluate.sh,
# score.py, translate_docs.py). SEP is a JSON value: a quoted token, or null without windows.
# Written by Python (scripts/lib/write_json.py), never pasted together; needs $py and $repo.
mt_eval_meta() {
    "$py" "$repo/scripts/lib/write_json.py" "$1/eval/prep.json" format=abc-fairseq-mt-eval/1 src="$src" \
        tgt="$tgt" pipeline="$2" window:="$3" sep:="$4" bpe_size:="$bpe_size" \
        || die "cannot write $1/eval/prep.json"
}
