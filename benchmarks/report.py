"""The Markdown report and the PNG of any suite, from its declared ``columns``, header, notes,
targets and ``plot``. A target is ``{"name", "status", "detail"[, "value"]}``: PASS or FAIL when
checked, SKIP when a case it needs was not measured or its reference failed; the method under test
failing (error, timeout, out of memory) is a FAIL."""

import logging
import textwrap
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

Row = dict  # one case: its fields, the worker's result and the numbers derived from both
MIB = 2 ** 20


class Column(NamedTuple):
    """A table column: ``value`` a row key or a function of the row; ``spec`` a format spec, ``"x"``
    for a ratio or ``""`` for text; ``status``: the column where a failed case shows ``status [k]``."""

    header: str
    value: Union[str, Callable[[Row], Any]]
    spec: str = ""
    right: bool = True
    status: bool = False


class Panel(NamedTuple):
    title: str
    ylabel: str
    key: str  # the rows' value drawn


class Plot(NamedTuple):
    """The PNG: ``"lines"`` (``key`` against N on log axes, a line per ``label``) or ``"bars"`` (a bar
    per row, named by ``label``) of the rows ``select`` keeps; ``baseline``: a horizontal line."""

    kind: str
    panels: Sequence[Panel]
    xlabel: str = ""
    label: Callable[[Row], str] = lambda row: row["method"]
    select: Callable[[Row], bool] = lambda row: True
    baseline: Optional[float] = None


# (reference method, or row -> its reference's method; [(key, ratio name, inverse)]): see report.add_relative
Relative = Tuple[Union[str, Callable[[Row], Optional[str]]], Sequence[Tuple[str, str, bool]]]


def cell(column: Column, row: Row) -> str:
    """The row's value as ``column`` formats it, ``-`` if missing; small ratios keep two digits (0.0031x)."""
    value = column.value(row) if callable(column.value) else row.get(column.value)
    if value is None or column.spec != "x":
        return "-" if value is None else f"{value:{column.spec}}"
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """A Markdown table with padded columns; ``right[i]`` right-aligns column i."""
    cells = [list(headers)] + [list(row) for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right)) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if r else ("-" * (w + 2)) for w, r in zip(widths, right)) + "|"
    return "\n".join([line(cells[0]), rule] + [line(row) for row in cells[1:]])


def one_line(text, limit: int = 300) -> str:
    return " ".join(str(text or "").split())[:limit]


def table(suite, rows: Sequence[Row]) -> Tuple[str, List[str]]:
    """The suite's table, a failed case showing ``status [k]`` in its status column, and the notes
    ``- [k] method N=...: status: message``, one per distinct (method, status, message)."""
    failed: Dict[tuple, List[str]] = {}  # (method, status, message) -> the cases' groups, in order
    body = []
    for row in rows:
        key = None if row.get("status") == "ok" else (row["method"], row.get("status"), one_line(row.get("message")))
        if key:
            failed.setdefault(key, []).append(str(row[suite.group]))
        body.append([f"{row.get('status')} [{list(failed).index(key) + 1}]" if column.status and key
                     else cell(column, row) for column in suite.columns])
    notes = [f"- [{k}] {m} N={', '.join(groups)}: {status}: {message}"
             for k, ((m, status, message), groups) in enumerate(failed.items(), 1)]
    return markdown_table([c.header for c in suite.columns], body, [c.right for c in suite.columns]), notes


def render(suite, record: dict) -> str:
    """Title; the suite's header, machine and timing; table; the suite's and the shared notes; targets; profiles."""
    config, env, rows = record["config"], record["environment"], record["results"]
    text, failures = table(suite, rows)
    probes = ", ".join(record["memory_probes"])
    unprobed = "--repeats 0 times the probed call" if suite.cpu_peak else "a call makes too many allocations"
    peak = (f"- peak MiB: peak memory increase over the baseline ({suite.baseline}) during the first, untimed "
            f"{suite.call}, in a fresh process (probe: {probes})." if probes else
            f"- peak MiB: not measured, the CPU goes unprobed where {unprobed} (docs/benchmarks.md).")
    notes = suite.notes(config, rows) + [peak, "- methods: docs/benchmarks.md, \"What the suites measure\"."]
    header = " ".join(filter(None, [suite.header(config), machine_note(config, rows, env, suite.call)]))
    targets = [f"- {t['status']}: {t['name']} -- {t['detail']}" for t in record["targets"]]
    lines = [f"# {suite.description.splitlines()[0]}", "", header, "", text, "", "Notes:", "", *notes, *failures, "",
             "## Targets (informational)", "", *targets]
    for row in rows:
        if row.get("profile"):
            title = ", ".join(str(row[key]) for key in ("method", suite.group) if row.get(key) is not None)
            lines += ["", f"### Profile: {title} (cProfile, top by own time)", "", "```", *row["profile"], "```"]
    return "\n".join(lines) + "\n"


def machine_note(config: dict, rows: Sequence[Row], env: dict, call: str) -> str:
    """Dtype, device, how the times were taken, threads, versions, processor, commit, date, load."""
    rounds = config.get("rounds", 1)
    timing = (f"median of {config['repeats']} {call}s after {config['warmup']} warmup" if config["repeats"] else
              f"the first {call} timed") + (f" per round, {rounds} interleaved rounds pooled" if rounds > 1 else "")
    threads = ", ".join(map(str, sorted({row["threads"] for row in rows if row.get("threads")}))) or "-"
    processor = f"GPU {env['cuda_device']}" if env.get("cuda_device") else f"CPU {env['cpu_model']}"
    load = ", ".join(f"{value:.1f}" for value in env.get("load_average") or []) or "-"
    return (f"{config['dtype']} on {config['device']}; {timing};"
            f" {threads} thread(s); torch {env['torch']}; {processor}; commit {env.get('commit') or '-'}; "
            f"{env['date']}; load average {load}.")


def add_relative(rows: List[Row], reference, pairs: Sequence[Tuple[str, str, bool]], group: str = "N") -> None:
    """Set each row's ``name`` for (key, name, inverse) in ``pairs`` to its ``key`` over the reference row's
    (``reference``: a method, or row -> method) of its ``group``, inverted if ``inverse``; None if missing or 0."""
    for row in rows:
        name = reference(row) if callable(reference) else reference
        ref = next((r for r in rows if r["method"] == name and r[group] == row[group]), {})
        for key, out, inverse in pairs:
            a, b = (ref.get(key), row.get(key)) if inverse else (row.get(key), ref.get(key))
            row[out] = a / b if a is not None and b else None


def measured(row: Optional[Row], key: str) -> bool:
    return bool(row) and row.get("status") == "ok" and row.get(key) is not None


def compare(name: str, subject: Optional[Row], reference: Optional[Row], key: str, bound: float,
            faster: bool, labels: Tuple[str, str]) -> dict:
    """Target: ``faster``: reference / subject >= bound (``key`` a time); else subject / reference
    <= bound (``key`` a size). ``labels``: how the detail names (subject, reference)."""
    who, against = labels
    if subject is None or reference is None:
        return {"name": name, "status": "SKIP", "detail": f"needs {who} and {against} measured"}
    if not measured(reference, key):
        return {"name": name, "status": "SKIP", "detail": f"{against} has no result ({reference.get('status')})"}
    if not measured(subject, key):
        return {"name": name, "status": "FAIL", "detail": f"{who}: {subject.get('status')}"}
    if faster:
        value = reference[key] / subject[key] if subject[key] else float("inf")
        ok, detail = value >= bound, f"{who} is {value:.2f}x {against}'s speed (need >= {bound:.3g}x)"
    else:
        if not reference[key]:
            return {"name": name, "status": "SKIP", "detail": f"{against} measured as 0"}
        value = subject[key] / reference[key]
        ok = value <= bound
        detail = f"{who} {subject[key]:.1f} vs {against} {reference[key]:.1f} = {value:.2f}x (need <= {bound:.3g}x)"
    return {"name": name, "status": "PASS" if ok else "FAIL", "value": value, "detail": detail}


def spread(name: str, rows: Sequence[Row], key: str, bound: float, ends: Sequence[int] = ()) -> dict:
    """Target: over ``rows`` (one method at several N), max / min of their ``key`` at most ``bound``;
    SKIP with fewer than two rows or none at an N of ``ends``, FAIL where one has no ``key``."""
    if len(rows) < 2 or not set(ends) <= {row["N"] for row in rows}:
        among = f", {list(ends)} among them" if ends else ""
        return {"name": name, "status": "SKIP", "detail": f"needs two or more lengths measured{among}"}
    missing = [row["N"] for row in rows if not measured(row, key)]
    if missing:
        return {"name": name, "status": "FAIL", "detail": f"no {key} at N={missing}"}
    values = {row["N"]: row[key] for row in rows}
    result = max(values.values()) / min(values.values())
    detail = f"max / min = {result:.2f} (need <= {bound:g}); " + ", ".join(f"{n}: {v:.4g}" for n, v in values.items())
    return {"name": name, "status": "PASS" if result <= bound else "FAIL", "value": result, "detail": detail}


def save_plot(path: str, suite, rows: List[Row], config: dict) -> None:
    """The panels of the suite's ``plot`` side by side in a 120 dpi PNG (matplotlib, Agg), under its title."""
    logging.getLogger("matplotlib").setLevel(logging.WARNING)  # keep its font search out of fairseq's log
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plot = suite.plot
    fig, axes = plt.subplots(1, len(plot.panels), figsize=(6 * len(plot.panels), 4.5), squeeze=False)
    for ax, panel in zip(axes[0], plot.panels):
        (_lines if plot.kind == "lines" else _bars)(ax, plot, rows, panel.key)
        if plot.baseline is not None:
            ax.axhline(plot.baseline, color="black", linewidth=0.8)
        ax.set_title(panel.title)
        ax.set_ylabel(panel.ylabel)
    about = textwrap.fill(f"{suite.header(config)} {config['dtype']} on {config['device']}", 60 * len(plot.panels))
    fig.suptitle(f"{suite.description.splitlines()[0]}\n{about}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _lines(ax, plot: Plot, rows: List[Row], key: str) -> None:
    """``key`` against N, a line per label, measured points only; log2 x, log y."""
    from matplotlib.ticker import LogFormatter, ScalarFormatter

    lines = {}
    for row in rows:
        if row.get("status") == "ok" and row.get(key):  # a log axis has no place for 0
            lines.setdefault(plot.label(row), []).append((row["N"], row[key]))
    for label, points in lines.items():
        ax.plot(*zip(*sorted(points)), marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(ScalarFormatter())  # 512, not 2^9
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(LogFormatter(labelOnlyBase=False))
    ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.5)))
    ax.set_xlabel(plot.xlabel)
    ax.grid(True, which="both", alpha=0.3)
    if lines:
        ax.legend()


def _bars(ax, plot: Plot, rows: List[Row], key: str) -> None:
    """A bar per row, named by ``plot.label``, its ``key`` (0 if not measured) written on it."""
    bars = ax.bar(range(len(rows)), [row.get(key) or 0.0 for row in rows], color=[f"C{i}" for i in range(len(rows))])
    ax.bar_label(bars, fmt="%.4g", fontsize=7)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([plot.label(row) for row in rows], rotation=20, ha="right", fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
