"""abc_lm built by fairseq's parser with every causal strategy (--decoder-self-attn NAME):
incremental decoding equals the full forward, the future never leaks, padding is never
written, tied modules are registered once (float64, a 2-layer 32-dim model)."""

import pytest
import torch
from fairseq_helpers import build as build_model
from fairseq_helpers import parse_error

import abc_fairseq.models  # noqa: F401 (registers abc_lm)
from abc_fairseq.modules import ABCMultiheadAttention
from abc_fairseq.strategies import STRATEGIES, ControlModule

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = ["--arch", "abc_lm", "--decoder-layers", "2", "--decoder-embed-dim", "32", "--decoder-ffn-embed-dim",
        "64", "--decoder-attention-heads", "4", "--dropout", "0", "--tokens-per-sample", "32",
        "--decoder-self-memory", "6", "--compressive-ratio", "2"]
CAUSAL = [name for name, cls in STRATEGIES.items() if "causal" in cls.modes]


def build(data_dir, *flags):
    task, model = build_model([data_dir, "--task", "language_modeling", *TINY, *flags])
    return task, model.double().eval()


def tokens_for(task, batch, length, seed=0):
    g = torch.Generator().manual_seed(seed)
    d = task.target_dictionary
    tokens = torch.randint(d.nspecial, len(d), (batch, length), generator=g)
    tokens[:, 0] = d.eos()
    return tokens


def log_probs(model, tokens):
    return model.get_normalized_probs(model(tokens), log_probs=True)


@pytest.mark.parametrize("name", CAUSAL)
def test_lm_with_each_strategy(lm_dir, name):
    task, model = build(lm_dir, "--decoder-self-attn", name)
    layers = model.decoder.layers
    assert all(isinstance(layer.self_attn, ABCMultiheadAttention) for layer in layers)
    assert {layer.self_attn.strategy.name for layer in layers} == {name}
    shared = [m for m in model.decoder.children() if isinstance(m, ControlModule)]
    assert len(shared) <= 1 and all(layer.self_attn.phi is (shared[0] if shared else None) for layer in layers)

    tokens = tokens_for(task, 2, 12)
    full = log_probs(model, tokens)
    state = {}
    for t in range(tokens.shape[1]):
        step = model.get_normalized_probs(model.decoder(tokens[:, : t + 1], incremental_state=state),
                                          log_probs=True)[:, -1]
        torch.testing.assert_close(step, full[:, t], rtol=0, atol=1e-10)

    changed = tokens.clone()
    changed[:, 8:] = tokens_for(task, 2, 12, seed=7)[:, 8:]
    torch.testing.assert_close(log_probs(model, changed)[:, :8], full[:, :8], rtol=0, atol=1e-12)

    pad = task.target_dictionary.pad()
    short = tokens[1, 3:].clone()
    short[0] = task.target_dictionary.eos()
    batch = tokens.clone()
    batch[1, :3] = pad
    batch[1, 3:] = short
    torch.testing.assert_close(log_probs(model, batch)[1, 3:], log_probs(model, short[None])[0],
                               rtol=0, atol=1e-10)


def test_linformer_lm_too_long_names_the_flag(lm_dir):
    task, model = build(lm_dir, "--decoder-self-attn", "linformer", "--linformer-max-positions", "8")
    with pytest.raises(ValueError, match="--linformer-max-positions"):
        model(tokens_for(task, 1, 9))
    assert torch.isfinite(log_probs(model, tokens_for(task, 1, 8))).all()


@pytest.mark.parametrize("flags, message", [
    (["--linformer-max-positions", "0"], "argument --linformer-max-positions: must be a positive number"),
    (["--compressive-ratio", "x"], "argument --compressive-ratio: expected a positive number"),
])
def test_bad_strategy_settings_fail_at_parsing(lm_dir, capsys, flags, message):
    assert message in parse_error([lm_dir, "--task", "language_modeling", *TINY, *flags], capsys)
