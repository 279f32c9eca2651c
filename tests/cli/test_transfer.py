"""python -m abc_fairseq.transfer on tiny random softmax models of each family, converted: a
transformer_lm (to ABC-8 and GSA-8), a translation transformer in the 2019 ``args`` layout (encoder
ABC, decoder self GSA, cross ABC) and a RoBERTa (ABC), their tasks on the default corpus.

The attention error is measured here independently of the package: the source file, loaded as
fairseq-eval-lm loads it, runs a batch of the valid split built by the task's own iterator, and
each of its softmax attention modules is compared with the same-named module of the converted or
transferred model called on that module's own inputs. Transfer lowers it in every module,
changes only the tensors the conversion added (bit for bit everywhere else, also against the
source file), writes a checkpoint that loads strictly and continues under fairseq-train
--restore-file, and an interrupted run resumed from its save dir ends exactly where an
uninterrupted one does."""

import os

import pytest
import torch
from fairseq import checkpoint_utils, tasks, utils
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq_helpers import ROOT, fairseq, parse
from omegaconf import OmegaConf

from abc_fairseq.convert.checkpoint_io import same_bits
from abc_fairseq.convert.cli import main as convert
from abc_fairseq.convert.train_flags import run_flags
from abc_fairseq.modules import ABCMultiheadAttention
from abc_fairseq.transfer.cli import main as transfer_main
from abc_fairseq.transfer.config import TransferConfig
from abc_fairseq.transfer.loop import transfer
from abc_fairseq.transfer.models import freeze_all_but, load_pair
from abc_fairseq.transfer.run_state import STATE_FILE, TRANSFER_KEY

pytestmark = pytest.mark.usefixtures("one_thread")

LM = ["--task", "language_modeling", "--arch", "transformer_lm", "--decoder-layers", "2", "--decoder-embed-dim", "32",
      "--decoder-ffn-embed-dim", "64", "--decoder-attention-heads", "2", "--tokens-per-sample", "32",
      "--share-decoder-input-output-embed"]
MT = ["--task", "translation", "-s", "src", "-t", "tgt", "--arch", "transformer", "--encoder-layers", "2",
      "--decoder-layers", "2", "--encoder-embed-dim", "32", "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim",
      "64", "--decoder-ffn-embed-dim", "64", "--encoder-attention-heads", "4", "--decoder-attention-heads", "4",
      "--share-all-embeddings"]
ROBERTA = ["--task", "masked_lm", "--arch", "roberta", "--encoder-layers", "2", "--encoder-embed-dim", "32",
           "--encoder-ffn-embed-dim", "64", "--encoder-attention-heads", "2", "--tokens-per-sample", "32"]
# name -> (source's flags, its data ("lm" or "mt"), the 2019 args layout?, the conversion's flags)
SOURCES = {
    "abc": (LM, "lm", False, ["--decoder-self-attn", "abc", "--decoder-self-memory", "8"]),
    "gsa": (LM, "lm", False, ["--decoder-self-attn", "gsa", "--decoder-self-memory", "8"]),
    "mt": (MT, "mt", True, ["--encoder-attn", "abc", "--encoder-memory", "8", "--decoder-self-attn", "gsa",
                            "--decoder-self-memory", "4", "--decoder-cross-attn", "abc",
                            "--decoder-cross-memory", "8"]),
    "roberta": (ROBERTA, "lm", False, ["--encoder-memory", "8"]),
}
PHI = "decoder.self_attn_phi.weight"


def identity_translation(corpus, folder):
    """The default corpus as a translation data set src -> tgt of each line into itself (links)."""
    os.makedirs(folder)
    for split in ("train", "valid"):
        for lang in ("src", "tgt"):
            for ext in ("bin", "idx"):
                os.symlink(os.path.join(corpus, f"{split}.{ext}"),
                           os.path.join(folder, f"{split}.src-tgt.{lang}.{ext}"))
    for lang in ("src", "tgt"):
        os.symlink(os.path.join(corpus, "dict.txt"), os.path.join(folder, f"dict.{lang}.txt"))
    return str(folder)


@pytest.fixture(scope="module")
def checkpoints(default_corpus, tmp_path_factory):
    """A folder holding {name}_source.pt (a random softmax model as fairseq-train saves it) and
    {name}.pt (its conversion) for every name of SOURCES."""
    folder = tmp_path_factory.mktemp("transfer")
    data = {"lm": default_corpus, "mt": identity_translation(default_corpus, folder / "mt_data")}
    for name, (argv, corpus, old_layout, flags) in SOURCES.items():
        args = parse([data[corpus], *argv])
        cfg = convert_namespace_to_omegaconf(args)
        torch.manual_seed(0)
        model = tasks.setup_task(cfg.task).build_model(cfg.model)
        layout = {"args": args} if old_layout else {"cfg": OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)}
        checkpoint_utils.torch_persistent_save(
            {**layout, "model": model.state_dict(),
             "optimizer_history": [{"criterion_name": "CrossEntropyCriterion", "optimizer_name": "FairseqAdam",
                                    "lr_scheduler_state": {"best": 5.0}, "num_updates": 9}],
             "extra_state": {"train_iterator": {"epoch": 1}}, "last_optimizer_state": None},
            str(folder / f"{name}_source.pt"))
        assert convert(["--input", str(folder / f"{name}_source.pt"), "--output", str(folder / f"{name}.pt"),
                        *flags]) == 0
    return folder


def config(folder, name, out, **changes):
    settings = dict(input=str(folder / f"{name}.pt"), output=str(out), save_dir=str(out) + ".run", max_updates=4,
                    lr=1e-3, max_tokens=256, cpu=True, log_interval=1, save_interval=2)
    settings.update(changes)
    return TransferConfig(**settings)


def load_state(path):
    return torch.load(path, map_location="cpu", weights_only=True)


def loaded(path):
    """(model in evaluation mode, task) as fairseq-eval-lm / fairseq-generate load a checkpoint."""
    [model], _, task = checkpoint_utils.load_model_ensemble_and_task([str(path)])
    return model.eval(), task


def valid_sample(model, task, max_tokens=256):
    """The first batch of the valid split, from the task's own batch iterator (unshuffled)."""
    task.load_dataset("valid")
    limit = utils.resolve_max_positions(task.max_positions(), model.max_positions())
    itr = task.get_batch_iterator(task.dataset("valid"), max_tokens=max_tokens, max_positions=limit,
                                  ignore_invalid_inputs=True)
    return next(iter(itr.next_epoch_itr(shuffle=False)))


def attention_mse(source, converted):
    """{module name: mean squared difference over real query positions and channels} between the
    source's softmax attention output and the converted model's module called on the same inputs."""
    teacher, task = loaded(source)
    student, _ = loaded(converted)
    names = [n for n, m in student.named_modules() if isinstance(m, ABCMultiheadAttention)]
    seen, hooks = {}, []
    for name in names:
        module = teacher.get_submodule(name)
        for switch in ("can_use_fastpath", "load_to_BT"):  # fairseq's encoder fast path skips the module
            for layer in teacher.modules():
                if hasattr(layer, switch):
                    setattr(layer, switch, False)
        hooks.append(module.register_forward_hook(
            lambda m, args, kwargs, out, name=name: seen.__setitem__(name, (args, kwargs, out[0])), with_kwargs=True))
    with torch.no_grad():
        teacher(**valid_sample(teacher, task)["net_input"])
        errors = {}
        for name in names:
            args, kwargs, target = seen[name]
            error = (student.get_submodule(name)(*args, **kwargs)[0] - target).pow(2).mean(-1)  # [T, B]
            padding = kwargs.get("key_padding_mask")
            real = torch.ones_like(error) if padding is None or error.shape[0] != padding.shape[1] else ~padding.t()
            errors[name] = float((error * real).sum() / real.sum())
    for hook in hooks:
        hook.remove()
    return errors


@pytest.mark.parametrize("name", list(SOURCES))
def test_transfer_lowers_every_modules_attention_error_and_changes_only_the_added_tensors(checkpoints, tmp_path,
                                                                                           name):
    out = tmp_path / "out.pt"
    record = transfer(config(checkpoints, name, out, max_updates=40, lr=3e-3, log_interval=10, save_interval=40))
    before = attention_mse(checkpoints / f"{name}_source.pt", checkpoints / f"{name}.pt")
    after = attention_mse(checkpoints / f"{name}_source.pt", out)
    assert len(before) == {"mt": 6}.get(name, 2) and all(b > 0 for b in before.values())
    assert all(after[m] < 0.85 * before[m] for m in before), (before, after)

    source, converted, written = (load_state(p) for p in (checkpoints / f"{name}_source.pt",
                                                         checkpoints / f"{name}.pt", out))
    added = converted["abc_conversion"]["added"]
    assert record["trained"] == added and written[TRANSFER_KEY]["trained"] == added and added
    assert written["model"].keys() == converted["model"].keys()
    for key, tensor in converted["model"].items():
        kept = written["model"][key]
        assert kept.dtype == tensor.dtype and kept.shape == tensor.shape
        assert same_bits(kept, tensor) != (key in added), key  # trained: moved; the rest: bit for bit
    for key, tensor in source["model"].items():
        assert same_bits(written["model"][key], tensor), key
    assert {k: v for k, v in written.items() if k not in ("model", TRANSFER_KEY)} == \
        {k: v for k, v in converted.items() if k != "model"}  # the converter's layout (args or cfg) and records
    assert written[TRANSFER_KEY]["updates"] == 40 and written[TRANSFER_KEY]["tokens"] > 40 * 64


def test_only_the_added_tensors_take_gradients_and_train_qk_adds_q_and_k(checkpoints, tmp_path):
    pair = load_pair(str(checkpoints / "abc.pt"), None, train_qk=False, device=torch.device("cpu"))
    freeze_all_but(pair.student, pair.trained)
    assert [n for n, p in pair.student.named_parameters() if p.requires_grad] == [PHI]
    assert not any(p.requires_grad for p in pair.teacher.parameters())

    out = tmp_path / "qk.pt"
    transfer(config(checkpoints, "abc", out, max_updates=2, train_qk=True))
    converted, written = load_state(checkpoints / "abc.pt")["model"], load_state(out)["model"]
    moved = sorted(k for k in converted if not same_bits(converted[k], written[k]))
    qk = [f"decoder.layers.{i}.self_attn.{p}.{w}" for i in (0, 1) for p in ("k_proj", "q_proj")
          for w in ("bias", "weight")]
    assert moved == sorted([PHI, *qk])


@pytest.mark.slow
def test_the_output_loads_strictly_continues_under_restore_file_and_scores_in_eval_lm(
        checkpoints, default_corpus, tmp_path):
    out = tmp_path / "transferred.pt"
    transfer(config(checkpoints, "abc", out, max_updates=2))
    model, task = loaded(out)  # strictly, as fairseq-eval-lm loads it
    with torch.no_grad():
        assert torch.isfinite(model(**valid_sample(model, task)["net_input"])[0]).all()
    flags = run_flags(str(out), str(tmp_path / "up"))
    assert "--restore-file" in flags and ("--decoder-self-attn", "abc") in zip(flags, flags[1:])
    log = fairseq("train", default_corpus, "--task", "language_modeling", "--user-dir",
                  os.path.join(ROOT, "abc_fairseq"), *flags, "--optimizer", "adam", "--lr", "1e-4", "--max-tokens",
                  "256", "--max-update", "1", "--cpu", "--save-dir", tmp_path / "up", "--num-workers", "0",
                  "--no-epoch-checkpoints")
    assert f"Loaded checkpoint {out} (epoch 1 @ 0 updates)" in log
    scored = fairseq("eval_lm", default_corpus, "--path", out, "--user-dir", os.path.join(ROOT, "abc_fairseq"),
                     "--tokens-per-sample", "32", "--max-tokens", "256", "--cpu", "--gen-subset", "valid")
    assert "Perplexity" in scored
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
    assert "--input" in error([*base[:1], str(checkpoints / "abc_source.pt"), *base[2:]])  # not converted
    assert "abc_conversion" in error([*base[:1], str(checkpoints / "abc_source.pt"), *base[2:]])
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
