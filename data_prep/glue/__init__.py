"""GLUE for RoBERTa fine-tuning: download and preparation (``prepare``) and RoBERTa's GPT-2 BPE
(``roberta_bpe``, also used by ``data_prep/mlm/prepare.sh``)."""
