"""scripts/lm/uptrain.sh and scripts/mt/uptrain.sh: continue training a converted checkpoint.

Dry runs print a fairseq-train command whose model is the checkpoint's (fairseq's parser builds
it and it loads the checkpoint strictly) and which restores it with every --reset-* flag; once
the save dir holds checkpoint_last.pt the command resumes that run instead, with no
--restore-file (fairseq restores an explicit --restore-file on every start: the slow test shows
it restarting a run). End to end (slow): a transformer_lm trained 2 updates on the default
corpus, converted to ABC, uptrained 2 updates on CPU, resumed to 4, then scored by fairseq-eval-lm."""

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
import torch
from fairseq import checkpoint_utils, tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq_helpers import ROOT, fairseq, parse, parse_command
from mt_helpers import reversal_translation_data
from omegaconf import OmegaConf

from abc_fairseq.convert.cli import main as convert

LM_UPTRAIN = ["bash", "scripts/lm/uptrain.sh"]
MT_UPTRAIN = ["bash", "scripts/mt/uptrain.sh"]
RESETS = ["--reset-optimizer", "--reset-dataloader", "--reset-meters", "--reset-lr-scheduler"]
# A shrunk WikiText-103 model (adaptive input and softmax, tied): the recipe picks adaptive_loss.
ADAPTIVE = ["--task", "language_modeling", "--arch", "transformer_lm_wiki103", "--decoder-layers", "2",
            "--decoder-embed-dim", "32", "--decoder-ffn-embed-dim", "64", "--decoder-attention-heads", "2",
            "--decoder-input-dim", "32", "--decoder-output-dim", "32", "--tokens-per-sample", "16",
            "--adaptive-input-cutoff", "10,20", "--adaptive-softmax-cutoff", "10,20"]


def run(argv, check=True, timeout=300):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([str(a) for a in argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def fairseq_train_line(stdout):
    [line] = [line for line in stdout.splitlines() if "fairseq-train" in line]
    return line


@pytest.fixture(scope="module")
def converted(lm_dir, tmp_path_factory):
    """A fairseq-built adaptive transformer_lm saved as fairseq-train saves it, converted to ABC-4."""
    folder = tmp_path_factory.mktemp("uptrain")
    cfg = convert_namespace_to_omegaconf(parse([lm_dir, *ADAPTIVE]))
    model = tasks.setup_task(cfg.task).build_model(cfg.model)
    checkpoint_utils.torch_persistent_save(
        {"cfg": OmegaConf.to_container(cfg, resolve=True, enum_to_str=True), "model": model.state_dict(),
         "optimizer_history": [{"criterion_name": "AdaptiveLoss", "optimizer_name": "FairseqNAG",
                                "lr_scheduler_state": {"best": 5.0}, "num_updates": 9}],
         "extra_state": {"train_iterator": {"epoch": 1}}, "last_optimizer_state": None}, str(folder / "lm.pt"))
    assert convert(["--input", str(folder / "lm.pt"), "--output", str(folder / "abc.pt"),
                    "--decoder-self-memory", "4"]) == 0
    return folder / "abc.pt"


def test_dry_run_builds_the_checkpoints_model_and_restores_it_with_every_reset(lm_dir, converted, tmp_path):
    proc = run([*LM_UPTRAIN, "--checkpoint", converted, "--data", lm_dir, "--save-dir", tmp_path / "run", "--cpu",
                "--dry-run"])
    tool, args = parse_command(fairseq_train_line(proc.stdout))
    assert tool == "train" and args.arch == "abc_lm_wiki103" and args.criterion == "adaptive_loss"
    assert args.restore_file == str(converted)
    assert args.reset_optimizer and args.reset_dataloader and args.reset_meters and args.reset_lr_scheduler
    assert (args.decoder_self_attn, args.decoder_self_memory, args.tokens_per_sample) == ("abc", 4, 16)
    cfg = convert_namespace_to_omegaconf(args)
    model = tasks.setup_task(cfg.task).build_model(cfg.model)
    model.load_state_dict(torch.load(converted, weights_only=True)["model"], strict=True)
    assert not (tmp_path / "run").exists()  # a dry run claims nothing


def test_a_save_dir_holding_a_run_resumes_it_without_the_restore_file(lm_dir, converted, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(converted, run_dir / "checkpoint_last.pt")
    line = fairseq_train_line(run([*LM_UPTRAIN, "--checkpoint", converted, "--data", lm_dir, "--save-dir", run_dir,
                                   "--cpu", "--dry-run"]).stdout)
    words = shlex.split(line)
    assert "--restore-file" not in words and not set(RESETS) & set(words)
    args = parse_command(line)[1]
    assert args.restore_file == "checkpoint_last.pt" and args.arch == "abc_lm_wiki103"  # fairseq's: SAVE_DIR's file


def test_translation_dry_run_without_the_checkpoint_and_refusals(mt_dir, tmp_path):
    proc = run([*MT_UPTRAIN, "--checkpoint", tmp_path / "abc.pt", "--data", mt_dir, "--save-dir", tmp_path / "run",
                "--nproc-per-node", "2", "--cpu", "--dry-run"])
    assert "does not exist; its model flags are shown as --arch abc_transformer" in proc.stderr
    args = parse_command(proc.stdout.strip())[1]
    assert args.arch == "abc_transformer" and args.criterion == "label_smoothed_cross_entropy"
    assert args.restore_file == str(tmp_path / "abc.pt") and args.reset_lr_scheduler and args.update_freq == [4]
    for recipe in (LM_UPTRAIN, MT_UPTRAIN):
        proc = run([*recipe, "--checkpoint", tmp_path / "abc.pt", "--data", mt_dir, "--save-dir", tmp_path / "run",
                    "--cpu"], check=False)
        assert proc.returncode == 1 and f"--checkpoint {tmp_path / 'abc.pt'}: no such file" in proc.stderr
        proc = run([*recipe, "--data", mt_dir, "--save-dir", tmp_path / "run"], check=False)
        assert proc.returncode == 1 and "--checkpoint is required" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def updates_of(path):
    return torch.load(path, weights_only=True)["optimizer_history"][-1]["num_updates"]


@pytest.mark.slow
def test_uptraining_recipe_end_to_end(default_corpus, tmp_path):
    """transformer_lm, 2 updates -> ABC-8 -> uptrain.sh 2 updates -> rerun resumes to 4 -> eval-lm."""
    tiny = ["--decoder-layers", "2", "--decoder-embed-dim", "32", "--decoder-ffn-embed-dim", "64",
            "--decoder-attention-heads", "2", "--decoder-input-dim", "32", "--decoder-output-dim", "32",
            "--share-decoder-input-output-embed", "--tokens-per-sample", "64"]
    quiet = ["--num-workers", "0", "--no-epoch-checkpoints", "--log-interval", "1", "--log-format", "simple"]
    fairseq("train", default_corpus, "--task", "language_modeling", "--arch", "transformer_lm", *tiny,
            "--optimizer", "adam", "--lr", "1e-3", "--max-tokens", "512", "--max-update", "2", "--cpu",
            "--save-dir", tmp_path / "softmax", *quiet)
    source = tmp_path / "softmax" / "checkpoint_last.pt"
    assert updates_of(source) == 2
    assert convert(["--input", str(source), "--output", str(tmp_path / "abc.pt"), "--decoder-self-memory", "8"]) == 0
    uptrain = [*LM_UPTRAIN, "--checkpoint", tmp_path / "abc.pt", "--data", default_corpus, "--save-dir",
               tmp_path / "up", "--cpu", "--max-tokens", "512", "--batch-tokens", "512", "--max-update", "2",
               "--warmup", "1", "--lr", "1e-3", "--no-tensorboard", "--", *quiet]
    proc = run(uptrain)
    log = proc.stdout + proc.stderr
    assert f"Loaded checkpoint {tmp_path / 'abc.pt'} (epoch 1 @ 0 updates)" in log  # restored, updates reset
    first = tmp_path / "up" / "checkpoint_last.pt"
    assert updates_of(first) == 2
    trained, converted = torch.load(first, weights_only=True)["model"], torch.load(tmp_path / "abc.pt")["model"]
    assert trained.keys() == converted.keys()
    assert not torch.equal(trained["decoder.self_attn_phi.weight"], converted["decoder.self_attn_phi.weight"])

    # fairseq itself restores an explicit --restore-file even beside checkpoint_last.pt: a restart.
    shutil.copytree(tmp_path / "up", tmp_path / "restarted", ignore=shutil.ignore_patterns(".lock", ".run"))
    cut = uptrain.index("--save-dir")
    line = fairseq_train_line(run([*uptrain[:cut + 1], tmp_path / "restarted", "--dry-run", *uptrain[cut + 2:]]).stdout)
    words = shlex.split(line)
    assert words[0] == "fairseq-train" and "--restore-file" not in words  # the recipe resumes: no restore
    restarted = fairseq("train", *words[1:], "--restore-file", tmp_path / "abc.pt", *RESETS)
    assert f"Loaded checkpoint {tmp_path / 'abc.pt'} (epoch 1 @ 0 updates)" in restarted

    proc = run([*uptrain, "--max-update", "4"])  # the same command, two more updates: resumed
    log = proc.stdout + proc.stderr
    assert f"Loaded checkpoint {first} (epoch" in log and "@ 2 updates)" in log
    assert updates_of(first) == 4

    def perplexity(checkpoint):
        scored = fairseq("eval_lm", default_corpus, "--path", checkpoint, "--user-dir", "abc_fairseq",
                         "--tokens-per-sample", "64", "--max-tokens", "512", "--cpu", "--gen-subset", "valid")
        return float(re.search(r"Perplexity: ([0-9.]+)", scored).group(1))

    before, after = perplexity(tmp_path / "abc.pt"), perplexity(first)
    assert 1 < after < before  # 4 updates of uptraining lower the converted model's validation perplexity


@pytest.mark.slow
def test_translation_uptraining_end_to_end(tmp_path):
    """transformer (a word-reversal toy task from the default corpus), 2 updates -> cross ABC and
    causal GSA -> uptrain.sh 2 updates -> fairseq-generate scores the valid set."""
    data = reversal_translation_data(tmp_path)
    dims = ["--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "32", "--decoder-embed-dim", "32",
            "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64", "--encoder-attention-heads", "2",
            "--decoder-attention-heads", "2", "--share-all-embeddings"]
    quiet = ["--num-workers", "0", "--no-epoch-checkpoints", "--log-format", "simple"]
    fairseq("train", data, "--task", "translation", "--arch", "transformer", *dims, "--optimizer", "adam", "--lr",
            "1e-3", "--max-tokens", "1024", "--max-update", "2", "--cpu", "--save-dir", tmp_path / "softmax", *quiet)
    assert convert(["--input", str(tmp_path / "softmax" / "checkpoint_last.pt"), "--output", str(tmp_path / "abc.pt"),
                    "--decoder-cross-attn", "abc", "--decoder-cross-memory", "4", "--decoder-self-attn", "gsa",
                    "--decoder-self-memory", "4"]) == 0
    proc = run([*MT_UPTRAIN, "--checkpoint", tmp_path / "abc.pt", "--data", data, "--save-dir", tmp_path / "up",
                "--cpu", "--max-tokens", "1024", "--total-tokens", "1024", "--max-update", "2", "--warmup", "1",
                "--no-tensorboard", "--", *quiet])
    assert f"Loaded checkpoint {tmp_path / 'abc.pt'} (epoch 1 @ 0 updates)" in proc.stdout + proc.stderr
    last = tmp_path / "up" / "checkpoint_last.pt"
    assert updates_of(last) == 2
    model = torch.load(last, weights_only=True)["cfg"]["model"]
    assert (model.decoder_self_attn, model.decoder_cross_attn, model.encoder_attn) == ("gsa", "abc", "softmax")
    generated = fairseq("generate", data, "--user-dir", "abc_fairseq", "--path", last, "--gen-subset", "valid",
                        "--beam", "2", "--max-len-b", "30", "--cpu", "--required-batch-size-multiple", "1")
    assert len(re.findall(r"^H-\d+\t", generated, flags=re.M)) == 20 and "BLEU4 = " in generated
