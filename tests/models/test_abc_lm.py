"""abc_lm built through fairseq: full vs incremental decoding, causality, flags, softmax baseline."""

from argparse import Namespace

import pytest
import torch
from fairseq import tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq.modules import MultiheadAttention
from fairseq.sequence_generator import SequenceGenerator
from fairseq_helpers import build as build_model
from fairseq_helpers import fairseq, parse_error
from fairseq_helpers import parse as parse_args
from omegaconf import OmegaConf

import abc_fairseq.models  # noqa: F401 (registers abc_lm)
from abc_fairseq.modules import ABCMultiheadAttention, phi_parameter_overhead
from abc_fairseq.strategies import PhiProjection

TINY = ["--decoder-layers", "2", "--decoder-embed-dim", "32", "--decoder-ffn-embed-dim", "64",
        "--decoder-attention-heads", "4", "--dropout", "0", "--tokens-per-sample", "64"]


def parse(data_dir, *flags):
    return parse_args([data_dir, "--task", "language_modeling", *flags])


def build(data_dir, *flags, seed=1):
    return build_model([data_dir, "--task", "language_modeling", *flags], seed)


@pytest.fixture(scope="module")
def lm(lm_dir):
    task, model = build(lm_dir, "--arch", "abc_lm_small", "--decoder-self-memory", "6", *TINY)
    return task, model.double().eval()


def random_tokens(task, batch, length, seed=0):
    g = torch.Generator().manual_seed(seed)
    d = task.target_dictionary
    tokens = torch.randint(d.nspecial, len(d), (batch, length), generator=g)
    tokens[:, 0] = d.eos()  # fairseq LMs start from eos
    return tokens


def full_log_probs(model, tokens):
    return model.get_normalized_probs(model(tokens), log_probs=True)


def test_model_is_abc(lm):
    task, model = lm
    layers = model.decoder.layers
    assert len(layers) == 2
    assert all(isinstance(layer.self_attn, ABCMultiheadAttention) for layer in layers)
    assert all(layer.self_attn.causal and layer.self_attn.memory_size == 6 for layer in layers)


def test_full_forward_equals_incremental_decoding(lm):
    task, model = lm
    tokens = random_tokens(task, 3, 14)
    full = full_log_probs(model, tokens)
    state = {}
    for t in range(tokens.shape[1]):
        out = model.decoder(tokens[:, : t + 1], incremental_state=state)
        step = model.get_normalized_probs(out, log_probs=True)[:, -1]
        torch.testing.assert_close(step, full[:, t], rtol=0, atol=1e-10)


def rescore(model, task, hypo_tokens):
    """Full-forward log-probs of each token of a hypothesis (which ends with eos)."""
    inputs = torch.cat([torch.tensor([task.target_dictionary.eos()]), hypo_tokens[:-1]])[None]
    full = full_log_probs(model, inputs)[0]
    return full[torch.arange(len(hypo_tokens)), hypo_tokens]


@pytest.fixture
def lm_float(lm):
    task, model = lm
    yield task, model.float()  # SequenceGenerator keeps its scores in fp32
    model.double()


def test_beam_search_scores_match_full_forward(lm_float):
    """Beam search (beam 3) after a two-token prompt: the beams diverge and are reordered every
    step, and sentences finish at different steps (the batch shrinks). Every returned hypothesis
    must carry, token by token, the log-probs the full forward pass gives it."""
    task, model = lm_float
    tokens = random_tokens(task, 2, 3, seed=3)
    generator = SequenceGenerator([model], task.target_dictionary, beam_size=3,
                                  max_len_a=0, max_len_b=9, min_len=2)
    sample = {"net_input": {"src_tokens": tokens, "src_lengths": torch.full((2,), 3)}}
    hypos = generator.generate([model], sample, prefix_tokens=tokens[:, 1:])
    distinct = set()
    for sentence in hypos:
        for hypo in sentence:
            distinct.add(tuple(hypo["tokens"].tolist()))
            torch.testing.assert_close(hypo["positional_scores"], rescore(model, task, hypo["tokens"]),
                                       rtol=0, atol=2e-5)
    assert len(distinct) >= 4  # the beams really did diverge


def test_prefix_forced_generation_scores_match_full_forward(lm_float):
    task, model = lm_float
    tokens = random_tokens(task, 2, 10, seed=4)
    prefix = tokens[:, 1:]
    generator = SequenceGenerator([model], task.target_dictionary, beam_size=2,
                                  max_len_a=0, max_len_b=prefix.shape[1] + 2)
    sample = {"net_input": {"src_tokens": tokens, "src_lengths": torch.full((2,), 10)}}
    hypos = generator.generate([model], sample, prefix_tokens=prefix)
    full = full_log_probs(model, tokens)
    for b in range(2):
        best = hypos[b][0]
        assert torch.equal(best["tokens"][: prefix.shape[1]], prefix[b])
        expected = full[b, torch.arange(prefix.shape[1]), prefix[b]]
        torch.testing.assert_close(best["positional_scores"][: prefix.shape[1]], expected,
                                   rtol=0, atol=2e-5)


def test_future_tokens_do_not_change_past_outputs(lm):
    task, model = lm
    tokens = random_tokens(task, 2, 16)
    changed = tokens.clone()
    changed[:, 9:] = random_tokens(task, 2, 16, seed=7)[:, 9:]
    a, b = full_log_probs(model, tokens), full_log_probs(model, changed)
    torch.testing.assert_close(a[:, :9], b[:, :9], rtol=0, atol=1e-12)
    assert not torch.allclose(a[:, 9:], b[:, 9:])


def test_left_padded_batch_matches_single_sequences(lm):
    task, model = lm
    pad = task.target_dictionary.pad()
    tokens = random_tokens(task, 2, 12)
    short = tokens[1, 4:].clone()
    short[0] = task.target_dictionary.eos()
    batch = tokens.clone()
    batch[1, :4] = pad
    batch[1, 4:] = short
    out = full_log_probs(model, batch)
    torch.testing.assert_close(out[0], full_log_probs(model, tokens[:1])[0], rtol=0, atol=1e-10)
    torch.testing.assert_close(out[1, 4:], full_log_probs(model, short[None])[0], rtol=0, atol=1e-10)


def test_phi_is_one_tensor_shared_by_all_layers(lm):
    task, model = lm
    phi = model.decoder.self_attn_phi
    assert isinstance(phi, PhiProjection)
    assert {layer.self_attn.phi.weight.data_ptr() for layer in model.decoder.layers} == {phi.weight.data_ptr()}
    assert [n for n, _ in model.named_parameters() if "phi" in n] == ["decoder.self_attn_phi.weight"]
    assert sum(isinstance(m, PhiProjection) for m in model.modules()) == 1
    extra, total, fraction = phi_parameter_overhead(model)
    assert extra == 32 * 4 * 6 and total == sum(p.numel() for p in model.parameters())
    assert fraction == pytest.approx(extra / (total - extra))


def test_untie_phi_gives_every_layer_its_own_phi(lm_dir, lm):
    _, model = build(lm_dir, "--arch", "abc_lm_small", "--decoder-self-memory", "6", "--untie-phi", *TINY)
    phis = model.decoder.self_attn_phi_per_layer
    assert [layer.self_attn.phi for layer in model.decoder.layers] == list(phis) and phis[0] is not phis[1]
    assert [n for n, _ in model.named_parameters() if "phi" in n] == [
        "decoder.self_attn_phi_per_layer.0.weight", "decoder.self_attn_phi_per_layer.1.weight"]
    assert phi_parameter_overhead(model)[0] == 2 * phi_parameter_overhead(lm[1])[0]


def test_softmax_flag_builds_fairseqs_decoder(lm_dir):
    _, soft = build(lm_dir, "--arch", "abc_lm", "--decoder-self-attn", "softmax", *TINY, seed=5)
    _, ref = build(lm_dir, "--arch", "transformer_lm", *TINY, seed=5)
    assert all(type(layer.self_attn) is MultiheadAttention for layer in soft.decoder.layers)
    assert not any(isinstance(m, (PhiProjection, ABCMultiheadAttention)) for m in soft.modules())
    soft_state, ref_state = soft.state_dict(), ref.state_dict()
    assert {k: v.shape for k, v in soft_state.items()} == {k: v.shape for k, v in ref_state.items()}
    ref.load_state_dict(soft_state, strict=True)
    tokens = torch.randint(4, 30, (2, 9))
    soft.eval(), ref.eval()
    torch.testing.assert_close(soft(tokens)[0], ref(tokens)[0], rtol=0, atol=0)


def test_abc_and_softmax_differ_only_by_attention(lm_dir):
    _, abc_model = build(lm_dir, "--arch", "abc_lm", *TINY)
    _, soft = build(lm_dir, "--arch", "abc_lm", "--decoder-self-attn", "softmax", *TINY)
    abc_keys = set(abc_model.state_dict()) - {"decoder.self_attn_phi.weight"}
    assert abc_keys == set(soft.state_dict())
    assert abc_model.decoder.self_attn_phi.weight.shape == (4 * 64, 32)  # 4 heads x 64 slots (default)


@pytest.mark.parametrize("flags, message", [
    (["--decoder-self-attn", "flash"], "argument --decoder-self-attn: invalid choice: 'flash'"),
    (["--decoder-self-memory", "0"], "argument --decoder-self-memory: must be a positive number"),
    (["--decoder-self-memory", "-3"], "argument --decoder-self-memory: must be a positive number"),
    (["--decoder-self-memory", "many"], "argument --decoder-self-memory: expected a positive number"),
])
def test_bad_flags_fail_at_parsing(lm_dir, capsys, flags, message):
    assert message in parse_error([lm_dir, "--task", "language_modeling", "--arch", "abc_lm_small", *flags], capsys)


def test_bad_values_that_skip_argparse_fail_at_build(lm_dir):
    """Configs from hydra or checkpoints never meet argparse: build_model checks them too."""
    cfg = convert_namespace_to_omegaconf(parse(lm_dir, "--arch", "abc_lm", *TINY))
    task = tasks.setup_task(cfg.task)
    cfg.model.decoder_self_memory = 0
    with pytest.raises(ValueError, match="--decoder-self-memory must be a positive number"):
        task.build_model(cfg.model)


def test_eval_lm_context_window_must_be_below_tokens_per_sample(lm_dir, tmp_path):
    """fairseq-eval-lm --context-window >= --tokens-per-sample with an ABC model: a clear error
    naming both flags before any data is read (fairseq alone fails with a ZeroDivisionError)."""
    cfg = convert_namespace_to_omegaconf(parse(lm_dir, "--arch", "abc_lm", *TINY))
    task = tasks.setup_task(cfg.task)
    model = task.build_model(cfg.model)
    checkpoint = tmp_path / "checkpoint.pt"
    history = [{"criterion_name": "CrossEntropyCriterion", "optimizer_name": "Adam", "lr_scheduler_state": {},
                "num_updates": 0}]
    torch.save({"cfg": OmegaConf.to_container(cfg, resolve=True, enum_to_str=True), "args": None,
                "model": model.state_dict(), "optimizer_history": history, "extra_state": {}}, checkpoint)
    common = [lm_dir, "--path", checkpoint, "--user-dir", "abc_fairseq", "--cpu", "--tokens-per-sample", "16"]
    code, log = fairseq("eval_lm", *common, "--context-window", "16", check=False)
    assert code != 0
    assert "--context-window (16) must be smaller than --tokens-per-sample (16)" in log
    assert "ZeroDivisionError" not in log
    # A smaller window passes the check (eval_lm has taken it off --tokens-per-sample: 16 - 8 left).
    from abc_fairseq.models.abc_lm import check_context_window

    check_context_window(Namespace(eval_lm=Namespace(context_window=8), task=Namespace(tokens_per_sample=8)))
    check_context_window(Namespace(task=Namespace(tokens_per_sample=8)))  # not eval_lm: nothing to check
