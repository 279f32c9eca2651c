"""Every refusal of python -m abc_fairseq.convert has its message, naming the flag or the file,
and leaves every file as it was: a checkpoint of another family, a position the family lacks, a
strategy or setting the checkpoint's shapes cannot take, a damaged, truncated or foreign file, an
output that is the input or already exists (--force replaces only an earlier conversion)."""

import argparse

import pytest
import torch
from test_convert import LM, MT, load, save, source_model

from abc_fairseq.convert.cli import main


@pytest.fixture
def lm_checkpoint(lm_dir, tmp_path):
    _, cfg, model = source_model(lm_dir, LM)
    return save(tmp_path / "lm.pt", model, cfg=cfg)


def refused(capsys, *argv, code=1):
    assert main([*map(str, argv)]) == code
    return capsys.readouterr().err


@pytest.mark.parametrize("flags,message", [
    (["--family", "mt"], "--family mt: not a translation model checkpoint: its architecture is 'transformer_lm' "
                         "(fairseq's transformer_lm); --family lm converts it"),
    (["--family", "roberta"], "--family roberta: not a RoBERTa checkpoint"),
    (["--decoder-cross-attn", "abc"],
     "--decoder-cross-attn: a language model has no encoder-decoder (cross) attention"),
    (["--encoder-memory", "8"], "--encoder-memory: a language model has no encoder self attention"),
    (["--decoder-self-attn", "rfa", "--decoder-self-memory", "7"], "--decoder-self-memory must be even for rfa"),
    (["--decoder-self-attn", "linformer", "--linformer-max-positions", "8"],
     "--linformer-max-positions 8 is below the checkpoint's 16 positions"),
])
def test_what_the_checkpoint_cannot_take_is_refused_naming_the_flag(lm_checkpoint, tmp_path, capsys, flags, message):
    err = refused(capsys, "--input", lm_checkpoint, "--output", tmp_path / "out.pt", *flags)
    assert message in err, err
    assert not (tmp_path / "out.pt").exists()


def test_a_strategy_without_the_positions_mode_is_an_argparse_error(lm_checkpoint, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--input", str(lm_checkpoint), "--output", str(tmp_path / "o.pt"), "--encoder-attn", "gsa"])
    assert exit_info.value.code == 2 and "--encoder-attn: invalid choice: 'gsa'" in capsys.readouterr().err


def test_control_tensors_of_other_sizes_are_refused(lm_checkpoint, tmp_path, capsys):
    """An ABC checkpoint converted again must keep its control tensors: another memory size cannot."""
    abc8 = tmp_path / "abc8.pt"
    assert main(["--input", str(lm_checkpoint), "--output", str(abc8), "--decoder-self-memory", "8"]) == 0
    err = refused(capsys, "--input", abc8, "--output", tmp_path / "abc16.pt", "--decoder-self-memory", 16)
    assert "control tensors do not fit the chosen attention (decoder.self_attn_phi.weight)" in err
    assert "--decoder-self-attn" in err
    assert main(["--input", str(tmp_path / "abc8.pt"), "--output", str(tmp_path / "again.pt"),
                 "--decoder-self-memory", "8"]) == 0  # the same attention: every tensor kept, none added
    assert load(tmp_path / "again.pt")["abc_conversion"]["added"] == []


def test_damaged_foreign_and_unknown_files(lm_checkpoint, tmp_path, capsys):
    data = lm_checkpoint.read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[: len(data) // 2])
    err = refused(capsys, "--input", tmp_path / "cut.pt", "--output", tmp_path / "o.pt")
    assert "cut.pt is truncated or corrupt" in err
    (tmp_path / "notes.pt").write_text("not a checkpoint\n")
    assert "--input " + str(tmp_path / "notes.pt") + " is not a torch checkpoint" in \
        refused(capsys, "--input", tmp_path / "notes.pt", "--output", tmp_path / "o.pt")
    torch.save({"weights": torch.zeros(2)}, tmp_path / "plain.pt")
    assert "is not a fairseq checkpoint: it holds no 'model' state dict" in \
        refused(capsys, "--input", tmp_path / "plain.pt", "--output", tmp_path / "o.pt")
    torch.save({"args": argparse.Namespace(arch="mystery"), "model": {"w": torch.zeros(1)}}, tmp_path / "odd.pt")
    err = refused(capsys, "--input", tmp_path / "odd.pt", "--output", tmp_path / "o.pt")
    assert "cannot tell the checkpoint's family" in err and "give --family lm|mt|roberta" in err
    state = load(lm_checkpoint)
    del state["model"]["decoder.layers.1.fc2.weight"]
    torch.save(state, tmp_path / "edited.pt")
    err = refused(capsys, "--input", tmp_path / "edited.pt", "--output", tmp_path / "o.pt")
    assert "does not match the language model its own configuration describes (missing decoder.layers.1.fc2.weight)" \
        in err
    assert "no such file" in refused(capsys, "--input", tmp_path / "absent.pt", "--output", tmp_path / "o.pt")
    assert not (tmp_path / "o.pt").exists()


def test_the_output_is_never_the_input_nor_a_file_it_did_not_write(lm_checkpoint, tmp_path, capsys):
    before = lm_checkpoint.read_bytes()
    assert "is the --input file" in refused(capsys, "--input", lm_checkpoint, "--output", lm_checkpoint)
    assert "is the --input file" in refused(capsys, "--input", lm_checkpoint, "--output", lm_checkpoint, "--force")
    other = tmp_path / "notes.pt"
    other.write_text("someone's file\n")
    assert "--output " + str(other) + " exists; the converter never overwrites a file" in \
        refused(capsys, "--input", lm_checkpoint, "--output", other)
    assert "--force replaces only an earlier output of this converter" in \
        refused(capsys, "--input", lm_checkpoint, "--output", other, "--force")
    save(tmp_path / "fairseq.pt", None, model_state={"w": torch.zeros(1)})  # a checkpoint, not a conversion
    assert "carries no 'abc_conversion' record" in \
        refused(capsys, "--input", lm_checkpoint, "--output", tmp_path / "fairseq.pt", "--force")
    assert other.read_text() == "someone's file\n" and lm_checkpoint.read_bytes() == before
    out = tmp_path / "abc.pt"
    assert main(["--input", str(lm_checkpoint), "--output", str(out), "--seed", "1"]) == 0
    first = load(out)["model"]["decoder.self_attn_phi.weight"]
    assert main(["--input", str(lm_checkpoint), "--output", str(out), "--seed", "2", "--force"]) == 0
    assert not torch.equal(load(out)["model"]["decoder.self_attn_phi.weight"], first)  # replaced: new seed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["abc.pt", "fairseq.pt", "lm.pt", "notes.pt"]  # no temp left


def test_a_translation_checkpoint_is_no_roberta_nor_language_model(mt_dir, tmp_path, capsys):
    _, cfg, model = source_model(mt_dir, MT)
    source = save(tmp_path / "mt.pt", model, cfg=cfg)
    err = refused(capsys, "--input", source, "--output", tmp_path / "o.pt", "--family", "lm")
    assert "--family lm: not a language model checkpoint: its architecture is 'transformer'" in err
    assert "--family mt converts it" in err
    from abc_fairseq.convert_roberta import main as convert_roberta

    assert convert_roberta(["--input", str(source), "--output", str(tmp_path / "o.pt")]) == 1
    assert "not a RoBERTa checkpoint" in capsys.readouterr().err
