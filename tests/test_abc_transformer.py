"""abc_transformer built through fairseq: beam search vs teacher forcing, padding, incremental
decoding, the shared W_phi, presets, flags, the softmax baseline, and the fairseq CLI round trip."""

import logging
import random

import pytest
import torch
from omegaconf import OmegaConf

import abc_fairseq  # noqa: F401 (registers abc_transformer)
from abc_fairseq.models import ABCTransformerModel
from abc_fairseq.modules import ABCMultiheadAttention, ABCTransformerEncoderLayer, phi_parameter_overhead
from abc_fairseq.strategies import PhiProjection
from fairseq import tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq.modules import MultiheadAttention
from fairseq.sequence_generator import SequenceGenerator
from fairseq_helpers import build as build_model
from fairseq_helpers import parse as parse_args
from fairseq_helpers import parse_error
from fairseq_helpers import run_module
# abc_transformer_tiny shrunk further: the point is the plumbing, not the model.
DIMS = ["--encoder-embed-dim", "32", "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64",
        "--decoder-ffn-embed-dim", "64", "--encoder-attention-heads", "4", "--decoder-attention-heads", "4",
        "--dropout", "0"]
TINY = [*DIMS, "--decoder-cross-memory", "5", "--decoder-self-memory", "3"]
ENCODER_ABC = ["--encoder-attn", "abc", "--encoder-memory", "4"]
ALL_SOFTMAX = ["--encoder-attn", "softmax", "--decoder-self-attn", "softmax", "--decoder-cross-attn", "softmax"]


pytestmark = pytest.mark.usefixtures("one_thread")


def parse(data_dir, *flags):
    return parse_args([data_dir, "--task", "translation", "-s", "src", "-t", "tgt", *flags])


def build(data_dir, *flags, seed=1, arch="abc_transformer_tiny"):
    task, model = build_model([data_dir, "--task", "translation", "-s", "src", "-t", "tgt", "--arch", arch, *flags],
                              seed)
    return task, model.eval()


@pytest.fixture(scope="module")
def mt(mt_dir):
    """Default layout: ABC causal and cross attention, softmax encoder."""
    return build(mt_dir, *TINY)


@pytest.fixture(scope="module")
def mt_all_abc(mt_dir):
    """ABC in all three positions (the paper's MLP-exp-all)."""
    return build(mt_dir, *TINY, *ENCODER_ABC)


@pytest.fixture(scope="module")
def mt_untied(mt_dir):
    """ABC in all three positions with ``--untie-phi``: one W_phi per layer (not the paper's model)."""
    return build(mt_dir, *TINY, *ENCODER_ABC, "--untie-phi")


@pytest.fixture(scope="module")
def mt_window(mt_dir):
    """Table 7's Window row: window in cross (the last n source tokens) and causal attention."""
    return build(mt_dir, *TINY, "--decoder-cross-attn", "window", "--decoder-self-attn", "window")


def sources(task, lengths, seed=0):
    """Left-padded source batch [B, max(lengths)] (each sentence ends with eos, as fairseq's data
    does), its lengths, and the unpadded sentences."""
    d = task.source_dictionary
    g = torch.Generator().manual_seed(seed)
    sentences = []
    for n in lengths:
        s = torch.randint(d.nspecial, len(d), (n,), generator=g)
        s[-1] = d.eos()
        sentences.append(s)
    batch = torch.full((len(lengths), max(lengths)), d.pad(), dtype=torch.long)
    for i, s in enumerate(sentences):
        batch[i, batch.shape[1] - len(s):] = s
    return batch, torch.tensor(lengths), sentences


def targets(task, batch, length, seed=1):
    """prev_output_tokens [B, length] as the translation task builds them: eos, then tokens."""
    d = task.target_dictionary
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(d.nspecial, len(d), (batch, length), generator=g)
    tokens[:, 0] = d.eos()
    return tokens


def log_probs(model, src, src_lengths, prev):
    return model.get_normalized_probs(model(src, src_lengths, prev), log_probs=True)


def teacher_forced_scores(model, task, src, hypo_tokens):
    """Log-prob of every token of a hypothesis (ending with eos) under a full forward pass."""
    eos = task.target_dictionary.eos()
    prev = torch.cat([torch.tensor([eos]), hypo_tokens[:-1]])[None]
    lp = log_probs(model, src[None], torch.tensor([len(src)]), prev)[0]
    return lp[torch.arange(len(hypo_tokens)), hypo_tokens]


def make_eos_likely(model, task, logit=2.5):
    """Give eos a large output logit so hypotheses end at different steps (finished sentences
    leave the batch, which reorders and shrinks the incremental state)."""
    proj = model.decoder.output_projection
    with torch.no_grad():
        proj.weight[task.target_dictionary.eos()] *= logit


def generate(model, task, src, src_lengths, beam, max_len_b=9):
    generator = SequenceGenerator([model], task.target_dictionary, beam_size=beam,
                                  max_len_a=0, max_len_b=max_len_b, min_len=1)
    sample = {"net_input": {"src_tokens": src, "src_lengths": src_lengths}}
    with torch.no_grad():
        return generator.generate([model], sample)


# ----------------------------------------------------------------------------- structure
def test_default_layout_abc_decoder_softmax_encoder(mt):
    task, model = mt
    assert isinstance(model, ABCTransformerModel)
    for layer in model.decoder.layers:
        assert isinstance(layer.self_attn, ABCMultiheadAttention) and layer.self_attn.causal
        assert layer.self_attn.memory_size == 3
        assert isinstance(layer.encoder_attn, ABCMultiheadAttention) and not layer.encoder_attn.self_attention
        assert layer.encoder_attn.memory_size == 5
    assert all(type(layer.self_attn) is MultiheadAttention for layer in model.encoder.layers)
    assert [n for n, _ in model.named_parameters() if "phi" in n] == [
        "decoder.self_attn_phi.weight", "decoder.encoder_attn_phi.weight"]


def test_each_phi_is_one_tensor_shared_by_its_layers(mt_all_abc):
    task, model = mt_all_abc
    enc, dec = model.encoder, model.decoder
    assert all(isinstance(layer, ABCTransformerEncoderLayer) for layer in enc.layers)
    shared = {
        "encoder.self_attn_phi": (enc.self_attn_phi, [layer.self_attn for layer in enc.layers]),
        "decoder.self_attn_phi": (dec.self_attn_phi, [layer.self_attn for layer in dec.layers]),
        "decoder.encoder_attn_phi": (dec.encoder_attn_phi, [layer.encoder_attn for layer in dec.layers]),
    }
    for name, (phi, attns) in shared.items():
        assert isinstance(phi, PhiProjection)
        assert len(attns) == 2 and all(attn.phi is phi for attn in attns), name
    assert sorted(n for n, _ in model.named_parameters() if "phi" in n) == sorted(
        f"{name}.weight" for name in shared)
    assert sum(isinstance(m, PhiProjection) for m in model.modules()) == 3
    extra, total, _ = phi_parameter_overhead(model)
    assert extra == 32 * 4 * (4 + 3 + 5)  # dim x heads x (encoder + causal + cross slots)
    assert total == sum(p.numel() for p in model.parameters())


def test_untie_phi_gives_every_layer_its_own_phi(mt_untied, mt_all_abc):
    task, model = mt_untied
    enc, dec = model.encoder, model.decoder
    per_layer = {
        "encoder.self_attn_phi_per_layer": (enc.self_attn_phi_per_layer, [l.self_attn for l in enc.layers]),
        "decoder.self_attn_phi_per_layer": (dec.self_attn_phi_per_layer, [l.self_attn for l in dec.layers]),
        "decoder.encoder_attn_phi_per_layer": (dec.encoder_attn_phi_per_layer, [l.encoder_attn for l in dec.layers]),
    }
    for name, (phis, attns) in per_layer.items():
        assert len(phis) == len(attns) == 2 and phis[0] is not phis[1], name
        assert all(attn.phi is phi for attn, phi in zip(attns, phis)), name
    assert sorted(n for n, _ in model.named_parameters() if "phi" in n) == sorted(
        f"{name}.{i}.weight" for name in per_layer for i in range(2))
    assert not any(hasattr(owner, attr) for owner in (enc, dec) for attr in ("self_attn_phi", "encoder_attn_phi"))
    tied_extra = phi_parameter_overhead(mt_all_abc[1])[0]
    assert phi_parameter_overhead(model)[0] == 2 * tied_extra  # two layers per position


def test_untied_phis_set_equal_compute_the_tied_model(mt_untied, mt_all_abc):
    """With every layer's W_phi a copy of the tied one, the untied model is the tied model; change
    one layer's copy and only the untied model's output moves."""
    task, untied = mt_untied
    _, tied = mt_all_abc
    untied_state = untied.state_dict()
    for key, value in tied.state_dict().items():
        if key.endswith("attn_phi.weight"):
            for i in range(2):
                untied_state[key.replace("phi.weight", f"phi_per_layer.{i}.weight")] = value
        else:
            untied_state[key] = value
    original = {k: v.clone() for k, v in untied.state_dict().items()}
    try:
        untied.load_state_dict(untied_state, strict=True)
        src, src_lengths, _ = sources(task, [7, 4, 6])
        prev = targets(task, 3, 8)
        with torch.no_grad():
            expected = log_probs(tied, src, src_lengths, prev)
            torch.testing.assert_close(log_probs(untied, src, src_lengths, prev), expected, rtol=1e-5, atol=1e-6)
            untied.decoder.encoder_attn_phi_per_layer[1].weight.mul_(3.0)
            moved = (log_probs(untied, src, src_lengths, prev) - expected).abs().max()
        assert moved > 1e-3
    finally:
        untied.load_state_dict(original)


def test_phi_overhead_is_logged(mt_dir, caplog):
    with caplog.at_level(logging.INFO, logger="abc_fairseq"):
        _, model = build(mt_dir, *TINY)
    extra, total, _ = phi_parameter_overhead(model)
    assert any(f"ABC W_phi adds {extra} parameters to {total - extra} others" in r.getMessage()
               for r in caplog.records)


@pytest.mark.parametrize("arch, expected", [
    ("abc_transformer", dict(encoder_layers=6, decoder_layers=6, encoder_embed_dim=512,
                             encoder_attention_heads=8, decoder_ffn_embed_dim=2048, dropout=0.1,
                             decoder_cross_memory=32, decoder_self_memory=8, encoder_attn="softmax")),
    ("abc_transformer_wmt_en_de", dict(encoder_layers=6, decoder_layers=6, decoder_embed_dim=512,
                                       decoder_attention_heads=8, encoder_ffn_embed_dim=2048,
                                       decoder_ffn_embed_dim=2048, dropout=0.1, decoder_cross_attn="abc",
                                       decoder_self_attn="abc", decoder_cross_memory=32,
                                       decoder_self_memory=8, encoder_attn="softmax", encoder_memory=32)),
    ("abc_transformer_iwslt_doc", dict(encoder_layers=6, decoder_layers=6, encoder_embed_dim=512,
                                       decoder_embed_dim=512, encoder_attention_heads=8,
                                       decoder_attention_heads=8, encoder_ffn_embed_dim=1024,
                                       decoder_ffn_embed_dim=1024, dropout=0.3, decoder_cross_memory=128,
                                       decoder_self_memory=64, encoder_attn="softmax")),
    ("abc_transformer_tiny", dict(encoder_layers=2, decoder_layers=2, encoder_embed_dim=128,
                                  decoder_embed_dim=128, encoder_attention_heads=4,
                                  decoder_attention_heads=4, encoder_ffn_embed_dim=256,
                                  decoder_ffn_embed_dim=256, decoder_cross_memory=16,
                                  decoder_self_memory=8)),
])
def test_presets(mt_dir, arch, expected):
    args = parse(mt_dir, "--arch", arch)
    assert {key: getattr(args, key) for key in expected} == expected


def test_command_line_beats_preset(mt_dir):
    args = parse(mt_dir, "--arch", "abc_transformer_iwslt_doc", "--decoder-self-memory", "16",
                 "--dropout", "0.2", "--encoder-attn", "abc")
    assert (args.decoder_self_memory, args.decoder_cross_memory, args.dropout) == (16, 128, 0.2)
    assert (args.encoder_attn, args.encoder_memory) == ("abc", 128)


def test_all_softmax_is_fairseqs_transformer(mt_dir):
    task, soft = build(mt_dir, *TINY, *ALL_SOFTMAX, seed=5)
    _, ref = build(mt_dir, *DIMS, arch="transformer_tiny", seed=5)
    assert not any(isinstance(m, (PhiProjection, ABCMultiheadAttention)) for m in soft.modules())
    soft_state, ref_state = soft.state_dict(), ref.state_dict()
    assert {k: v.shape for k, v in soft_state.items()} == {k: v.shape for k, v in ref_state.items()}
    ref.load_state_dict(soft_state, strict=True)
    src, src_lengths, _ = sources(task, [6, 4, 7])
    prev = targets(task, 3, 5)
    with torch.no_grad():
        torch.testing.assert_close(soft(src, src_lengths, prev)[0], ref(src, src_lengths, prev)[0],
                                   rtol=0, atol=0)


def test_dictconfig_model_config_keeps_abc_options(mt_dir):
    """Configs that arrive as a DictConfig (hydra) must not silently fall back to softmax."""
    args = parse(mt_dir, "--arch", "abc_transformer_tiny", *TINY, *ENCODER_ABC)
    task = tasks.setup_task(convert_namespace_to_omegaconf(args).task)
    model = ABCTransformerModel.build_model(OmegaConf.create(vars(args)), task)
    assert isinstance(model.encoder.layers[0].self_attn, ABCMultiheadAttention)
    assert model.decoder.layers[1].encoder_attn.memory_size == 5


@pytest.mark.parametrize("flags, message", [
    (["--decoder-cross-memory", "0"], "argument --decoder-cross-memory: must be a positive number"),
    (["--decoder-self-memory", "-2"], "argument --decoder-self-memory: must be a positive number"),
    (["--encoder-memory", "lots"], "argument --encoder-memory: expected a positive number"),
    (["--encoder-attn", "flash"], "argument --encoder-attn: invalid choice: 'flash'"),
    (["--decoder-cross-attn", "performer"], "argument --decoder-cross-attn: invalid choice: 'performer'"),
    (["--decoder-self-attn", "ABC"], "argument --decoder-self-attn: invalid choice: 'ABC'"),
    # A setting out of range: refused here, not at model build (a mode the strategy lacks: test_strategies_mt).
    (["--decoder-self-attn", "compressive", "--compressive-ratio", "0"],
     "argument --compressive-ratio: must be a positive number of tokens per slot"),
])
def test_bad_flags_fail_at_parsing(mt_dir, capsys, flags, message):
    argv = [mt_dir, "--task", "translation", "-s", "src", "-t", "tgt", "--arch", "abc_transformer_tiny", *flags]
    assert message in parse_error(argv, capsys)


def test_bad_values_that_skip_argparse_fail_at_build(mt_dir):
    """Configs from hydra or checkpoints never meet argparse: build_model checks them too."""
    args = parse(mt_dir, "--arch", "abc_transformer_tiny", *TINY)
    task = tasks.setup_task(convert_namespace_to_omegaconf(args).task)
    args.decoder_cross_memory = 0
    with pytest.raises(ValueError, match="--decoder-cross-memory must be a positive number"):
        ABCTransformerModel.build_model(args, task)


# ----------------------------------------------------------------------------- numerics
@pytest.mark.parametrize("which", ["mt", "mt_all_abc", "mt_untied", "mt_window"])
def test_incremental_decoding_equals_full_forward(which, request):
    """float64: the decoder fed one token at a time (fairseq's incremental API) gives the full
    forward pass's log-probs; the cross memory is built once from the encoder output and cached."""
    task, model = request.getfixturevalue(which)
    model.double()
    try:
        src, src_lengths, _ = sources(task, [7, 4, 6])
        prev = targets(task, 3, 10)
        with torch.no_grad():
            full = log_probs(model, src, src_lengths, prev)
            encoder_out = model.encoder(src, src_lengths=src_lengths)
            calls = []
            hooks = [layer.encoder_attn.k_proj.register_forward_hook(lambda *_: calls.append(1))
                     for layer in model.decoder.layers]
            state = {}
            for t in range(prev.shape[1]):
                out = model.decoder(prev[:, : t + 1], encoder_out=encoder_out, incremental_state=state)
                step = model.get_normalized_probs(out, log_probs=True)[:, -1]
                torch.testing.assert_close(step, full[:, t], rtol=0, atol=1e-10)
            for hook in hooks:
                hook.remove()
        assert len(calls) == len(model.decoder.layers)  # keys projected once per layer, not per step
    finally:
        model.float()


def test_beam_search_scores_equal_teacher_forcing(mt_dir):
    """Beam 4 over a left-padded batch whose hypotheses end at different steps (the beams are
    reordered every step and finished sentences leave the batch): each returned hypothesis
    carries, token by token, the log-probs a full teacher-forced forward pass gives it, and its
    score is their mean (length penalty 1)."""
    task, model = build(mt_dir, *TINY, seed=2)
    make_eos_likely(model, task)
    src, src_lengths, sentences = sources(task, [8, 5, 3, 7], seed=3)
    hypos = generate(model, task, src, src_lengths, beam=4)
    distinct, lengths = set(), set()
    for sentence, per_sentence in zip(sentences, hypos):
        assert len(per_sentence) == 4
        for hypo in per_sentence:
            distinct.add(tuple(hypo["tokens"].tolist()))
            lengths.add(len(hypo["tokens"]))
            with torch.no_grad():
                expected = teacher_forced_scores(model, task, sentence, hypo["tokens"])
            torch.testing.assert_close(hypo["positional_scores"], expected, rtol=0, atol=2e-5)
            assert hypo["score"].item() == pytest.approx(expected.mean().item(), abs=2e-5)
    assert len(distinct) >= 12  # the beams really did diverge
    assert len(lengths) >= 3  # and hypotheses ended at different steps


@pytest.mark.parametrize("which", ["mt", "mt_all_abc", "mt_window"])
def test_left_padded_batch_translates_like_single_sentences(which, request):
    task, model = request.getfixturevalue(which)
    src, src_lengths, sentences = sources(task, [3, 8, 5], seed=4)
    batched = generate(model, task, src, src_lengths, beam=3)
    for sentence, hypos in zip(sentences, batched):
        (alone,) = generate(model, task, sentence[None], torch.tensor([len(sentence)]), beam=3)
        assert [h["tokens"].tolist() for h in hypos] == [h["tokens"].tolist() for h in alone]
        for a, b in zip(hypos, alone):
            torch.testing.assert_close(a["positional_scores"], b["positional_scores"], rtol=0, atol=1e-5)


def test_abc_encoder_ignores_padding(mt_all_abc):
    task, model = mt_all_abc
    model.double()
    try:
        src, src_lengths, sentences = sources(task, [9, 4, 6], seed=5)
        with torch.no_grad():
            batched = model.encoder(src, src_lengths=src_lengths)["encoder_out"][0]  # [S, B, C]
            for b, sentence in enumerate(sentences):
                alone = model.encoder(sentence[None], src_lengths=src_lengths[b:b + 1])["encoder_out"][0]
                torch.testing.assert_close(batched[-len(sentence):, b], alone[:, 0], rtol=0, atol=1e-10)
            # Control: the same sentence with the padding fed as real tokens does change the output.
            unmasked = src.clone()
            unmasked[1, : src.shape[1] - len(sentences[1])] = task.source_dictionary.unk()
            other = model.encoder(unmasked, src_lengths=src_lengths)["encoder_out"][0]
            assert not torch.allclose(other[-len(sentences[1]):, 1], batched[-len(sentences[1]):, 1])
    finally:
        model.float()


# ----------------------------------------------------------------------------- command line
def test_fairseq_train_checkpoint_decodes_in_generate(tmp_path):
    """fairseq-preprocess -> fairseq-train (3 updates, ABC in all three positions) ->
    fairseq-generate from the checkpoint under torch's default (weights-only) loader."""
    rng = random.Random(1)
    for split, n in (("train", 80), ("valid", 8), ("test", 5)):
        src = [[f"s{rng.randint(0, 20)}" for _ in range(rng.randint(3, 8))] for _ in range(n)]
        (tmp_path / f"{split}.src").write_text("".join(" ".join(s) + "\n" for s in src))
        (tmp_path / f"{split}.tgt").write_text(
            "".join(" ".join("t" + w[1:] for w in reversed(s)) + "\n" for s in src))
    run_module("fairseq_cli.preprocess", "--source-lang", "src", "--target-lang", "tgt",
         "--trainpref", tmp_path / "train", "--validpref", tmp_path / "valid",
         "--testpref", tmp_path / "test", "--destdir", tmp_path / "bin", "--workers", "1")
    run_module("fairseq_cli.train", tmp_path / "bin", "--user-dir", "abc_fairseq", "--task", "translation",
         "--arch", "abc_transformer_tiny", *TINY, *ENCODER_ABC, "--cpu", "--optimizer", "adam",
         "--lr", "1e-3", "--max-tokens", "400", "--max-update", "3", "--save-dir", tmp_path / "ckpt",
         "--no-epoch-checkpoints", "--num-workers", "0", "--seed", "2")
    checkpoint = tmp_path / "ckpt" / "checkpoint_last.pt"
    state = torch.load(checkpoint, map_location="cpu")  # weights-only: checkpoint_compat allows it
    phi = sorted(k for k in state["model"] if "phi" in k)
    assert phi == ["decoder.encoder_attn_phi.weight", "decoder.self_attn_phi.weight",
                   "encoder.self_attn_phi.weight"]
    assert state["optimizer_history"][-1]["num_updates"] == 3
    log = run_module("fairseq_cli.generate", tmp_path / "bin", "--user-dir", "abc_fairseq", "--path", checkpoint,
               "--cpu", "--beam", "3", "--batch-size", "5", "--required-batch-size-multiple", "1",
               "--max-len-b", "12")
    assert "Translated 5 sentences" in log
    hypotheses = [line for line in log.splitlines() if line.startswith("H-")]
    assert len(hypotheses) == 5
    assert all(float(line.split("\t")[1]) < 0 for line in hypotheses)
