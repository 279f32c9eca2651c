"""Whole fairseq models on a CUDA device in mixed precision, on the Triton kernels (issue 14).

Skipped where no GPU is visible (CI has none); run on a GPU machine with
``python -m pytest tests/gpu/test_cuda_models.py``. Each fairseq command runs in a subprocess through
``COUNTING_LAUNCHER``, which counts the calls that reach the Triton kernels' entry points (the
causal chunk kernel, the memory write and read, the decoding step) and prints them at exit: with
``backend="auto"`` on CUDA the models must take the kernels, not the PyTorch path.

- ``abc_transformer`` trained with ``--fp16`` for a few updates on the embedded Bible ES-EN corpus
  (built with the repository's own recipe, as the CPU MT test builds it), then
  ``fairseq-generate --beam 5`` and SacreBLEU through ``scripts/mt/score.py``.
- ``abc_roberta``: masked-LM training with ``--fp16`` on the embedded default corpus, and a
  GLUE-style sentence-prediction fine-tune on the labelled set the RoBERTa CPU tests build.

The data fixtures (``default_corpus``, ``bible_run``, ``roberta_data``) are the CPU tests' own, in
conftest.py.
"""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

ROOT = Path(__file__).resolve().parents[2]
GPU = ["--fp16"]  # fairseq 0.12's --bf16 means TPU: mixed precision on a GPU is fp16
TRITON_ENTRY_POINTS = {
    "abc_fairseq.ops.causal.triton.function": ["triton_causal_abc"],
    "abc_fairseq.ops.bidirectional.triton.function": ["memory_write", "memory_read"],
    "abc_fairseq.ops.causal.triton.recurrent": ["causal_step"],
}
# ``python -c LAUNCHER TOOL ARGS...``: runs ``fairseq_cli.TOOL`` with every Triton entry point
# wrapped in a counter (the ops import them at call time, so replacing the module attribute is
# enough) and prints ``TRITON_CALLS {json}`` to stderr at exit.
COUNTING_LAUNCHER = f"""
import atexit, importlib, json, runpy, sys
calls = {{}}
def count(module, name):
    inner = getattr(module, name)
    def counted(*args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        return inner(*args, **kwargs)
    setattr(module, name, counted)
for module_name, names in {TRITON_ENTRY_POINTS!r}.items():
    module = importlib.import_module(module_name)
    for name in names:
        count(module, name)
atexit.register(lambda: print("TRITON_CALLS " + json.dumps(calls), file=sys.stderr, flush=True))
tool = sys.argv[1]
sys.argv = [tool] + sys.argv[2:]
runpy.run_module("fairseq_cli." + tool, run_name="__main__")
"""

MT_TRAIN = ["--user-dir", "abc_fairseq", "--task", "translation", "--arch", "abc_transformer_tiny",
            "--share-all-embeddings", "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr", "3e-3",
            "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "20", "--warmup-init-lr", "1e-07",
            "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1", "--max-tokens", "4096",
            "--required-batch-size-multiple", "1", "--max-update", "40", "--no-epoch-checkpoints",
            "--log-format", "simple", "--log-interval", "10", "--num-workers", "0", "--seed", "1"]
MLM_TRAIN = ["--user-dir", "abc_fairseq", "--task", "masked_lm", "--criterion", "masked_lm", "--arch",
             "abc_roberta_tiny", "--encoder-attn", "abc", "--encoder-memory", "16", "--sample-break-mode",
             "complete", "--tokens-per-sample", "128", "--optimizer", "adam", "--lr", "1e-3", "--batch-size", "16",
             "--max-update", "20", "--no-epoch-checkpoints", "--log-format", "simple", "--log-interval", "5",
             "--num-workers", "0", "--seed", "1"]
FINETUNE = ["--user-dir", "abc_fairseq", "--task", "sentence_prediction", "--criterion", "sentence_prediction",
            "--num-classes", "2", "--init-token", "0", "--separator-token", "2", "--max-positions", "64",
            "--arch", "abc_roberta_tiny", "--encoder-attn", "abc", "--encoder-memory", "8", "--optimizer", "adam",
            "--lr", "1e-3", "--batch-size", "8", "--max-update", "8", "--no-epoch-checkpoints",
            "--log-format", "simple", "--log-interval", "2", "--num-workers", "0", "--seed", "1",
            "--best-checkpoint-metric", "accuracy", "--maximize-best-checkpoint-metric"]


def counted_fairseq(tool: str, *args, stdout_path=None):
    """``fairseq_cli.TOOL ARGS`` through ``COUNTING_LAUNCHER`` from the repository root; returns
    (log, Triton calls by entry point). With ``stdout_path`` stdout goes to that file instead of the log."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    out = open(stdout_path, "w") if stdout_path else subprocess.PIPE
    try:
        proc = subprocess.run([sys.executable, "-c", COUNTING_LAUNCHER, tool, *map(str, args)], cwd=ROOT, env=env,
                              stdout=out, stderr=subprocess.PIPE, text=True, timeout=900)
    finally:
        if stdout_path:
            out.close()
    log = (proc.stdout or "") + proc.stderr
    assert proc.returncode == 0, f"fairseq-{tool} failed ({proc.returncode}):\n{log[-4000:]}"
    found = re.findall(r"^TRITON_CALLS (\{.*\})$", proc.stderr, re.MULTILINE)
    assert found, f"fairseq-{tool}: the launcher printed no TRITON_CALLS line:\n{log[-2000:]}"
    return log, json.loads(found[-1])


def logged_losses(log: str, key: str = "loss"):
    """The ``key=`` values of fairseq's simple-format log lines (train_inner and epoch summaries)."""
    values = [float(v) for v in re.findall(rf"\b{key}=([-+\w.]+)", log)]
    assert values, f"no {key}= in the log:\n{log[-2000:]}"
    return values


def train_translation(data, save, device_flags):
    return counted_fairseq("train", data, *MT_TRAIN, *device_flags, "--save-dir", save)


def generate_and_score(data, checkpoint, out_dir, device_flags):
    """Beam-5 generation of the test split (evaluate.sh's flags) scored by score.py: (BLEU, calls)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    generated = out_dir / "generate.test.txt"
    _, calls = counted_fairseq("generate", data, "--user-dir", "abc_fairseq", "--path", checkpoint,
                               "--source-lang", "es", "--target-lang", "en", "--gen-subset", "test", "--beam", "5",
                               "--lenpen", "0.6", "--batch-size", "64", "--required-batch-size-multiple", "1",
                               *device_flags, stdout_path=generated)
    proc = subprocess.run([sys.executable, ROOT / "scripts" / "mt" / "score.py", "--data", data, "--split", "test",
                           "--generate-output", generated, "--out-dir", out_dir], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out_dir / "result.json").read_text())["bleu"], calls


def train_masked_lm(data, save, device_flags):
    return counted_fairseq("train", data, *MLM_TRAIN, *device_flags, "--save-dir", save)


def finetune_sentence_prediction(cls_data, save, device_flags):
    return counted_fairseq("train", cls_data, *FINETUNE, *device_flags, "--save-dir", save)


def test_abc_transformer_trains_in_fp16_on_the_kernels_and_beam_searches(bible_run, tmp_path):
    data = bible_run["data"]
    log, calls = train_translation(data, tmp_path / "ckpt", GPU)
    losses = logged_losses(log)
    assert all(math.isfinite(x) for x in losses) and losses[-1] < losses[0], log[-3000:]
    # decoder causal attention (chunk kernel) and cross attention (memory write and read)
    assert calls.get("triton_causal_abc", 0) > 0, calls
    assert calls.get("memory_write", 0) > 0 and calls.get("memory_read", 0) > 0, calls
    bleu, calls = generate_and_score(data, tmp_path / "ckpt" / "checkpoint_last.pt", tmp_path / "eval", GPU)
    assert math.isfinite(bleu) and bleu >= 0.0
    # one decoding step per generated token (step kernel), cross attention read from the cached memory
    assert calls.get("causal_step", 0) > 0 and calls.get("memory_read", 0) > 0, calls


def test_abc_roberta_pretrains_in_fp16_on_the_kernels(default_corpus, tmp_path):
    log, calls = train_masked_lm(default_corpus, tmp_path / "mlm", GPU)
    losses = logged_losses(log)
    assert all(math.isfinite(x) for x in losses) and losses[-1] < losses[0], log[-3000:]
    assert calls.get("memory_write", 0) > 0 and calls.get("memory_read", 0) > 0, calls
    assert (tmp_path / "mlm" / "checkpoint_last.pt").is_file()


def test_abc_roberta_finetunes_sentence_prediction_in_fp16_on_the_kernels(roberta_data, tmp_path):
    log, calls = finetune_sentence_prediction(roberta_data / "cls", tmp_path / "cls", GPU)
    assert all(math.isfinite(x) for x in logged_losses(log))
    accuracy = logged_losses(log, "accuracy")
    assert all(0.0 <= a <= 100.0 for a in accuracy), log[-2000:]
    assert calls.get("memory_write", 0) > 0 and calls.get("memory_read", 0) > 0, calls
