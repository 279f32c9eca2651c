"""The fixed setting of the transfer evidence: budgets, the transfer stage, the converted variants
and the run names. The model, data, optimiser, evaluation and uptraining schedule are the
uptraining evidence's (``experiments.uptraining.settings``: the quickstart's)."""

from typing import Dict, List

from experiments.uptraining import settings as U

PRETRAIN_UPDATES = 1200  # P: the softmax source's updates (4x the quickstart's 300)
CONTINUE_UPDATES = 100  # the converted models' continued updates
CURVE = (0, 25, 50, 100)  # continued updates at which test perplexity is reported
MEMORY = U.MEMORY  # ABC's and GSA's slots

# The transfer stage (python -m abc_fairseq.transfer): K updates of the quickstart's batch size, so
# that its tokens equal K language-model updates'; the from-scratch runs are trained to
# P + K + CONTINUE_UPDATES to meet the transferred models at equal tokens.
TRANSFER_UPDATES = 100
TRANSFER_LR = "1e-3"
TRANSFER_MAX_TOKENS = 2048
SCRATCH_UPDATES = PRETRAIN_UPDATES + TRANSFER_UPDATES + CONTINUE_UPDATES
# A longer transfer (the same run resumed to this many updates), scored before any LM update only:
# how the start gap shrinks with the transfer's length.
LONG_TRANSFER_UPDATES = 400

# The zero-training control: a window of 64 tokens plus 4 sinks (window-sink keeps n - S recent
# tokens and S sinks, so n = 68).
SINK_TOKENS = 4
SINK_WINDOW = 64

# Converted variants: name -> the conversion's attention flags (the softmax source's self
# attention replaced), and whether the transfer stage runs before the continued updates.
VARIANTS: Dict[str, dict] = {
    "abc": {"flags": ["--decoder-self-attn", "abc", "--decoder-self-memory", str(MEMORY)], "transfer": False},
    "abc_transfer": {"flags": ["--decoder-self-attn", "abc", "--decoder-self-memory", str(MEMORY)],
                     "transfer": True},
    "gsa": {"flags": ["--decoder-self-attn", "gsa", "--decoder-self-memory", str(MEMORY)], "transfer": False},
    "gsa_transfer": {"flags": ["--decoder-self-attn", "gsa", "--decoder-self-memory", str(MEMORY)],
                     "transfer": True},
    "window_sink": {"flags": ["--decoder-self-attn", "window-sink", "--decoder-self-memory",
                              str(SINK_WINDOW + SINK_TOKENS), "--sink-tokens", str(SINK_TOKENS)],
                    "transfer": False},
}
SCRATCH = ("abc", "gsa")  # bounded-memory models trained from scratch to SCRATCH_UPDATES


def transfer_log(updates: int) -> str:
    """The log file (in the run folder) of the transfer step run to ``updates``."""
    return "transfer.log" if updates == TRANSFER_UPDATES else f"transfer_{updates}.log"


def variant_model(variant: str) -> str:
    """The attention a variant runs (the executor picks the worktree by it): abc, gsa or window."""
    return variant.split("_")[0] if variant != "window_sink" else "window"


def scratch_name(model: str, seed: int) -> str:
    return f"{model}_s{seed}"


def converted_name(variant: str, seed: int) -> str:
    return f"conv_{variant}_s{seed}"


def source_curve() -> List[int]:
    """The softmax source's checkpoints read: P, then P + k for every k of CURVE."""
    return [PRETRAIN_UPDATES + k for k in CURVE]


def scratch_curve() -> List[int]:
    """The from-scratch checkpoints read: at P + k (equal updates to the runs without transfer) and
    at P + K + k (equal tokens to the transferred runs)."""
    return sorted({PRETRAIN_UPDATES + k for k in CURVE} | {PRETRAIN_UPDATES + TRANSFER_UPDATES + k for k in CURVE})
