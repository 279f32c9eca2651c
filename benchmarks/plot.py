"""The PNG of any suite, from its declared ``Plot``: side-by-side panels of lines against a log2
N axis, or of grouped bars; matplotlib on the Agg backend."""

import logging
from typing import List

from .suite import Plot, Row


def pyplot():
    """matplotlib.pyplot on the Agg backend, with matplotlib's DEBUG font search kept out of the
    log (fairseq's logging setup would otherwise print it). Raises ImportError without matplotlib."""
    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _lines(ax, plot: Plot, rows: List[Row], key: str) -> None:
    """``key`` against N, one line per label, measured points only; log2 x, log y."""
    from matplotlib.ticker import LogFormatter

    lines = {}
    for row in rows:
        if row.get("status") == "ok" and row.get(key):  # a log axis has no place for 0
            lines.setdefault(plot.label(row), []).append((row["N"], row[key]))
    for label, points in lines.items():
        ax.plot(*zip(*sorted(points)), marker="o", label=label)
    ticks = sorted({x for points in lines.values() for x, _ in points})
    ax.set_xscale("log", base=2)
    if ticks:  # label the measured x values themselves (512, 1024, ...) instead of 2^k
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{x:g}" for x in ticks])
        ax.minorticks_off()
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(LogFormatter(labelOnlyBase=False))
    ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.5)))
    ax.set_xlabel(plot.xlabel)
    ax.grid(True, which="both", alpha=0.3)
    if lines:
        ax.legend()


def _bars(ax, plot: Plot, rows: List[Row], key: str) -> None:
    """One group per ``plot.group``, its rows' ``key`` side by side (0 where not measured), heights written on."""
    members = {}
    for row in rows:
        members.setdefault(plot.group(row), []).append(row)
    labels = list(dict.fromkeys(plot.label(row) for row in rows))
    width, legend = 0.8 / max(map(len, members.values())), set()
    for i, group in enumerate(members.values()):
        for slot, row in enumerate(group):
            label = plot.label(row)
            (bar,) = ax.bar([i + (slot - (len(group) - 1) / 2) * width], [row.get(key) or 0.0], width,
                            color=f"C{labels.index(label)}", label="_" if label in legend else label)
            legend.add(label)
            ax.annotate(f"{bar.get_height():.4g}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=7)
    names = list(members)
    tilt = max(map(len, names)) > 10  # long case names would overlap
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=20 if tilt else 0, ha="right" if tilt else "center", fontsize=8)
    if plot.baseline is not None:
        ax.axhline(plot.baseline, color="black", linewidth=0.8)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def save_plot(path: str, plot: Plot, rows: List[Row], config: dict) -> None:
    """Draw the panels of ``plot`` in one row and save a 120 dpi PNG. Raises ImportError without matplotlib."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(plot.panels), figsize=(6 * len(plot.panels), 4.5), squeeze=False)
    for ax, panel in zip(axes[0], plot.panels):
        (_lines if plot.kind == "lines" else _bars)(ax, plot, rows, panel.key)
        ax.set_title(panel.title)
        ax.set_ylabel(panel.ylabel)
    fig.suptitle(plot.title(config))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
