#!/usr/bin/env bash
# Download GLUE and prepare it for fairseq's sentence_prediction task with RoBERTa's GPT-2 BPE.
#
#   bash data_prep/glue/prepare.sh --dest data-bin/glue [--tasks MNLI QNLI QQP SST-2] [--mirror DIR] [--workers N]
#
# Default: all tasks (MNLI QNLI QQP SST-2 RTE MRPC CoLA STS-B WNLI). Result per task: DEST/TASK-bin
# with input0/ [input1/] label/, splits train and valid (MNLI: valid1 = dev mismatched), the layout
# scripts/roberta/finetune_glue.sh reads. Files are fetched with resume by data_prep/lib/fetch.py
# and verified against the published sha256 pinned in data_prep/glue/SHA256SUMS (RoBERTa's BPE
# files, for which none is published, are recorded on the first download with a warning);
# --mirror DIR (or $ABC_DATA_MIRROR) takes them from a local directory instead. Re-running skips
# finished tasks. DEST must be absent, empty or an earlier output of this recipe.
# All options: bash data_prep/glue/prepare.sh --help
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
exec "${PYTHON:-python}" -m data_prep.glue.prepare "$@"
