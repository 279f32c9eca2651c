"""PNG plots with matplotlib's Agg backend: side-by-side line plots against a log2 x-axis, and the
bar-chart pieces of the suites that compare models at one size."""

import logging
from typing import Callable, Dict, List, NamedTuple, Sequence, Tuple

Series = Dict[str, List[Tuple[float, float]]]  # label -> [(x, y), ...]


class Panel(NamedTuple):
    """One subplot: ``series`` maps a line's label to its points."""

    title: str
    ylabel: str
    series: Series
    log_y: bool = True


def series(rows: Sequence[dict], key: str, label: Callable[[dict], str] = lambda row: row["method"]) -> Series:
    """``key`` against N of every row that measured it, one line per ``label(row)``."""
    lines: Series = {}
    for row in rows:
        if row.get("status") == "ok" and row.get(key) is not None:
            lines.setdefault(label(row), []).append((row["N"], row[key]))
    return lines


def pyplot():
    """matplotlib.pyplot on the Agg backend, with matplotlib's DEBUG font search kept out of the
    log (fairseq's logging setup would otherwise print it). Raises ImportError without matplotlib."""
    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_panels(path: str, panels: Sequence[Panel], xlabel: str, title: str = "") -> None:
    """Draw ``panels`` in one row (log2 x-axis, points marked) and save a PNG to ``path``.

    Raises ImportError when matplotlib is not installed.
    """
    plt = pyplot()
    from matplotlib.ticker import LogFormatter

    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        ticks = set()
        for label, points in panel.series.items():
            points = sorted((x, y) for x, y in points if y is not None and (y > 0 or not panel.log_y))
            if points:
                xs, ys = zip(*points)
                ax.plot(xs, ys, marker="o", label=label)
                ticks.update(xs)
        ax.set_xscale("log", base=2)
        if ticks:  # label the measured x values themselves (512, 1024, ...) instead of 2^k
            ax.set_xticks(sorted(ticks))
            ax.set_xticklabels([f"{x:g}" for x in sorted(ticks)])
            ax.minorticks_off()
        if panel.log_y:
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(LogFormatter(labelOnlyBase=False))
            ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.5)))
        ax.set_title(panel.title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(panel.ylabel)
        ax.grid(True, which="both", alpha=0.3)
        if panel.series:
            ax.legend()
    save_figure(plt, fig, path, title)


def bar_axes(ax, bars, values_format: str, labels: Sequence[str], ylabel: str, **tick_options) -> None:
    """Annotate ``bars`` with their heights, label the x ticks and the y axis, grid the y axis."""
    for bar in bars:
        ax.annotate(f"{bar.get_height():{values_format}}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, **tick_options)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)


def save_figure(plt, fig, path: str, title: str = "") -> None:
    """Title, tighten, save as a 120 dpi PNG and close ``fig``."""
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
