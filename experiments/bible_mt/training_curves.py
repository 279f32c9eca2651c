"""Training curves from fairseq-train logs (``--log-format simple``) and their plot.

Standard library only (matplotlib for the PNG, imported when plotting), so the summary of a
comparison can be drawn by any Python that has matplotlib, without fairseq.
"""

import re
from typing import Dict, List, NamedTuple, Optional, Sequence

# "| valid | epoch 003 | valid_on 'valid' subset | loss 7.12 | nll_loss 6.3 | ppl 78.9 | ... | num_updates 150"
# (also Python's default "INFO:valid:epoch 003 | ..." when logging was configured before fairseq_cli)
_VALID = re.compile(r"(?:\| valid \| |INFO:valid:)epoch (\d+) \|(.*)")
_FIELD = re.compile(r"\|\s*([a-z_]+) ([-0-9.e+]+)")
# "| train | epoch 012 | ... | ups 0.46 | ... | num_updates 600 | ... | train_wall 43 | wall 44"
_TRAIN = re.compile(r"(?:\| train \| |INFO:train:)epoch (\d+) \|(.*)")


class ValidPoint(NamedTuple):
    """Validation after an epoch: loss is label-smoothed cross entropy in bits (fairseq's log),
    nll_loss the plain negative log-likelihood in bits, ppl = 2 ** nll_loss."""

    updates: int
    epoch: int
    loss: float
    nll_loss: float
    ppl: float


def _fields(text: str) -> Dict[str, float]:
    return {name: float(value) for name, value in _FIELD.findall(text)}


def valid_curve(log_text: str) -> List[ValidPoint]:
    """Validation points in update order; a resumed run's repeated epochs keep the last report."""
    points: Dict[int, ValidPoint] = {}
    for match in _VALID.finditer(log_text):
        f = _fields(match.group(2))
        if "num_updates" not in f or "loss" not in f:
            continue
        updates = int(f["num_updates"])
        points[updates] = ValidPoint(updates, int(match.group(1)), f["loss"], f.get("nll_loss", float("nan")),
                                     f.get("ppl", float("nan")))
    return [points[u] for u in sorted(points)]


def train_wall_seconds(log_text: str) -> Optional[float]:
    """fairseq's cumulated ``train_wall`` of the last epoch summary (seconds spent in updates)."""
    walls = [_fields(m.group(2)).get("train_wall") for m in _TRAIN.finditer(log_text)]
    walls = [w for w in walls if w is not None]
    return walls[-1] if walls else None


def loss_at(curve: Sequence[ValidPoint], updates: int) -> Optional[float]:
    """Validation loss at ``updates``, linearly interpolated between epochs (None outside the curve)."""
    for a, b in zip(curve, curve[1:]):
        if a.updates <= updates <= b.updates:
            t = (updates - a.updates) / max(1, b.updates - a.updates)
            return a.loss + t * (b.loss - a.loss)
    if curve and curve[-1].updates == updates:
        return curve[-1].loss
    return None


def first_update_reaching(curve: Sequence[ValidPoint], loss: float) -> Optional[int]:
    """Updates after which the curve first reaches ``loss``, linearly interpolated between the
    validation points around the crossing (None if it never does)."""
    for i, point in enumerate(curve):
        if point.loss <= loss:
            if i == 0:
                return point.updates
            prev = curve[i - 1]
            t = (prev.loss - loss) / (prev.loss - point.loss)
            return round(prev.updates + t * (point.updates - prev.updates))
    return None


def plot_curves(path: str, curves: Dict[str, Sequence[ValidPoint]], title: str) -> None:
    """Validation loss (label-smoothed, bits) and nll against updates, one line per model, as PNG.
    Raises ImportError without matplotlib."""
    import logging

    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, curve in curves.items():
        if not curve:
            continue
        style = "-" if name.startswith("softmax") else "--"
        xs = [p.updates for p in curve]
        axes[0].plot(xs, [p.loss for p in curve], style, marker=".", label=name)
        axes[1].plot(xs, [p.nll_loss for p in curve], style, marker=".", label=name)
    for ax, ylabel in zip(axes, ("validation loss (label-smoothed, bits)", "validation nll (bits)")):
        ax.set_xlabel("updates")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
