"""Fixtures of the model tests: tiny abc_transformer models (transformer_helpers), each built once per
test file that uses it."""

import pytest


@pytest.fixture(scope="module")
def mt(mt_dir):
    """abc_transformer (tiny), a (task, model) pair. Default layout: ABC causal and cross attention, softmax encoder."""
    from transformer_helpers import TINY, build

    return build(mt_dir, *TINY)


@pytest.fixture(scope="module")
def mt_all_abc(mt_dir):
    """ABC in all three positions (the paper's MLP-exp-all)."""
    from transformer_helpers import ENCODER_ABC, TINY, build

    return build(mt_dir, *TINY, *ENCODER_ABC)


@pytest.fixture(scope="module")
def mt_untied(mt_dir):
    """ABC in all three positions with ``--untie-phi``: one W_phi per layer (not the paper's model)."""
    from transformer_helpers import ENCODER_ABC, TINY, build

    return build(mt_dir, *TINY, *ENCODER_ABC, "--untie-phi")


@pytest.fixture(scope="module")
def mt_window(mt_dir):
    """Table 7's Window row: window in cross (the last n source tokens) and causal attention."""
    from transformer_helpers import TINY, build

    return build(mt_dir, *TINY, "--decoder-cross-attn", "window", "--decoder-self-attn", "window")
