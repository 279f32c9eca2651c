"""Every strategy behind fairseq's attention API (float64): ABCMultiheadAttention in its three
modes, the options and specs, and abc_lm built from the command line with each strategy."""

from argparse import Namespace

import pytest
import torch
import torch.nn as nn

import abc_fairseq  # noqa: F401 (registers the fairseq side)
from abc_fairseq.models import (ATTENTION_CHOICES, DECODER_CROSS, DECODER_SELF, ENCODER_SELF,
                                abc_attention_spec, abc_memory_size, attention_strategy, strategy_options)
from abc_fairseq.modules import ABCMultiheadAttention, phi_parameter_overhead
from abc_fairseq.strategies import STRATEGIES, ControlModule
from strategies_helpers import one_thread  # noqa: F401 (autouse fixture)

E, H, N_SLOTS = 16, 2, 4
MODE_KWARGS = {
    "causal": dict(self_attention=True, causal=True),
    "encoder": dict(self_attention=True),
    "cross": dict(encoder_decoder_attention=True),
}


def make_attention(name, mode, position=DECODER_SELF, seed=0, **cfg):
    """One attention module built through ``abc_attention_spec`` as a model builds it."""
    torch.manual_seed(seed)
    owner = nn.Module()
    args = Namespace(**{position.attn_key: name, position.memory_key: N_SLOTS,
                        "max_target_positions": 32, "max_source_positions": 32, **cfg})
    spec = abc_attention_spec(owner, args, position, E, H)
    attn = ABCMultiheadAttention(E, H, memory_size=spec.memory_size, phi=spec.phi, strategy=spec.strategy,
                                 strategy_options=spec.options, **MODE_KWARGS[mode])
    owner.double()
    return attn.double().eval(), owner


def future_mask(T):
    return torch.triu(torch.full((T, T), float("-inf"), dtype=torch.float64), 1)


def step_by_step(attn, x, state=None, key_padding_mask=None):
    state = {} if state is None else state
    outs = []
    for t in range(x.shape[0]):
        kpm = None if key_padding_mask is None else key_padding_mask[:, t:t + 1]
        outs.append(attn(x[t:t + 1], x[t:t + 1], x[t:t + 1], key_padding_mask=kpm, incremental_state=state)[0])
    return torch.cat(outs), state


def modes_of(mode):
    return [name for name, cls in STRATEGIES.items() if mode in cls.modes]


def test_choices_come_from_the_registry():
    assert ATTENTION_CHOICES[:2] == ("abc", "softmax")
    assert set(ATTENTION_CHOICES) == set(STRATEGIES) | {"softmax"}


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
    attn, _ = make_attention(name, "cross", position=DECODER_CROSS)
    enc = torch.randn(9, 3, E, dtype=torch.float64)
    enc_mask = torch.zeros(3, 9, dtype=torch.bool)
    enc_mask[2, :4] = True
    dec = torch.randn(5, 3, E, dtype=torch.float64)
    full, _ = attn(dec, enc, enc, key_padding_mask=enc_mask, static_kv=True)
    state, outs = {}, []
    for t in range(5):
        key = enc if t == 0 else torch.randn_like(enc)  # the cached memory is used after step 0
        outs.append(attn(dec[t:t + 1], key, key, key_padding_mask=enc_mask, incremental_state=state,
                         static_kv=True)[0])
    torch.testing.assert_close(torch.cat(outs), full, rtol=0, atol=1e-12)
    alone, _ = attn(dec[:, 2:], enc[4:, 2:], enc[4:, 2:], static_kv=True)
    torch.testing.assert_close(full[:, 2:], alone, rtol=0, atol=1e-12)
    order = torch.tensor([1, 1, 0])
    attn.reorder_incremental_state(state, order)
    step, _ = attn(dec[:1, order], None, None, incremental_state=state, static_kv=True)
    torch.testing.assert_close(step, full[:1, order], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", modes_of("encoder"))
def test_encoder_module_ignores_padding(name):
    attn, _ = make_attention(name, "encoder", position=ENCODER_SELF)
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
            assert specs[0].phi is None and not list(owner.children())
        else:
            assert len({id(spec.phi) for spec in specs}) == 1
            assert list(owner._modules) == ["self_attn_phi"] and isinstance(specs[0].phi, ControlModule)


def test_options_validation_names_the_flags():
    assert attention_strategy(Namespace(decoder_self_attn="softmax"), DECODER_SELF) is None
    assert abc_memory_size(Namespace(decoder_self_attn="window", decoder_self_memory=5), DECODER_SELF) == 5
    with pytest.raises(ValueError, match="--decoder-self-attn must be one of"):
        attention_strategy(Namespace(decoder_self_attn="flash"), DECODER_SELF)
    with pytest.raises(ValueError, match="--decoder-cross-attn window is not available for cross"):
        make_attention("window", "cross", position=DECODER_CROSS)
    with pytest.raises(ValueError, match="--linformer-max-positions"):
        make_attention("linformer", "causal", max_target_positions=None)
    with pytest.raises(ValueError, match="--compressive-ratio must be a positive integer"):
        make_attention("abc", "causal", compressive_ratio=0)
    # N_max defaults to the position's maximum length (RoBERTa-style encoders: max_positions).
    assert strategy_options(Namespace(max_target_positions=40), DECODER_SELF).linformer_max_positions == 40
    assert strategy_options(Namespace(max_positions=77), ENCODER_SELF).linformer_max_positions == 77
    assert strategy_options(Namespace(max_positions=77, linformer_max_positions=9),
                            DECODER_CROSS).linformer_max_positions == 9


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
