"""Helpers of data_prep/prepare_wikitext103.sh."""
