"""abc_roberta end to end on CPU: a tiny softmax RoBERTa trained here by fairseq (masked_lm on a
generated corpus), converted to ABC (bit-identical pretrained weights, W_phi added), pretrained
further both from the converted file and straight from the softmax checkpoint (strict loading
through ``upgrade_state_dict_named``), and fine-tuned on a small labelled set
(sentence_prediction). Plus the model-level checks: old checkpoint names, non-RoBERTa
checkpoints refused, ABC runs in eval mode, softmax setting equals fairseq's RoBERTa.
"""

import argparse

import pytest
import torch
from fairseq_helpers import fairseq, run_module

PHI_KEY = "encoder.sentence_encoder.self_attn_phi.weight"

# A 2-layer, dim-32 RoBERTa: the point is the plumbing.
DIMS = ["--encoder-layers", "2", "--encoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64",
        "--encoder-attention-heads", "2"]
TRAIN = ["--optimizer", "adam", "--lr", "1e-3", "--batch-size", "8", "--no-epoch-checkpoints",
         "--num-workers", "0", "--log-format", "simple", "--log-interval", "1", "--cpu", "--seed", "1",
         "--no-last-checkpoints", "--no-save-optimizer-state"]
MLM = ["--task", "masked_lm", "--criterion", "masked_lm", "--sample-break-mode", "complete",
       "--tokens-per-sample", "64"]
RESET = ["--reset-optimizer", "--reset-dataloader", "--reset-meters"]


run = run_module


def load(path):
    import abc_fairseq.models  # noqa: F401 (safe globals for argparse.Namespace)

    return torch.load(path, map_location="cpu")


@pytest.fixture(scope="module")
def softmax_checkpoint(roberta_data):
    """fairseq's own ``roberta`` (softmax), trained for a few updates."""
    save = roberta_data / "softmax"
    fairseq("train", roberta_data / "mlm", *MLM, "--arch", "roberta", *DIMS, *TRAIN, "--max-update", "4",
            "--save-dir", save)
    return save / "checkpoint_best.pt"


@pytest.fixture(scope="module")
def converted(roberta_data, softmax_checkpoint):
    out = roberta_data / "abc_converted.pt"
    log = run("abc_fairseq.convert_roberta", "--input", softmax_checkpoint, "--output", out,
              "--encoder-attn", "abc", "--encoder-memory", "8")
    return out, log


def test_conversion_keeps_every_pretrained_tensor_bit_identical(softmax_checkpoint, converted):
    out, log = converted
    source, target = load(softmax_checkpoint)["model"], load(out)["model"]
    for key, tensor in source.items():
        assert key in target, key
        assert target[key].dtype == tensor.dtype and torch.equal(target[key], tensor), key
    assert sorted(set(target) - set(source)) == [PHI_KEY]
    assert tuple(target[PHI_KEY].shape) == (2 * 8, 32)  # heads * n, dim
    assert PHI_KEY in log and "added 1 new control tensors" in log
    state = load(out)
    assert state["cfg"]["model"].arch.startswith("abc_roberta")
    assert state["cfg"]["model"].encoder_attn == "abc" and state["cfg"]["model"].encoder_memory == 8
    assert state["last_optimizer_state"] is None


def test_continued_pretraining_from_converted_checkpoint(roberta_data, converted):
    out, _ = converted
    save = roberta_data / "abc_from_converted"
    log = fairseq("train", roberta_data / "mlm", "--user-dir", "abc_fairseq", *MLM, "--arch", "abc_roberta_tiny",
                  *DIMS, "--encoder-memory", "8", *TRAIN, "--max-update", "3", "--restore-file", out,
                  *RESET, "--save-dir", save)
    assert "Loaded checkpoint" in log
    state = load(save / "checkpoint_best.pt")
    assert state["optimizer_history"][-1]["num_updates"] == 3
    before = load(out)["model"]
    assert not torch.equal(state["model"][PHI_KEY], before[PHI_KEY])  # W_phi is trained
    assert state["model"].keys() == before.keys()


@pytest.fixture(scope="module")
def restored_abc(roberta_data, softmax_checkpoint):
    """Continued MLM pretraining straight from the softmax checkpoint (--restore-file)."""
    save = roberta_data / "abc_restored"
    log = fairseq("train", roberta_data / "mlm", "--user-dir", "abc_fairseq", *MLM, "--arch", "abc_roberta_tiny",
                  *DIMS, "--encoder-attn", "abc", "--encoder-memory", "8", *TRAIN, "--max-update", "3",
                  "--restore-file", softmax_checkpoint, *RESET, "--save-dir", save)
    return save / "checkpoint_best.pt", log


def test_restore_file_loads_softmax_roberta_strictly(restored_abc):
    checkpoint, log = restored_abc
    assert "added 1 bounded-memory control tensors" in log and PHI_KEY in log
    assert "Loaded checkpoint" in log
    assert PHI_KEY in load(checkpoint)["model"]


def test_finetune_sentence_prediction(roberta_data, restored_abc):
    checkpoint, _ = restored_abc
    save = roberta_data / "abc_cls"
    log = fairseq("train", roberta_data / "cls", "--user-dir", "abc_fairseq", "--task", "sentence_prediction",
                  "--criterion", "sentence_prediction", "--num-classes", "2", "--init-token", "0",
                  "--separator-token", "2", "--max-positions", "64", "--arch", "abc_roberta_tiny", *DIMS,
                  "--encoder-memory", "8", *TRAIN, "--max-update", "4", "--restore-file", checkpoint, *RESET,
                  "--best-checkpoint-metric", "accuracy", "--maximize-best-checkpoint-metric",
                  "--save-dir", save)
    assert "valid on 'valid' subset" in log and "accuracy" in log
    state = load(save / "checkpoint_best.pt")["model"]
    assert "classification_heads.sentence_classification_head.out_proj.weight" in state
    assert PHI_KEY in state


# Model-level checks (no subprocess).

def _tiny(**overrides):
    from fairseq.data import Dictionary

    import abc_fairseq.models  # noqa: F401
    from abc_fairseq.models.abc_roberta import ABCRobertaModel, abc_roberta_tiny

    class Task:
        source_dictionary = Dictionary()

        def max_positions(self):
            return 64

    for i in range(40):
        Task.source_dictionary.add_symbol(f"w{i}")
    args = argparse.Namespace(tokens_per_sample=64, **overrides)
    abc_roberta_tiny(args)
    torch.manual_seed(0)
    return ABCRobertaModel.build_model(args, Task())


def test_old_checkpoint_names_load_with_same_values():
    """decoder.* / emb_layer_norm / fused in_proj (the 2019 RoBERTa layout) -> fairseq's names."""
    softmax = _tiny(encoder_attn="softmax")
    new = softmax.state_dict()
    old = {}
    for key, value in new.items():
        old_key = key.replace("encoder.", "decoder.", 1).replace("layernorm_embedding", "emb_layer_norm")
        if ".self_attn.q_proj." in key:
            kind = key.rsplit(".", 1)[1]
            parts = [new[key.replace("q_proj", p)] for p in ("q_proj", "k_proj", "v_proj")]
            old[old_key.replace("q_proj." + kind, "in_proj_" + kind)] = torch.cat(parts)
        elif ".self_attn.k_proj." in key or ".self_attn.v_proj." in key:
            continue
        else:
            old[old_key] = value.clone()
    model = _tiny(encoder_attn="abc", encoder_memory=4)
    model.load_state_dict(old, strict=True)
    loaded = model.state_dict()
    for key, value in new.items():
        assert torch.equal(loaded[key], value), key
    assert model.added_control_keys == [PHI_KEY]


def test_not_roberta_checkpoints_are_refused(tmp_path):
    from abc_fairseq.models.abc_roberta import RobertaCheckpointError

    model = _tiny(encoder_attn="abc", encoder_memory=4)
    with pytest.raises(RobertaCheckpointError, match="not a RoBERTa checkpoint"):
        model.load_state_dict({"encoder.layers.0.fc1.weight": torch.zeros(2, 2)}, strict=True)
    partial = {k: v for k, v in _tiny(encoder_attn="softmax").state_dict().items() if "fc2" not in k}
    with pytest.raises(RobertaCheckpointError, match="missing .*fc2"):
        model.load_state_dict(partial, strict=True)
    wide = _tiny(encoder_attn="softmax", encoder_embed_dim=48).state_dict()
    with pytest.raises(RobertaCheckpointError, match="abc_roberta_base"):
        model.load_state_dict(wide, strict=True)

def test_converter_refuses_what_is_not_roberta(tmp_path, capsys):
    from abc_fairseq.convert_roberta import main

    fake = tmp_path / "transformer.pt"
    torch.save({"args": argparse.Namespace(arch="transformer"), "model": {"w": torch.zeros(1)}}, fake)
    assert main(["--input", str(fake), "--output", str(tmp_path / "o.pt")]) == 1
    assert "not a RoBERTa checkpoint" in capsys.readouterr().err and not (tmp_path / "o.pt").exists()
    no_embed = tmp_path / "no_embed.pt"
    torch.save({"args": argparse.Namespace(arch="roberta_base"), "model": {"w": torch.zeros(1)}}, no_embed)
    assert main(["--input", str(no_embed), "--output", str(tmp_path / "o.pt")]) == 1
    assert "embed_tokens" in capsys.readouterr().err
    assert main(["--input", str(tmp_path / "missing.pt"), "--output", str(tmp_path / "o.pt")]) == 1
    err = capsys.readouterr().err
    assert "--input" in err and "no such file" in err


def test_linformer_and_other_strategies_register_their_control_parameters():
    model = _tiny(encoder_attn="linformer", encoder_memory=8)
    control = model.control_state_dict()
    assert list(control) == [PHI_KEY] and tuple(control[PHI_KEY].shape)[1:] == (8, 64)
    assert model(torch.randint(4, 40, (2, 10)))[0].shape == (2, 10, len(model.encoder.dictionary))


def test_untied_control_parameters_are_one_per_layer_and_added_from_a_softmax_checkpoint():
    model = _tiny(encoder_attn="abc", encoder_memory=4, untie_phi=True)
    layers = len(model.encoder.sentence_encoder.layers)
    expected = [PHI_KEY.replace("phi.weight", f"phi_per_layer.{i}.weight") for i in range(layers)]
    assert list(model.control_state_dict()) == expected and layers > 1
    softmax_state = {k: v for k, v in model.state_dict().items() if k not in expected}
    model.upgrade_state_dict_named(softmax_state, "")  # a softmax RoBERTa gains one W_phi per layer
    assert [k for k in softmax_state if "phi" in k] == expected


def test_eval_mode_runs_abc_attention_and_padding_is_ignored():
    from abc_fairseq.modules import ABCMultiheadAttention

    model = _tiny(encoder_attn="abc", encoder_memory=4).eval()
    calls = []
    for module in model.modules():
        if isinstance(module, ABCMultiheadAttention):
            module.register_forward_hook(lambda *a: calls.append(1))
    tokens = torch.randint(4, 40, (2, 12))
    tokens[:, 0] = 0
    padded = torch.cat([tokens, torch.ones(2, 5, dtype=torch.long)], dim=1)  # right padding (pad = 1)
    with torch.no_grad():
        out, _ = model(tokens, features_only=True)
        out_padded, _ = model(padded, features_only=True)
    assert len(calls) == 2 * 2  # two layers, two calls
    torch.testing.assert_close(out_padded[:, :12], out, rtol=1e-4, atol=1e-5)


def test_softmax_setting_is_fairseqs_roberta():
    from fairseq.models.roberta import RobertaModel

    abc_softmax = _tiny(encoder_attn="softmax").eval()
    args = argparse.Namespace(**vars(abc_softmax.args))
    reference = RobertaModel(args, type(abc_softmax.encoder).__mro__[1](args, abc_softmax.encoder.dictionary))
    reference.load_state_dict(abc_softmax.state_dict(), strict=True)
    tokens = torch.randint(4, 40, (2, 9))
    with torch.no_grad():
        torch.testing.assert_close(abc_softmax(tokens)[0], reference.eval()(tokens)[0])


def test_converter_reads_the_2019_roberta_layout(softmax_checkpoint, tmp_path, capsys):
    """The official roberta.base/model.pt layout (``args`` Namespace, ``decoder.*`` names, fused
    ``in_proj``) converts to the same tensors as the modern layout."""
    from abc_fairseq.convert_roberta import main

    state = load(softmax_checkpoint)
    new, old = state["model"], {}
    for key, value in new.items():
        old_key = key.replace("encoder.", "decoder.", 1).replace("layernorm_embedding", "emb_layer_norm")
        if ".self_attn.q_proj." in key:
            kind = key.rsplit(".", 1)[1]
            old[old_key.replace("q_proj." + kind, "in_proj_" + kind)] = torch.cat(
                [new[key.replace("q_proj", p)] for p in ("q_proj", "k_proj", "v_proj")])
        elif ".self_attn.k_proj." not in key and ".self_attn.v_proj." not in key:
            old[old_key] = value
    source = tmp_path / "model.pt"
    torch.save({"args": state["cfg"]["model"], "model": old, "optimizer_history": state["optimizer_history"],
                "extra_state": state["extra_state"], "last_optimizer_state": None}, source)
    assert main(["--input", str(source), "--output", str(tmp_path / "abc.pt"), "--encoder-memory", "8"]) == 0
    assert "under fairseq's current names" in capsys.readouterr().out
    converted = load(tmp_path / "abc.pt")
    assert converted["args"].arch.startswith("abc_roberta") and converted["args"].encoder_memory == 8
    for key, tensor in new.items():
        assert torch.equal(converted["model"][key], tensor), key
    assert set(converted["model"]) - set(new) == {PHI_KEY}
