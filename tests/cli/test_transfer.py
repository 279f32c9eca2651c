"""python -m abc_fairseq.transfer on a tiny transformer_lm converted to ABC-8 and GSA-8.

The per-module attention MSE is measured here independently of the package: fairseq's own
transformer_lm (the source file, loaded as fairseq-eval-lm loads it) runs a batch of the default
corpus's valid split; each of its layers' softmax attention output is compared with the
transferred model's attention module called on that layer's input. Transfer lowers it in every
layer, changes only the tensors the conversion added (bit for bit everywhere else, also against
the source file), writes a checkpoint that loads strictly and continues under fairseq-train
--restore-file, and an interrupted run resumed from its save dir ends exactly where an
uninterrupted one does."""

import os

import pytest
import torch
from fairseq import checkpoint_utils, tasks
from fairseq.data import data_utils
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq_helpers import ROOT, fairseq, parse
from omegaconf import OmegaConf

from abc_fairseq.convert.cli import main as convert
from abc_fairseq.convert.train_flags import run_flags
from abc_fairseq.transfer.cli import main as transfer_main
from abc_fairseq.transfer.config import TransferConfig
from abc_fairseq.transfer.loop import transfer
from abc_fairseq.transfer.models import freeze_all_but, load_pair
from abc_fairseq.transfer.run_state import STATE_FILE, TRANSFER_KEY

pytestmark = pytest.mark.usefixtures("one_thread")

LM = ["--task", "language_modeling", "--arch", "transformer_lm", "--decoder-layers", "2", "--decoder-embed-dim", "32",
      "--decoder-ffn-embed-dim", "64", "--decoder-attention-heads", "2", "--tokens-per-sample", "32",
      "--share-decoder-input-output-embed"]
PHI = "decoder.self_attn_phi.weight"


@pytest.fixture(scope="module")
def checkpoints(default_corpus, tmp_path_factory):
    """lm.pt (a transformer_lm as fairseq-train saves it, its task on the default corpus) and its
    conversions abc.pt (ABC-8) and gsa.pt (GSA-8)."""
    folder = tmp_path_factory.mktemp("transfer")
    cfg = convert_namespace_to_omegaconf(parse([default_corpus, *LM]))
    torch.manual_seed(0)
    model = tasks.setup_task(cfg.task).build_model(cfg.model)
    checkpoint_utils.torch_persistent_save(
        {"cfg": OmegaConf.to_container(cfg, resolve=True, enum_to_str=True), "model": model.state_dict(),
         "optimizer_history": [{"criterion_name": "CrossEntropyCriterion", "optimizer_name": "FairseqAdam",
                                "lr_scheduler_state": {"best": 5.0}, "num_updates": 9}],
         "extra_state": {"train_iterator": {"epoch": 1}}, "last_optimizer_state": None}, str(folder / "lm.pt"))
    for name in ("abc", "gsa"):
        assert convert(["--input", str(folder / "lm.pt"), "--output", str(folder / f"{name}.pt"),
                        "--decoder-self-attn", name, "--decoder-self-memory", "8"]) == 0
    return folder


def config(folder, name, out, **changes):
    settings = dict(input=str(folder / f"{name}.pt"), output=str(out), save_dir=str(out) + ".run", max_updates=4,
                    lr=1e-3, max_tokens=256, cpu=True, log_interval=1, save_interval=2)
    settings.update(changes)
    return TransferConfig(**settings)


def load_state(path):
    return torch.load(path, map_location="cpu", weights_only=True)


def valid_batch(data, rows=6, length=32):
    """[rows, length] tokens of the valid split, in order (the source's block size)."""
    dictionary = tasks.setup_task(convert_namespace_to_omegaconf(parse([data, *LM])).task).source_dictionary
    dataset = data_utils.load_indexed_dataset(os.path.join(data, "valid"), dictionary)
    tokens = torch.cat([dataset[i] for i in range(200)])[:rows * length]
    return tokens.view(rows, length)


def attention_mse(source, converted, tokens):
    """Per layer: mean squared difference between the source's softmax attention output and the
    converted model's attention module on the same input (the source's, entering that module)."""
    [teacher], _ = checkpoint_utils.load_model_ensemble([str(source)])
    [student], _ = checkpoint_utils.load_model_ensemble([str(converted)])
    teacher.eval(), student.eval()
    seen = {}
    hooks = [layer.self_attn.register_forward_hook(
        lambda module, args, kwargs, out, i=i: seen.__setitem__(i, (kwargs["query"], out[0])), with_kwargs=True)
        for i, layer in enumerate(teacher.decoder.layers)]
    with torch.no_grad():
        teacher(tokens)
        errors = []
        for i, layer in enumerate(student.decoder.layers):
            x, target = seen[i]
            output = layer.self_attn(query=x, key=x, value=x, key_padding_mask=None)[0]
            errors.append(float((output - target).pow(2).mean()))
    for hook in hooks:
        hook.remove()
    return errors


@pytest.mark.parametrize("strategy", ["abc", "gsa"])
def test_transfer_lowers_every_layers_attention_error_and_changes_only_the_added_tensors(
        checkpoints, default_corpus, tmp_path, strategy):
    out = tmp_path / "out.pt"
    record = transfer(config(checkpoints, strategy, out, max_updates=40, lr=3e-3, log_interval=10, save_interval=40))
    tokens = valid_batch(default_corpus)
    before = attention_mse(checkpoints / "lm.pt", checkpoints / f"{strategy}.pt", tokens)
    after = attention_mse(checkpoints / "lm.pt", out, tokens)
    assert len(before) == 2 and all(b > 0 for b in before)
    assert all(a < 0.85 * b for a, b in zip(after, before)), (before, after)

    source, converted, written = (load_state(p) for p in (checkpoints / "lm.pt", checkpoints / f"{strategy}.pt", out))
    added = converted["abc_conversion"]["added"]
    assert record["trained"] == added == [PHI] and written[TRANSFER_KEY]["trained"] == added
    assert written["model"].keys() == converted["model"].keys()
    for key, tensor in converted["model"].items():
        kept = written["model"][key]
        assert kept.dtype == tensor.dtype and kept.shape == tensor.shape
        assert torch.equal(kept, tensor) != (key in added), key  # trained: moved; the rest: bit for bit
    for key, tensor in source["model"].items():
        assert torch.equal(written["model"][key], tensor), key
    assert {k: v for k, v in written.items() if k not in ("model", TRANSFER_KEY)} == \
        {k: v for k, v in converted.items() if k != "model"}  # the converter's layout, records and flags kept
    assert written[TRANSFER_KEY]["updates"] == 40 and written[TRANSFER_KEY]["tokens"] > 40 * 128


def test_only_the_added_tensors_take_gradients_and_train_qk_adds_q_and_k(checkpoints, tmp_path):
    pair = load_pair(str(checkpoints / "abc.pt"), None, train_qk=False, device=torch.device("cpu"))
    freeze_all_but(pair.student, pair.trained)
    assert [n for n, p in pair.student.named_parameters() if p.requires_grad] == [PHI]
    assert not any(p.requires_grad for p in pair.teacher.parameters())

    out = tmp_path / "qk.pt"
    transfer(config(checkpoints, "abc", out, max_updates=2, train_qk=True))
    converted, written = load_state(checkpoints / "abc.pt")["model"], load_state(out)["model"]
    moved = sorted(k for k in converted if not torch.equal(converted[k], written[k]))
    qk = [f"decoder.layers.{i}.self_attn.{p}.{w}" for i in (0, 1) for p in ("k_proj", "q_proj")
          for w in ("bias", "weight")]
    assert moved == sorted([PHI, *qk])


@pytest.mark.slow
def test_the_output_loads_strictly_and_continues_under_fairseq_train_restore_file(
        checkpoints, default_corpus, tmp_path):
    out = tmp_path / "transferred.pt"
    transfer(config(checkpoints, "abc", out, max_updates=2))
    [model], _ = checkpoint_utils.load_model_ensemble([str(out)], strict=True)  # fairseq-eval-lm's loader
    with torch.no_grad():
        assert torch.isfinite(model.eval()(valid_batch(default_corpus, rows=2))[0]).all()
    flags = run_flags(str(out), str(tmp_path / "up"))
    assert "--restore-file" in flags and ("--decoder-self-attn", "abc") in zip(flags, flags[1:])
    log = fairseq("train", default_corpus, "--task", "language_modeling", "--user-dir",
                  os.path.join(ROOT, "abc_fairseq"), *flags, "--optimizer", "adam", "--lr", "1e-4", "--max-tokens",
                  "256", "--max-update", "1", "--cpu", "--save-dir", tmp_path / "up", "--num-workers", "0",
                  "--no-epoch-checkpoints")
    assert f"Loaded checkpoint {out} (epoch 1 @ 0 updates)" in log
    continued = load_state(tmp_path / "up" / "checkpoint_last.pt")
    assert continued["optimizer_history"][-1]["num_updates"] == 1
    assert continued["model"].keys() == load_state(out)["model"].keys()


class Interrupted(Exception):
    pass


def test_an_interrupted_run_resumes_from_its_save_dir_and_ends_as_an_uninterrupted_one(checkpoints, tmp_path, capsys):
    transfer(config(checkpoints, "gsa", tmp_path / "whole.pt"))
    whole = load_state(tmp_path / "whole.pt")

    def stop_at_3(step):
        if step == 3:
            raise Interrupted

    cut = config(checkpoints, "gsa", tmp_path / "cut.pt")
    with pytest.raises(Interrupted):
        transfer(cut, after_update=stop_at_3)
    assert not (tmp_path / "cut.pt").exists() and load_state(tmp_path / "cut.pt.run" / STATE_FILE)["step"] == 2
    capsys.readouterr()
    transfer(cut)
    assert f"resumed {cut.save_dir} at update 2" in capsys.readouterr().out
    resumed = load_state(tmp_path / "cut.pt")
    assert resumed[TRANSFER_KEY]["updates"] == whole[TRANSFER_KEY]["updates"] == 4
    assert resumed[TRANSFER_KEY]["tokens"] == whole[TRANSFER_KEY]["tokens"]
    assert torch.equal(resumed["model"][PHI], whole["model"][PHI])
    assert resumed[TRANSFER_KEY]["mse"] == whole[TRANSFER_KEY]["mse"]

    # A finished run continues to a larger --max-updates from its state, into a new output.
    more = transfer(config(checkpoints, "gsa", tmp_path / "more.pt", save_dir=str(tmp_path / "cut.pt.run"),
                           max_updates=5))
    assert more["updates"] == 5


def test_help_and_refusals_name_the_flag(checkpoints, default_corpus, tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        transfer_main(["--help"])
    assert done.value.code == 0 and "--train-qk" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        transfer_main(["--input", "x", "--output", "y", "--save-dir", "z", "--max-updates", "0"])
    assert refused.value.code == 2 and "--max-updates" in capsys.readouterr().err

    base = ["--input", str(checkpoints / "abc.pt"), "--output", str(tmp_path / "o.pt"), "--save-dir",
            str(tmp_path / "run"), "--cpu", "--max-updates", "1", "--max-tokens", "256"]

    def error(argv):
        assert transfer_main(argv) == 1
        return capsys.readouterr().err

    assert "--input" in error([*base[:1], str(tmp_path / "none.pt"), *base[2:]])
    assert "--input" in error([*base[:1], str(checkpoints / "lm.pt"), *base[2:]])  # not converted
    assert "abc_conversion" in error([*base[:1], str(checkpoints / "lm.pt"), *base[2:]])
    assert "--data" in error([*base, "--data", str(tmp_path / "nowhere")])
    assert "--subset" in error([*base, "--subset", "nosuchsplit"])
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("mine")
    assert "--save-dir" in error([*base[:5], str(tmp_path / "foreign"), *base[6:]])
    (tmp_path / "o.pt").write_text("mine")
    assert "--output" in error(base)
    assert "--output" in error([*base, "--force"])  # --force replaces only transfer's own output
    assert (tmp_path / "o.pt").read_text() == "mine" and (tmp_path / "foreign" / "notes.txt").read_text() == "mine"
    assert "--output" in error([*base[:3], base[1], *base[4:]])  # the input itself
    assert not (tmp_path / "run").exists()  # refused runs claim nothing

    assert transfer_main([*base[:3], str(tmp_path / "first.pt"), *base[4:]]) == 0
    assert "--train-qk" in error([*base[:3], str(tmp_path / "second.pt"), *base[4:], "--train-qk"])
    assert "--save-dir" in error([*base[:1], str(checkpoints / "gsa.pt"), *base[2:3], str(tmp_path / "third.pt"),
                                  *base[4:]])
