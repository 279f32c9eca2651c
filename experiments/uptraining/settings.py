"""The fixed setting of the uptraining evidence: the quickstart's model, data and optimiser, the
budgets, the seeds, the uptraining schedule, and the names of the runs.

The from-scratch runs use exactly the fairseq-train arguments ``scripts/quickstart.sh`` builds with
its defaults (its ``common`` array: 4 layers, width 256, FFN 1,024, 4 heads, 256 tokens per sample,
2,048 tokens per batch, Adam, lr 1e-3, inverse square root with 100 warm-up updates) and its model
flags per model; only the checkpoint saving differs (``--save-interval-updates``), which does not
change training: fairseq seeds every update with seed + update number.
"""

from typing import List

PRETRAIN_UPDATES = 300  # P: the softmax source's updates, and the quickstart's budget
CONTINUE_UPDATES = 100  # U: the converted models' continued updates
MEMORY = 64  # ABC's and GSA's memory slots (the quickstart's QUICKSTART_ABC_MEMORY)
MODELS = ("softmax", "abc", "gsa")
EXTRA_SEED_ORDER = ("softmax", "gsa", "abc")  # an extra seed's runs: GSA's quality claim's pair first
CONVERTED = ("abc", "gsa")

# The uptraining schedule (scripts/lm/uptrain.sh --lr/--warmup): the held-out probe's values
# (DESIGN.md section 8); the softmax source's own rate at update 300 is 1e-3 * sqrt(100 / 300),
# 5.8e-4, so the converted model continues near the rate its source would have had.
UPTRAIN_LR = "5e-4"
UPTRAIN_WARMUP = 50
EVAL_EVERY = 25  # checkpoints (and evaluations) every 25 updates where a curve is drawn

# The quickstart's fairseq-train arguments with its defaults (scripts/quickstart.sh, `common`),
# after the data folder and --user-dir; --seed is added per run.
QUICKSTART_TRAIN = [
    "--task", "language_modeling", "--tokens-per-sample", "256", "--sample-break-mode", "none",
    "--decoder-layers", "4", "--decoder-embed-dim", "256", "--decoder-ffn-embed-dim", "1024",
    "--decoder-attention-heads", "4", "--share-decoder-input-output-embed",
    "--decoder-input-dim", "256", "--decoder-output-dim", "256",
    "--dropout", "0.1", "--attention-dropout", "0.0",
    "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--weight-decay", "0.01", "--clip-norm", "1.0",
    "--lr", "0.001", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "100", "--warmup-init-lr", "1e-07",
    "--criterion", "cross_entropy", "--max-tokens", "2048", "--update-freq", "1",
]
QUICKSTART_RUNTIME = ["--cpu", "--num-workers", "0", "--log-format", "simple", "--log-interval", "25",
                      "--no-epoch-checkpoints"]
# The quickstart's model flags per model (its train() calls).
MODEL_FLAGS = {
    "softmax": ["--arch", "transformer_lm"],
    "abc": ["--arch", "abc_lm_small", "--decoder-self-attn", "abc", "--decoder-self-memory", str(MEMORY)],
    "gsa": ["--arch", "abc_lm_small", "--decoder-self-attn", "gsa", "--decoder-self-memory", str(MEMORY)],
}
# The quickstart's fairseq-eval-lm arguments (its evaluate(), without the context-window pass).
QUICKSTART_EVAL = ["--tokens-per-sample", "256", "--max-tokens", "4096", "--cpu", "--num-workers", "0",
                   "--log-format", "simple"]
# What scripts/lm/uptrain.sh does not take from the quickstart by itself: its batch (--max-tokens,
# --batch-tokens) and, after '--', the quickstart's weight decay and clip norm (the recipe's own are
# 0 and 0.1), the saving, and no data-loading worker.
UPTRAIN_RECIPE = ["--max-tokens", "2048", "--batch-tokens", "2048", "--cpu", "--no-tensorboard"]
UPTRAIN_EXTRA = ["--weight-decay", "0.01", "--clip-norm", "1.0", "--num-workers", "0", "--log-interval", "25",
                 "--no-epoch-checkpoints", "--save-interval-updates", str(EVAL_EVERY),
                 "--keep-interval-updates", "-1"]


def scratch_name(model: str, seed: int) -> str:
    """The folder name of a model trained from scratch (softmax included)."""
    return f"{model}_s{seed}"


def converted_name(model: str, seed: int) -> str:
    """The folder name of the softmax source of ``seed`` converted to ``model`` and continued."""
    return f"conv_{model}_s{seed}"


def softmax_curve_updates(final: int) -> List[int]:
    """The softmax checkpoints evaluated beyond P: every EVAL_EVERY updates from P to ``final``."""
    return list(range(PRETRAIN_UPDATES, final + 1, EVAL_EVERY))
