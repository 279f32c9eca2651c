"""abc_transformer decoding through fairseq: incremental decoding and beam search against teacher
forcing, padding, and the fairseq-train -> fairseq-generate round trip."""

import random

import pytest
import torch
from fairseq_helpers import run_module
from transformer_helpers import (
    ENCODER_ABC,
    TINY,
    build,
    generate,
    log_probs,
    make_eos_likely,
    sources,
    targets,
    teacher_forced_scores,
)

import abc_fairseq.models  # noqa: F401 (registers abc_transformer)

pytestmark = pytest.mark.usefixtures("one_thread")


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
