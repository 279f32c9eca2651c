"""python -m abc_fairseq.convert.train_flags: the fairseq-train flags that rebuild a converted
checkpoint's model (the uptraining recipes pass them), and the restore or resume flags of a run
folder: fairseq-train with these flags builds a model whose state dict is the checkpoint's, name for
name and shape for shape, and loads it strictly."""

import shutil

import pytest
from fairseq_helpers import build
from test_convert import LM_DIMS, MT, WIKI103, convert, load, save, source_model

from abc_fairseq.convert.checkpoint_io import ConversionError
from abc_fairseq.convert.train_flags import RESETS, main, model_flags, run_flags


def rebuilt(data, task_flags, checkpoint):
    state = load(checkpoint)
    flags = model_flags(state)
    _, model = build([data, "--user-dir", "abc_fairseq", *task_flags, *flags])
    own = model.state_dict()
    assert {k: tuple(v.shape) for k, v in own.items()} == {k: tuple(v.shape) for k, v in state["model"].items()}
    model.load_state_dict(state["model"], strict=True)
    return flags


def test_adaptive_language_model_is_rebuilt_from_its_flags(lm_dir, tmp_path):
    args, _, model = source_model(lm_dir, WIKI103)
    convert(save(tmp_path / "lm.pt", model, args=args), tmp_path / "abc.pt", "--decoder-self-attn", "gsa",
            "--decoder-self-memory", 4, "--gsa-temperature", 4)
    flags = rebuilt(lm_dir, ["--task", "language_modeling"], tmp_path / "abc.pt")
    assert flags[:2] == ["--arch", "abc_lm_wiki103"]
    pairs = dict(zip(flags, flags[1:]))
    chosen = (pairs["--decoder-self-attn"], pairs["--decoder-self-memory"], pairs["--gsa-temperature"])
    assert chosen == ("gsa", "4", "4.0")
    assert (pairs["--adaptive-softmax-cutoff"], pairs["--tokens-per-sample"]) == ("10,20", "16")
    assert "--tie-adaptive-weights" in flags and "--no-decoder-final-norm" in flags


def test_translation_model_is_rebuilt_from_its_flags(mt_dir, tmp_path):
    _, cfg, model = source_model(mt_dir, MT)
    convert(save(tmp_path / "mt.pt", model, cfg=cfg), tmp_path / "abc.pt", "--decoder-cross-memory", 6)
    flags = rebuilt(mt_dir, ["--task", "translation"], tmp_path / "abc.pt")
    pairs = dict(zip(flags, flags[1:]))
    assert flags[:2] == ["--arch", "abc_transformer"] and "--share-all-embeddings" in flags
    assert (pairs["--source-lang"], pairs["--target-lang"], pairs["--decoder-cross-memory"]) == ("src", "tgt", "6")
    assert flags.count("--max-source-positions") == 1


def test_a_new_run_restores_the_checkpoint_and_a_started_one_resumes(lm_dir, tmp_path):
    args, _, model = source_model(lm_dir, ["--task", "language_modeling", "--arch", "transformer_lm", *LM_DIMS])
    convert(save(tmp_path / "lm.pt", model, args=args), tmp_path / "abc.pt", "--decoder-self-memory", 4)
    run = tmp_path / "run"
    first = run_flags(str(tmp_path / "abc.pt"), str(run))
    assert first[-6:] == ["--restore-file", str(tmp_path / "abc.pt"), *RESETS]
    assert RESETS == ["--reset-optimizer", "--reset-dataloader", "--reset-meters", "--reset-lr-scheduler"]
    run.mkdir()
    shutil.copy(tmp_path / "abc.pt", run / "checkpoint_last.pt")
    resumed = run_flags(str(tmp_path / "absent.pt"), str(run))  # the run's own file: the original may be gone
    assert resumed == first[:-6] and "--restore-file" not in resumed


def test_what_is_no_plugin_model_is_refused(lm_dir, tmp_path, capsys):
    args, _, model = source_model(lm_dir, WIKI103)
    source = save(tmp_path / "lm.pt", model, args=args)
    with pytest.raises(ConversionError, match="'transformer_lm_wiki103' is no abc_fairseq model: convert it first"):
        model_flags(load(source))
    assert main([str(tmp_path / "absent.pt")]) == 1
    assert "checkpoint " + str(tmp_path / "absent.pt") + ": no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0 and "--save-dir" in capsys.readouterr().out
