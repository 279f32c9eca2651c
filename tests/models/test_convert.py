"""python -m abc_fairseq.convert on tiny checkpoints of each family, written in the layouts of
fairseq's published ones: fairseq-train's (``cfg``) and the 2019 one (``args`` Namespace, fused
``in_proj``, ``layer_norms.N``, RoBERTa's ``decoder.*``), with a table embedding or adaptive input
and softmax (the WikiText-103 models). Every pretrained tensor is kept bit for bit, only control
tensors are added, and a conversion whose positions stay softmax scores exactly as its source.
The models are built as fairseq-train builds them (random weights: the converter reads names,
shapes and configs, never values)."""

import argparse

import pytest
import torch
from fairseq import checkpoint_utils, tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq_helpers import parse
from omegaconf import OmegaConf

import abc_fairseq.models  # noqa: F401 (registers the models and the weights-only allowlist)
from abc_fairseq.convert.checkpoint_io import same_bits
from abc_fairseq.convert.cli import main

LM_DIMS = ["--decoder-layers", "2", "--decoder-embed-dim", "32", "--decoder-ffn-embed-dim", "64",
           "--decoder-attention-heads", "2", "--tokens-per-sample", "16", "--dropout", "0"]
LM = ["--task", "language_modeling", "--arch", "transformer_lm", *LM_DIMS, "--share-decoder-input-output-embed"]
# Baevski & Auli's WikiText-103 model (adaptive input and softmax, tied), shrunk.
WIKI103 = ["--task", "language_modeling", "--arch", "transformer_lm_wiki103", *LM_DIMS, "--decoder-input-dim", "32",
           "--decoder-output-dim", "32", "--adaptive-input-cutoff", "10,20", "--adaptive-softmax-cutoff", "10,20"]
MT = ["--task", "translation", "-s", "src", "-t", "tgt", "--arch", "transformer", "--encoder-layers", "2",
      "--decoder-layers", "2", "--encoder-embed-dim", "32", "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim",
      "64", "--decoder-ffn-embed-dim", "64", "--encoder-attention-heads", "4", "--decoder-attention-heads", "4",
      "--dropout", "0", "--share-all-embeddings"]
ROBERTA = ["--task", "masked_lm", "--arch", "roberta", "--encoder-layers", "2", "--encoder-embed-dim", "32",
           "--encoder-ffn-embed-dim", "64", "--encoder-attention-heads", "2", "--tokens-per-sample", "32",
           "--dropout", "0"]


def source_model(data, argv, seed=1):
    """(args, cfg, model) of a fairseq model built as fairseq-train builds it."""
    args = parse([data, *argv])
    cfg = convert_namespace_to_omegaconf(args)
    task = tasks.setup_task(cfg.task)
    torch.manual_seed(seed)
    return args, cfg, task.build_model(cfg.model).eval()


def save(path, model, args=None, cfg=None, model_state=None):
    """The file fairseq-train writes (``cfg``; optimizer state, history) or, given ``args``, the
    2019 layout of the published checkpoints."""
    state = {"args": args, "model": model_state if model_state is not None else model.state_dict(),
             "optimizer_history": [{"criterion_name": "CrossEntropyCriterion", "optimizer_name": "FairseqAdam",
                                    "lr_scheduler_state": {"best": 3.5}, "num_updates": 7}],
             "extra_state": {"train_iterator": {"epoch": 2, "iterations_in_epoch": 3}},
             "last_optimizer_state": {"state": {0: {"step": 7}}}}
    if cfg is not None:
        state["cfg"] = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    checkpoint_utils.torch_persistent_save(state, str(path))
    return path


def old_layout(model_state):
    """The 2019 names: fused ``in_proj`` ([3C, C]) and ``layer_norms.N``, as fairseq's
    ``upgrade_state_dict_named`` renames them back."""
    norms = {"self_attn_layer_norm": "0", "encoder_attn_layer_norm": "1", "final_layer_norm": "2"}
    old = {}
    for key, value in model_state.items():
        if ".q_proj." in key and ".layers." in key:
            kind = key.rsplit(".", 1)[1]
            old[key.replace("q_proj." + kind, "in_proj_" + kind)] = torch.cat(
                [model_state[key.replace("q_proj", p)] for p in ("q_proj", "k_proj", "v_proj")])
        elif (".k_proj." in key or ".v_proj." in key) and ".layers." in key:
            continue
        else:
            for name, index in norms.items():
                if key.startswith("encoder.") and name == "final_layer_norm":
                    index = "1"  # an encoder layer has two norms
                key = key.replace(f".{name}.", f".layer_norms.{index}.")
            old[key] = value
    return old


def convert(source, out, *flags):
    assert main(["--input", str(source), "--output", str(out), *map(str, flags)]) == 0
    return load(out)


def load(path):
    return torch.load(path, map_location="cpu", weights_only=True)


def assert_kept(source_state, converted_state, added):
    """Every source tensor (under fairseq's current names) unchanged; exactly ``added`` new."""
    for key, tensor in source_state.items():
        assert same_bits(converted_state[key], tensor), key  # bits: the positions' buffer may hold NaN
    assert sorted(set(converted_state) - set(source_state)) == sorted(added)


def scores(model, tokens, source_tokens=None):
    with torch.no_grad():
        if source_tokens is None:
            return model(tokens)[0]
        return model(source_tokens, torch.full((source_tokens.shape[0],), source_tokens.shape[1]), tokens)[0]


def loaded(path):
    """The converted file as fairseq loads it (fairseq-eval-lm, fairseq-generate)."""
    [model], _ = checkpoint_utils.load_model_ensemble([str(path)])
    return model.eval()


TOKENS = torch.randint(4, 30, (3, 12), generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("strategy,memory", [("abc", 8), ("gsa", 4), ("linformer", 6)])
def test_lm_keeps_every_tensor_and_adds_the_control_tensor(lm_dir, tmp_path, capsys, strategy, memory):
    _, cfg, model = source_model(lm_dir, LM)
    source = save(tmp_path / "lm.pt", model, cfg=cfg)
    state = convert(source, tmp_path / "abc.pt", "--decoder-self-attn", strategy, "--decoder-self-memory", memory)
    assert_kept(model.state_dict(), state["model"], ["decoder.self_attn_phi.weight"])
    shape = (2, memory, 16) if strategy == "linformer" else (2 * memory, 32)  # [heads, n, N_max] or [heads n, C]
    assert tuple(state["model"]["decoder.self_attn_phi.weight"].shape) == shape
    model_cfg = state["cfg"]["model"]
    assert (model_cfg["_name"], model_cfg["decoder_self_attn"], model_cfg["decoder_self_memory"]) == \
        ("abc_lm", strategy, memory)
    assert state["last_optimizer_state"] is None and "optimizer" not in state["optimizer_history"][0]
    assert state["optimizer_history"][0]["num_updates"] == 7 and state["extra_state"]["train_iterator"]["epoch"] == 2
    assert state["abc_conversion"]["added"] == ["decoder.self_attn_phi.weight"]
    out = capsys.readouterr().out
    kept = len(model.state_dict())
    assert f"kept {kept} pretrained tensors with their values unchanged; added 1 new control tensors" in out
    abc = loaded(tmp_path / "abc.pt")
    assert torch.isfinite(scores(abc, TOKENS)).all() and type(abc).__name__ == "ABCLanguageModel"


def registered(mode):
    from abc_fairseq.strategies import STRATEGIES

    return [name for name, strategy in STRATEGIES.items() if mode in strategy.modes]


@pytest.mark.parametrize("strategy", registered("causal"))
def test_every_registered_strategy_takes_a_language_model(lm_dir, tmp_path, strategy):
    """Kept tensors, and exactly the strategy's control tensors added (none for the feature maps)."""
    from abc_fairseq.convert.core import control_keys

    _, cfg, model = source_model(lm_dir, LM)
    state = convert(save(tmp_path / "lm.pt", model, cfg=cfg), tmp_path / "abc.pt", "--decoder-self-attn", strategy,
                    "--decoder-self-memory", 4)
    abc = loaded(tmp_path / "abc.pt")
    assert_kept(model.state_dict(), state["model"], control_keys(abc))
    assert torch.isfinite(scores(abc, TOKENS)).all()


@pytest.mark.parametrize("strategy", registered("cross"))
def test_every_registered_strategy_takes_cross_attention(mt_dir, tmp_path, strategy):
    from abc_fairseq.convert.core import control_keys

    _, cfg, model = source_model(mt_dir, MT)
    state = convert(save(tmp_path / "mt.pt", model, cfg=cfg), tmp_path / "abc.pt", "--decoder-self-attn", "softmax",
                    "--decoder-cross-attn", strategy, "--decoder-cross-memory", 4)
    abc = loaded(tmp_path / "abc.pt")
    assert_kept(model.state_dict(), state["model"], control_keys(abc))
    assert all(k.startswith("decoder.") and "encoder_attn" in k for k in control_keys(abc))
    assert torch.isfinite(scores(abc, TOKENS, TOKENS[:, :9])).all()


def test_lm_converted_to_softmax_scores_as_its_source(lm_dir, tmp_path, capsys):
    _, cfg, model = source_model(lm_dir, LM)
    state = convert(save(tmp_path / "lm.pt", model, cfg=cfg), tmp_path / "same.pt", "--decoder-self-attn", "softmax")
    assert_kept(model.state_dict(), state["model"], [])
    assert "added 0 new control tensors" in capsys.readouterr().out
    assert torch.equal(scores(loaded(tmp_path / "same.pt"), TOKENS), scores(model, TOKENS))


def test_wiki103_adaptive_model_in_the_2019_layout(lm_dir, tmp_path, capsys):
    """Adaptive input and softmax (tied), ``args`` Namespace, fused in_proj, layer_norms.N: the
    layout of the published WikiText-103 model. The arch becomes abc_lm_wiki103."""
    args, _, model = source_model(lm_dir, WIKI103)
    modern = model.state_dict()
    assert any(".adaptive_softmax.tail." in k for k in modern) and any(".embeddings.1.0." in k for k in modern)
    source = save(tmp_path / "wiki103.pt", model, args=args, model_state=old_layout(modern))
    assert any("in_proj_weight" in k for k in load(source)["model"])
    state = convert(source, tmp_path / "abc.pt", "--decoder-self-memory", 4)
    assert_kept(modern, state["model"], ["decoder.self_attn_phi.weight"])
    assert state["args"].arch == "abc_lm_wiki103" and state["args"].decoder_self_attn == "abc"
    assert "under fairseq's current names" in capsys.readouterr().out
    softmax = convert(source, tmp_path / "softmax.pt", "--decoder-self-attn", "softmax")
    assert_kept(modern, softmax["model"], [])
    assert torch.equal(scores(loaded(tmp_path / "softmax.pt"), TOKENS), scores(model, TOKENS))


@pytest.mark.parametrize("layout", ["cfg", "args-2019"])
def test_translation_model_each_position_by_its_flag(mt_dir, tmp_path, layout):
    args, cfg, model = source_model(mt_dir, MT)
    modern = model.state_dict()
    source = save(tmp_path / "mt.pt", model, cfg=cfg) if layout == "cfg" else \
        save(tmp_path / "mt.pt", model, args=args, model_state=old_layout(modern))
    state = convert(source, tmp_path / "abc.pt", "--family", "mt", "--encoder-attn", "abc", "--encoder-memory", 4,
                    "--decoder-self-attn", "gsa", "--decoder-self-memory", 3, "--decoder-cross-attn", "abc",
                    "--decoder-cross-memory", 5)
    added = {"encoder.self_attn_phi.weight": (16, 32), "decoder.self_attn_phi.weight": (12, 32),
             "decoder.encoder_attn_phi.weight": (20, 32)}
    assert_kept(modern, state["model"], list(added))
    assert {k: tuple(state["model"][k].shape) for k in added} == added
    recorded = state["cfg"]["model"] if layout == "cfg" else state["args"]
    recorded = vars(recorded) if isinstance(recorded, argparse.Namespace) else recorded
    assert {k: recorded[k] for k in ("arch", "encoder_attn", "decoder_self_attn", "decoder_cross_attn")} == {
        "arch": "abc_transformer", "encoder_attn": "abc", "decoder_self_attn": "gsa", "decoder_cross_attn": "abc"}
    source_tokens = TOKENS[:, :9]
    assert torch.isfinite(scores(loaded(tmp_path / "abc.pt"), TOKENS, source_tokens)).all()


def test_translation_model_converted_to_softmax_scores_as_its_source(mt_dir, tmp_path):
    _, cfg, model = source_model(mt_dir, MT)
    state = convert(save(tmp_path / "mt.pt", model, cfg=cfg), tmp_path / "same.pt", "--encoder-attn", "softmax",
                    "--decoder-self-attn", "softmax", "--decoder-cross-attn", "softmax")
    assert_kept(model.state_dict(), state["model"], [])
    source_tokens = TOKENS[:, :9]
    converted = scores(loaded(tmp_path / "same.pt"), TOKENS, source_tokens)
    assert torch.equal(converted, scores(model, TOKENS, source_tokens))


def test_roberta_any_strategy_and_the_2019_names(lm_dir, tmp_path):
    args, _, model = source_model(lm_dir, ROBERTA)
    modern = model.state_dict()
    renamed = {k.replace("encoder.", "decoder.", 1).replace("layernorm_embedding", "emb_layer_norm"): v
               for k, v in old_layout(modern).items()}
    source = save(tmp_path / "roberta.pt", model, args=args, model_state=renamed)
    state = convert(source, tmp_path / "abc.pt", "--encoder-attn", "linformer", "--encoder-memory", 8)
    key = "encoder.sentence_encoder.self_attn_phi.weight"
    assert_kept(modern, state["model"], [key])
    assert tuple(state["model"][key].shape) == (2, 8, 32) and state["args"].arch == "abc_roberta"


def test_family_is_told_by_the_architecture_or_the_names(lm_dir, mt_dir, tmp_path, capsys):
    _, cfg, model = source_model(lm_dir, LM)
    state = save(tmp_path / "lm.pt", model, cfg=cfg)
    assert convert(state, tmp_path / "a.pt")["abc_conversion"]["family"] == "lm"  # transformer_lm
    unknown = load(state)
    unknown["cfg"]["model"]["_name"] = "my_own_lm"  # not registered here: the names tell
    torch.save(unknown, tmp_path / "mine.pt")
    assert main(["--input", str(tmp_path / "mine.pt"), "--output", str(tmp_path / "b.pt")]) == 0
    assert "its parameter names are a language model's" not in capsys.readouterr().err
    assert load(tmp_path / "b.pt")["abc_conversion"]["family"] == "lm"
    _, cfg, model = source_model(mt_dir, MT)
    mt = convert(save(tmp_path / "mt.pt", model, cfg=cfg), tmp_path / "c.pt")
    assert mt["abc_conversion"]["family"] == "mt"
    assert mt["abc_conversion"]["attention"]["decoder_cross_attn"] == "abc"  # abc_transformer's defaults
    attention = mt["abc_conversion"]["attention"]
    assert (attention["decoder_self_memory"], attention["encoder_attn"]) == (8, "softmax")


def test_checkpoint_tensors_are_compared_bit_for_bit_nan_included(tmp_path):
    """fairseq's sinusoidal positions carry an uninitialised buffer (``_float_tensor``) whose bits
    may read as NaN: the converter's read-back check and transfer's frozen-tensor check compare
    bits, so such a buffer passes both, while a changed bit (0.0 against -0.0) does not."""
    from abc_fairseq.convert.checkpoint_io import same_bits, write_checkpoint
    from abc_fairseq.transfer.models import changed_frozen

    nan = torch.tensor([float("nan"), 1.0])
    write_checkpoint({"model": {"decoder.embed_positions._float_tensor": nan}}, str(tmp_path / "out.pt"))
    saved = torch.load(tmp_path / "out.pt", weights_only=True)["model"]["decoder.embed_positions._float_tensor"]
    assert same_bits(saved, nan) and not torch.equal(saved, nan)
    assert not same_bits(torch.tensor([0.0]), torch.tensor([-0.0]))
    assert not same_bits(torch.tensor([1]), torch.tensor([1.0]))

    student = torch.nn.Linear(2, 2)
    student.register_buffer("_float_tensor", nan.clone())
    raw = {k: v.clone() for k, v in student.state_dict().items()}
    assert changed_frozen(student, raw, []) == []
    with torch.no_grad():
        student.bias.add_(1.0)
    assert changed_frozen(student, raw, []) == ["bias"] and changed_frozen(student, raw, ["bias"]) == []
