"""The ``gsa`` strategy (gated slot attention, causal only): the strategy equals the naive
recurrence for every temperature (a positive real; an integer from an old config loads) and memory
size, with padding; the gate projection is tied across
layers (``--untie-phi`` unties it); ``--gsa-temperature`` reaches every layer and bad values fail at
parsing; encoder and cross positions refuse ``gsa`` at parsing; abc_lm and abc_transformer with GSA
decode incrementally exactly as they score, and train (several tokens per incremental call: the
generic strategy tests)."""

import pytest
import torch
from fairseq_helpers import build, parse, parse_error
from strategies_helpers import inputs, left_padded, make, real_rows, steps

import abc_fairseq.models  # noqa: F401 (registers the models)
from abc_fairseq.modules import phi_parameter_overhead
from abc_fairseq.strategies import STRATEGIES, StrategyOptions
from abc_fairseq.strategies.gsa import GateProjection

pytestmark = pytest.mark.usefixtures("one_thread")

LM = ["--task", "language_modeling", "--arch", "abc_lm", "--decoder-layers", "2", "--decoder-embed-dim", "32",
      "--decoder-ffn-embed-dim", "64", "--decoder-attention-heads", "4", "--dropout", "0", "--tokens-per-sample",
      "32", "--decoder-self-attn", "gsa", "--decoder-self-memory", "6"]
MT = ["--task", "translation", "-s", "src", "-t", "tgt", "--arch", "abc_transformer_tiny", "--encoder-embed-dim", "32",
      "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64",
      "--encoder-attention-heads", "4", "--decoder-attention-heads", "4", "--dropout", "0"]


@pytest.mark.parametrize("temperature", [1, 2.5, 8, 64.0])
@pytest.mark.parametrize("n", [1, 3, 4])
@pytest.mark.parametrize("logit_scale", [1.0, 30.0])
def test_strategy_equals_the_reference(temperature, n, logit_scale):
    strategy = make("gsa", n=n, options=StrategyOptions(gsa_temperature=temperature))
    strategy.shared.weight.data *= logit_scale  # 30: gates from ~exp(-150 / tau) to 1 - 1e-30
    q, k, v, x = inputs(3, 9, seed=n)
    valid = left_padded()
    expected = real_rows(strategy.naive(q, k, v, x, valid), valid)
    got = strategy.causal(q, k, v, x, valid)
    torch.testing.assert_close(real_rows(got, valid), expected, rtol=0, atol=1e-10)
    torch.testing.assert_close(steps(strategy, q, k, v, x, valid)[0], got, rtol=0, atol=1e-10)
    assert strategy.temperature == temperature and isinstance(strategy.temperature, float)


def test_naive_gates_are_the_papers():
    """The oracle's gates: a = sigmoid(W_alpha x) ** (1 / tau), written out here once more."""
    strategy = make("gsa", options=StrategyOptions(gsa_temperature=2.5))
    q, k, v, x = inputs(1, 5)
    a = torch.sigmoid(strategy.shared(x).view(1, 5, 2, 4).permute(0, 2, 1, 3)) ** (1 / 2.5)
    key_memory = value_memory = torch.zeros(1, 2, 4, 4, dtype=torch.float64)
    for t in range(5):
        key_memory = a[:, :, t, :, None] * key_memory + (1 - a[:, :, t, :, None]) * k[:, :, t, None]
        value_memory = a[:, :, t, :, None] * value_memory + (1 - a[:, :, t, :, None]) * v[:, :, t, None]
        probs = torch.softmax(strategy.scale * torch.einsum("bhnd,bhd->bhn", key_memory, q[:, :, t]), dim=-1)
        row = torch.einsum("bhn,bhnd->bhd", probs, value_memory)
        torch.testing.assert_close(strategy.naive(q, k, v, x, None)[:, :, t], row, rtol=0, atol=1e-12)


def test_only_causal_and_the_mode_error_names_the_flag():
    assert STRATEGIES["gsa"].modes == {"causal"}
    options = StrategyOptions({"attn": "--encoder-attn"})
    with pytest.raises(ValueError, match="--encoder-attn gsa is not available for encoder attention"):
        STRATEGIES["gsa"].validate(4, options, "encoder")


@pytest.mark.parametrize("flag", ["--encoder-attn", "--decoder-cross-attn"])
def test_encoder_and_cross_positions_refuse_gsa_at_parsing(mt_dir, capsys, flag):
    assert f"argument {flag}: invalid choice: 'gsa'" in parse_error([mt_dir, *MT, flag, "gsa"], capsys)
    args = parse([mt_dir, *MT, "--decoder-self-attn", "gsa"])
    assert args.decoder_self_attn == "gsa"


def test_temperature_flag_reaches_every_layer(lm_dir, capsys):
    _, model = build([lm_dir, *LM])
    assert {layer.self_attn.strategy.temperature for layer in model.decoder.layers} == {8}  # the paper's
    _, model = build([lm_dir, *LM, "--gsa-temperature", "0.5"])
    assert {layer.self_attn.strategy.temperature for layer in model.decoder.layers} == {0.5}
    for bad in ("0", "-2", "nan", "inf", "warm"):
        error = parse_error([lm_dir, *LM, "--gsa-temperature", bad], capsys)
        assert "argument --gsa-temperature:" in error and "a positive number (temperature)" in error


def test_an_integer_temperature_from_an_old_config_loads():
    """Configs written when tau was an integer flag hold an int: it reads as that float."""
    from argparse import Namespace

    from abc_fairseq.models import DECODER_SELF, read_attention

    args = Namespace(decoder_self_attn="gsa", decoder_self_memory=4, gsa_temperature=3)
    options = read_attention(args, DECODER_SELF).options
    strategy = make("gsa", options=options)
    assert strategy.temperature == 3.0 and isinstance(strategy.temperature, float)
    with pytest.raises(ValueError, match="--gsa-temperature must be a positive number"):
        read_attention(Namespace(decoder_self_attn="gsa", gsa_temperature=0), DECODER_SELF)


def test_gate_projection_is_tied_and_untie_phi_unties_it(lm_dir):
    _, tied = build([lm_dir, *LM])
    gates = [layer.self_attn.phi for layer in tied.decoder.layers]
    assert isinstance(gates[0], GateProjection) and gates[0] is gates[1] is tied.decoder.self_attn_phi
    assert phi_parameter_overhead(tied)[0] == 32 * 4 * 6
    _, untied = build([lm_dir, *LM, "--untie-phi"])
    per_layer = untied.decoder.self_attn_phi_per_layer
    assert [layer.self_attn.phi for layer in untied.decoder.layers] == list(per_layer)
    assert per_layer[0] is not per_layer[1] and phi_parameter_overhead(untied)[0] == 2 * 32 * 4 * 6


def _incremental(decoder, prev, **kwargs):
    """Decode ``prev`` token by token as fairseq's generator does (the decoder reads the last token
    of the prefix it is given; the attention keeps only its constant-size state)."""
    state = {}
    return torch.cat([decoder(prev[:, :t + 1], incremental_state=state, **kwargs)[0][:, -1:]
                      for t in range(prev.shape[1])], dim=1)


def test_lm_decodes_as_it_scores(lm_dir):
    task, model = build([lm_dir, *LM])
    model = model.double().eval()
    tokens = torch.randint(task.target_dictionary.nspecial, 30, (3, 11), generator=torch.Generator().manual_seed(0))
    tokens[:, 0] = task.target_dictionary.eos()
    full = model(tokens)[0]
    torch.testing.assert_close(_incremental(model.decoder, tokens), full, rtol=0, atol=1e-10)


def test_translation_decoder_with_gsa_decodes_as_it_scores(mt_dir):
    task, model = build([mt_dir, *MT, "--decoder-self-attn", "gsa", "--decoder-self-memory", "5"])
    model = model.double().eval()
    g = torch.Generator().manual_seed(1)
    src = torch.randint(task.source_dictionary.nspecial, 30, (2, 6), generator=g)
    src[1, :2] = task.source_dictionary.pad()
    lengths = (src != task.source_dictionary.pad()).sum(1)
    prev = torch.randint(task.target_dictionary.nspecial, 30, (2, 8), generator=g)
    prev[:, 0] = task.target_dictionary.eos()
    full = model(src, lengths, prev)[0]
    encoder_out = model.encoder(src, src_lengths=lengths)
    stepped = _incremental(model.decoder, prev, encoder_out=encoder_out)
    torch.testing.assert_close(stepped, full, rtol=0, atol=1e-10)


def test_lm_trains_with_attention_dropout(lm_dir):
    """fp32 training mode with attention dropout over the slots: finite loss and gradients that
    reach the tied gate projection; two draws differ, evaluation is deterministic."""
    task, model = build([lm_dir, *LM, "--attention-dropout", "0.2"])
    tokens = torch.randint(task.target_dictionary.nspecial, 30, (2, 20), generator=torch.Generator().manual_seed(2))
    model.train()
    first = model(tokens)[0]
    first.logsumexp(-1).mean().backward()
    assert torch.isfinite(first).all() and not torch.equal(first, model(tokens)[0])
    gate = model.decoder.self_attn_phi.weight
    assert gate.grad is not None and torch.isfinite(gate.grad).all() and gate.grad.abs().sum() > 0
    model.eval()
    assert torch.equal(model(tokens)[0], model(tokens)[0])
