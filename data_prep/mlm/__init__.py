"""Helpers of data_prep/mlm/prepare.sh: document shuffling and sharding, the public substitute corpus."""
