"""A tiny abc_lm trained with ``--abc-backend triton`` (the kernels, under Triton's interpreter)
keeps the choice in its checkpoint; ``fairseq-eval-lm --model-overrides "{'abc_backend': 'torch'}"``
scores it on the PyTorch path with the loss the kernels give."""

import importlib.util
import random
import re

import pytest
import torch
from fairseq_helpers import fairseq

if importlib.util.find_spec("triton") is None:
    pytest.skip("triton is not installed", allow_module_level=True)

MODEL = ["--task", "language_modeling", "--arch", "abc_lm_small", "--decoder-layers", "1", "--decoder-embed-dim",
         "32", "--decoder-ffn-embed-dim", "32", "--decoder-attention-heads", "2", "--decoder-self-memory", "4",
         "--tokens-per-sample", "32"]
TRAIN = ["--optimizer", "adam", "--lr", "1e-3", "--max-tokens", "256", "--no-epoch-checkpoints", "--num-workers",
         "0", "--seed", "3", "--max-update", "2", "--cpu", "--log-format", "simple"]
INTERPRETER = {"TRITON_INTERPRET": "1", "TRITON_DEFAULT_FP_FUSION": "1"}


def _loss(log):
    match = re.search(r"Loss \(base 2\): ([\d.]+)", log)
    assert match, log[-3000:]
    return float(match.group(1))


def test_trained_with_triton_evaluated_with_torch(tmp_path):
    rng = random.Random(0)
    words = [f"w{i}" for i in range(20)]
    for split, count in (("train", 120), ("valid", 30), ("test", 12)):
        (tmp_path / f"{split}.txt").write_text(
            "".join(" ".join(rng.choice(words) for _ in range(rng.randint(5, 16))) + "\n" for _ in range(count)))
    fairseq("preprocess", "--only-source", "--trainpref", tmp_path / "train.txt", "--validpref", tmp_path / "valid.txt",
            "--testpref", tmp_path / "test.txt", "--destdir", tmp_path / "bin", "--workers", "1")
    save = tmp_path / "checkpoints"
    fairseq("train", tmp_path / "bin", "--user-dir", "abc_fairseq", *MODEL, *TRAIN, "--abc-backend", "triton",
            "--save-dir", save, env_extra=INTERPRETER, timeout=900)
    checkpoint = save / "checkpoint_last.pt"
    assert torch.load(checkpoint, map_location="cpu", weights_only=False)["cfg"]["model"]["abc_backend"] == "triton"
    common = [tmp_path / "bin", "--user-dir", "abc_fairseq", "--path", checkpoint, "--cpu", "--tokens-per-sample",
              "32", "--max-tokens", "256", "--gen-subset", "test"]
    kernels = _loss(fairseq("eval_lm", *common, env_extra=INTERPRETER, timeout=900))
    torch_path = _loss(fairseq("eval_lm", *common, "--model-overrides", "{'abc_backend': 'torch'}"))
    assert abs(kernels - torch_path) < 1e-3, (kernels, torch_path)
    assert 2.0 < torch_path < 8.0  # near-uniform over ~24 symbols after 2 updates: a real loss
    # Without the interpreter or the override, the stored triton cannot run on a CPU machine: a clear error.
    if not torch.cuda.is_available():
        code, log = fairseq("eval_lm", *common, check=False)
        assert code != 0 and "--abc-backend triton cannot run here" in log
