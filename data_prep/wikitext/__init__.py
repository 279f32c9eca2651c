"""Helpers of data_prep/wikitext/prepare.sh."""
