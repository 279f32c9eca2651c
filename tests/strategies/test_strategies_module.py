"""Every strategy behind fairseq's attention API (float64): ABCMultiheadAttention in its three
modes, the options and specs, and abc_lm built from the command line with each strategy."""

from argparse import Namespace

import attention_helpers as helpers
import pytest
import torch
import torch.nn as nn
from attention_helpers import E, H, check_cross_attention, future_mask, step_by_step

import abc_fairseq.models  # noqa: F401 (registers the fairseq side)
from abc_fairseq.models import (
    DECODER_CROSS,
    DECODER_SELF,
    ENCODER_SELF,
    abc_attention_spec,
    abc_memory_size,
    attention_strategy,
    strategy_options,
)
from abc_fairseq.models.abc_options import attention_choices
from abc_fairseq.modules import phi_parameter_overhead
from abc_fairseq.strategies import STRATEGIES, ControlModule

pytestmark = pytest.mark.usefixtures("one_thread")

N_SLOTS = 4


def make_attention(name, mode, seed=0, **cfg):
    return helpers.make_attention(mode, name, memory=N_SLOTS, seed=seed, **cfg)


def modes_of(mode):
    return [name for name, cls in STRATEGIES.items() if mode in cls.modes]


def test_choices_come_from_the_registry():
    assert attention_choices()[:2] == ("abc", "softmax")
    assert set(attention_choices()) == set(STRATEGIES) | {"softmax"}


@pytest.mark.parametrize("name", modes_of("causal"))
def test_causal_module_full_equals_incremental_and_reorders(name):
    attn, _ = make_attention(name, "causal")
    x = torch.randn(8, 3, E, dtype=torch.float64)
    mask = torch.zeros(3, 8, dtype=torch.bool)
    mask[1, :2] = True  # a left-padded row
    full, _ = attn(x, x, x, key_padding_mask=mask, attn_mask=future_mask(8))
    inc, state = step_by_step(attn, x, key_padding_mask=mask)
    torch.testing.assert_close(inc, full, rtol=0, atol=1e-10)

    order = torch.tensor([2, 0, 2])  # beam search: reorder and repeat
    _, state = step_by_step(attn, x[:5], key_padding_mask=mask)
    attn.reorder_incremental_state(state, order)
    rest, _ = step_by_step(attn, x[5:, order], state, key_padding_mask=mask[order, 5:])
    torch.testing.assert_close(rest, full[5:, order], rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", modes_of("cross"))
def test_cross_module_caches_the_memory_and_reorders(name):
    attn, _ = make_attention(name, "cross")
    check_cross_attention(attn)


@pytest.mark.parametrize("name", modes_of("encoder"))
def test_encoder_module_ignores_padding(name):
    attn, _ = make_attention(name, "encoder")
    x = torch.randn(6, 1, E, dtype=torch.float64)
    padded = torch.cat([torch.randn(2, 1, E, dtype=torch.float64) * 10, x])
    mask = torch.tensor([[True, True] + [False] * 6])
    torch.testing.assert_close(attn(padded, padded, padded, key_padding_mask=mask)[0][2:],
                               attn(x, x, x)[0], rtol=0, atol=1e-10)


def test_shared_modules_are_registered_once_per_position():
    for name, cls in STRATEGIES.items():
        owner = nn.Module()
        args = Namespace(decoder_self_attn=name, decoder_self_memory=N_SLOTS, max_target_positions=32)
        specs = [abc_attention_spec(owner, args, DECODER_SELF, E, H) for _ in range(3)]
        shared = cls.build_shared(E, H, N_SLOTS, specs[0].options)
        if shared is None:
            assert specs[0].shared is None and not list(owner.children())
        else:
            assert len({id(spec.shared) for spec in specs}) == 1
            assert list(owner._modules) == ["self_attn_phi"] and isinstance(specs[0].shared, ControlModule)


def test_options_validation_names_the_flags(monkeypatch):
    assert attention_strategy(Namespace(decoder_self_attn="softmax"), DECODER_SELF) is None
    assert abc_memory_size(Namespace(decoder_self_attn="window", decoder_self_memory=5), DECODER_SELF) == 5
    with pytest.raises(ValueError, match="--decoder-self-attn must be one of"):
        attention_strategy(Namespace(decoder_self_attn="flash"), DECODER_SELF)
    # Every registered strategy has every mode now (window's cross form, issue 15): take one away.
    with monkeypatch.context() as patched:
        patched.setattr(STRATEGIES["window"], "modes", frozenset({"causal", "encoder"}))
        with pytest.raises(ValueError, match="--decoder-cross-attn window is not available for cross"):
            make_attention("window", "cross")
    assert make_attention("window", "cross")[0].strategy.mode == "cross"
    with pytest.raises(ValueError, match="--linformer-max-positions"):
        make_attention("linformer", "causal", max_target_positions=None)
    with pytest.raises(ValueError, match="--compressive-ratio must be a positive integer"):
        make_attention("abc", "causal", compressive_ratio=0)
    # N_max defaults to the position's maximum length (RoBERTa-style encoders: max_positions).
    def n_max(position, **cfg):
        args = Namespace(**{position.attn_key: "linformer"}, **cfg)
        return strategy_options(args, position).values["linformer_max_positions"]

    assert n_max(DECODER_SELF, max_target_positions=40) == 40
    assert n_max(ENCODER_SELF, max_positions=77) == 77
    assert n_max(DECODER_CROSS, max_positions=77, linformer_max_positions=9) == 9
    # A strategy gets only its own settings.
    assert strategy_options(Namespace(decoder_self_attn="abc", compressive_ratio=3), DECODER_SELF).values == {}


def test_linformer_too_long_fails_at_the_first_batch_naming_the_flag():
    attn, _ = make_attention("linformer", "causal", linformer_max_positions=6)
    x = torch.randn(7, 1, E, dtype=torch.float64)
    with pytest.raises(ValueError, match="--linformer-max-positions"):
        attn(x, x, x)
    attn(x[:6], x[:6], x[:6])


def test_parameter_overhead_counts_every_control_module():
    attn, owner = make_attention("abc", "causal")
    extra, _, _ = phi_parameter_overhead(nn.ModuleList([owner, attn]))
    assert extra == E * H * N_SLOTS
    attn, owner = make_attention("window", "causal")
    assert phi_parameter_overhead(nn.ModuleList([owner, attn]))[0] == 0
