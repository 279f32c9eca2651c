"""fairseq's command-line tools with ``--user-dir abc_fairseq`` on tiny data made here (CPU only).

Covers: preprocess -> train abc_lm -> eval-lm (with and without --context-window, and
tools.context_window reproducing its perplexities) -> generate and interactive from the
checkpoint; two-process training under torchrun (gloo) and resuming
it; and loading a translation checkpoint in fairseq-generate under torch's weights-only loader.
"""

import os
import random
import re
import socket
import sys

import pytest
import torch
from fairseq_helpers import fairseq, run_module
from packaging.version import Version

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = sys.executable
WEIGHTS_ONLY_BY_DEFAULT = Version(torch.__version__.split("+")[0]) >= Version("2.6")

# A deliberately small abc_lm_small: the point is the plumbing, not the model.
LM_MODEL = ["--task", "language_modeling", "--arch", "abc_lm_small", "--decoder-layers", "2",
            "--decoder-embed-dim", "64", "--decoder-ffn-embed-dim", "128", "--decoder-self-memory", "8",
            "--tokens-per-sample", "32"]
LM_TRAIN = ["--optimizer", "adam", "--lr", "1e-3", "--max-tokens", "256", "--no-epoch-checkpoints",
            "--log-format", "simple", "--log-interval", "1", "--num-workers", "0", "--seed", "3"]


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines))


def num_updates(checkpoint):
    state = torch.load(checkpoint, map_location="cpu")
    return state["optimizer_history"][-1]["num_updates"]


def eval_lm_loss(log):
    match = re.search(r"Loss \(base 2\): ([\d.]+), Perplexity: ([\d.]+)", log)
    assert match, log[-2000:]
    return float(match.group(1))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lm_data(tmp_path_factory):
    """Random sentences over 40 words, binarised by fairseq-preprocess."""
    path = tmp_path_factory.mktemp("lm")
    rng = random.Random(0)
    words = [f"w{i}" for i in range(40)]
    for split, n in (("train", 300), ("valid", 30), ("test", 12)):
        write_lines(path / f"{split}.txt",
                    [" ".join(rng.choice(words) for _ in range(rng.randint(5, 16))) for _ in range(n)])
    fairseq("preprocess", "--only-source", "--trainpref", path / "train.txt", "--validpref",
            path / "valid.txt", "--testpref", path / "test.txt", "--destdir", path / "bin",
            "--workers", "1")
    return path


@pytest.fixture(scope="module")
def lm_checkpoint(lm_data):
    save_dir = lm_data / "checkpoints"
    log = fairseq("train", lm_data / "bin", "--user-dir", "abc_fairseq", *LM_MODEL, *LM_TRAIN,
                  "--cpu", "--max-update", "4", "--save-dir", save_dir)
    assert "ABC W_phi adds" in log  # the overhead is reported when the model is built
    assert num_updates(save_dir / "checkpoint_last.pt") == 4
    return save_dir / "checkpoint_last.pt"


def test_train_builds_abc_layers(lm_checkpoint):
    state = torch.load(lm_checkpoint, map_location="cpu")
    assert state["cfg"]["model"]["decoder_self_attn"] == "abc"
    assert state["model"]["decoder.self_attn_phi.weight"].shape == (4 * 8, 64)
    assert not any("phi" in k and "layers" in k for k in state["model"])  # stored once


def test_eval_lm_with_and_without_context_window(lm_data, lm_checkpoint):
    common = [lm_data / "bin", "--user-dir", "abc_fairseq", "--path", lm_checkpoint, "--cpu",
              "--tokens-per-sample", "32", "--max-tokens", "512"]
    plain = eval_lm_loss(fairseq("eval_lm", *common))
    windowed = eval_lm_loss(fairseq("eval_lm", *common, "--context-window", "16"))
    # After 4 updates the model is near-uniform over ~44 symbols (log2 44 = 5.5 bits).
    assert 3.0 < plain < 9.0 and 3.0 < windowed < 9.0
    assert plain != windowed  # the context window changes what each token sees


def test_context_window_tool_reproduces_eval_lm(lm_data, lm_checkpoint):
    """tools.context_window scores tokens as fairseq-eval-lm does: the same perplexities."""
    common = [lm_data / "bin", "--user-dir", "abc_fairseq", "--path", lm_checkpoint, "--cpu",
              "--tokens-per-sample", "32", "--max-tokens", "512"]
    expected = {c: re.search(r"Perplexity: ([\d.]+)", fairseq("eval_lm", *common, "--context-window", c))
                for c in (0, 8, 16)}
    expected = {c: float(match.group(1)) for c, match in expected.items()}
    log = run_module("tools.context_window", "--path", lm_checkpoint, "--data", lm_data / "bin",
                     "--tokens-per-sample", "32", "--contexts", "8", "16", "--block", "8")
    table = log.split("The change at")[0]  # the first table: context C, perplexity, ...
    got = {int(c): float(ppl) for c, ppl in re.findall(r"^\| (\d+) \| ([\d.]+) \|", table, re.M)}
    assert got.keys() == expected.keys(), log[-2000:]
    for c, ppl in expected.items():
        assert abs(got[c] - ppl) <= 0.011, (c, got[c], ppl)
    assert "| c \\ o | 0 | 8 | 16 | 24 |" in log  # the grid: contexts and position shifts 0..24


def test_generate_continues_test_prefixes(lm_data, lm_checkpoint):
    log = fairseq("generate", lm_data / "bin", "--user-dir", "abc_fairseq", "--task",
                  "language_modeling", "--path", lm_checkpoint, "--cpu", "--gen-subset", "test",
                  "--sample-break-mode", "eos", "--prefix-size", "2", "--beam", "2",
                  "--max-len-b", "6", "--batch-size", "4",
                  # fairseq's language_modeling batching drops the sentences left over after the
                  # last multiple of 8 unless told otherwise (softmax models too)
                  "--required-batch-size-multiple", "1")
    assert "Translated 12 sentences" in log
    targets = dict(re.findall(r"^T-(\d+)\t(.*)$", log, re.M))
    hypos = dict(re.findall(r"^H-(\d+)\t\S+\t(.*)$", log, re.M))
    assert len(hypos) == 12
    for i, hypo in hypos.items():
        assert hypo.split()[:2] == targets[i].split()[:2]  # the forced prefix


def test_interactive_completes_a_prompt(lm_data, lm_checkpoint):
    log = fairseq("interactive", lm_data / "bin", "--user-dir", "abc_fairseq", "--task",
                  "language_modeling", "--path", lm_checkpoint, "--cpu", "--beam", "2",
                  "--max-len-b", "5", stdin="w1 w2 w3\nw7\n")
    hypos = re.findall(r"^H-(\d+)\t\S+\t(.*)$", log, re.M)
    assert [i for i, _ in hypos] == ["0", "1"]
    assert hypos[0][1].startswith("w1 w2 w3") and hypos[1][1].startswith("w7")


def torchrun_train(lm_data, save_dir, max_update):
    """Two CPU processes under torchrun. fairseq 0.12 needs the distributed setup spelled out
    on CPU: it only infers torchrun's env with CUDA devices, and its default DDP wrapper asks
    for device ids; so the rank is forwarded from torchrun's RANK and legacy DDP is used."""
    launcher = ["torch.distributed.run", "--nproc_per_node", "2", "--master_port", free_port(),
                "--no-python", "sh", "-c",
                'exec "$ABC_PY" -m fairseq_cli.train "$@" --distributed-rank "$RANK"', "sh"]
    return run_module(*launcher, lm_data / "bin", "--user-dir", "abc_fairseq", *LM_MODEL, *LM_TRAIN,
               "--cpu", "--distributed-backend", "gloo", "--distributed-world-size", "2",
               "--distributed-init-method", "env://", "--distributed-no-spawn",
               "--ddp-backend", "legacy_ddp", "--max-update", max_update, "--save-dir", save_dir,
               # a rank that dies at exit prints every Python thread's stack (faulthandler)
               env_extra={"ABC_PY": PY, "PYTHONFAULTHANDLER": "1"})


def test_two_process_training_resumes(lm_data):
    save_dir = lm_data / "distributed"
    first = torchrun_train(lm_data, save_dir, 4)
    assert "training on 2 devices" in first
    assert re.search(r"num_updates=4\b.*\n", first) and "wpb=512" in first  # 2 x 256 tokens
    assert num_updates(save_dir / "checkpoint_last.pt") == 4

    # Rank 0 reads checkpoint_last.pt and broadcasts it (config included) to rank 1, which
    # unpickles it with torch.load: this needs the plugin's weights-only allowlist.
    second = torchrun_train(lm_data, save_dir, 8)
    assert "Loaded checkpoint" in second and "(epoch 1 @ 4 updates)" in second
    assert "num_updates=5" in second and "num_updates=1," not in second
    assert num_updates(save_dir / "checkpoint_last.pt") == 8

    loss = eval_lm_loss(fairseq("eval_lm", lm_data / "bin", "--user-dir", "abc_fairseq", "--path",
                                save_dir / "checkpoint_last.pt", "--cpu", "--tokens-per-sample", "32",
                                "--max-tokens", "512"))
    assert 3.0 < loss < 9.0


@pytest.fixture(scope="module")
def translation_checkpoint(tmp_path_factory):
    """A plain fairseq ``transformer`` (argparse-registered: its checkpoint holds a Namespace)."""
    path = tmp_path_factory.mktemp("mt")
    rng = random.Random(1)
    for split, n in (("train", 120), ("valid", 10), ("test", 6)):
        src = [[f"s{rng.randint(0, 20)}" for _ in range(rng.randint(3, 8))] for _ in range(n)]
        write_lines(path / f"{split}.src", [" ".join(s) for s in src])
        write_lines(path / f"{split}.tgt", [" ".join("t" + w[1:] for w in reversed(s)) for s in src])
    fairseq("preprocess", "--source-lang", "src", "--target-lang", "tgt", "--trainpref", path / "train",
            "--validpref", path / "valid", "--testpref", path / "test", "--destdir", path / "bin",
            "--workers", "1")
    dims = ["--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "32",
            "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim",
            "64", "--encoder-attention-heads", "2", "--decoder-attention-heads", "2"]
    fairseq("train", path / "bin", "--task", "translation", "--arch", "transformer", *dims, "--cpu",
            "--optimizer", "adam", "--lr", "1e-3", "--max-tokens", "400", "--max-update", "2",
            "--save-dir", path / "checkpoints", "--no-epoch-checkpoints", "--num-workers", "0")
    return path


def test_translation_checkpoint_loads_in_generate(translation_checkpoint):
    path = translation_checkpoint
    args = [path / "bin", "--path", path / "checkpoints" / "checkpoint_last.pt", "--cpu",
            "--beam", "2", "--batch-size", "6", "--required-batch-size-multiple", "1"]
    if WEIGHTS_ONLY_BY_DEFAULT:  # the control: fairseq alone cannot read the checkpoint
        code, log = fairseq("generate", *args, check=False)
        assert code != 0 and "argparse.Namespace" in log
    log = fairseq("generate", *args, "--user-dir", "abc_fairseq")
    assert "Translated 6 sentences" in log
