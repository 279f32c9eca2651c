"""How a suite is declared: a ``Suite`` holds its flags, its cases and, as data, what its report
is made of (columns, ratios to a reference, notes, targets, plot). ``harness.run_suite`` is the one
path that turns any ``Suite`` into worker runs, a JSON record, a Markdown report and a PNG."""

import argparse
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple, Union

Row = dict  # one case: its fields, the worker's result and the numbers derived from both


class Measurement(NamedTuple):
    """One worker run: ``label`` for progress lines, the worker ``builder`` (``module:function``)
    and its ``params``, and the ``fields`` that identify the case in its row (method, N, ...)."""

    label: str
    builder: str
    params: dict
    fields: dict


class Column(NamedTuple):
    """A table column: ``value`` is a row key or a function of the row; ``spec`` a format spec,
    ``"x"`` for a ratio (``1.23x``) or ``""`` for the value as text; ``status``: the column where a
    case that did not measure shows ``status [note]``."""

    header: str
    value: Union[str, Callable[[Row], Any]]
    spec: str = ""
    right: bool = True
    status: bool = False


class Panel(NamedTuple):
    """One subplot: ``key`` of the rows against N (lines) or per group (bars)."""

    title: str
    ylabel: str
    key: str


class Plot(NamedTuple):
    """The PNG: ``kind`` ``"lines"`` (``key`` against N on log2 axes, one line per ``label(row)``)
    or ``"bars"`` (one group of bars per ``group(row)``, one bar per ``label(row)``); ``select``
    picks the rows drawn (none selected: no PNG); ``baseline``: a horizontal line at that value."""

    kind: str
    panels: Sequence[Panel]
    title: Callable[[dict], str]
    xlabel: str = ""
    label: Callable[[Row], str] = lambda row: row["method"]
    group: Callable[[Row], str] = lambda row: f"N={row['N']}"
    select: Callable[[Row], bool] = lambda row: True
    baseline: Optional[float] = None


# (reference method, or row -> its reference's method; [(key, ratio name, inverse)]): see report.add_relative
Relative = Tuple[Union[str, Callable[[Row], Optional[str]]], Sequence[Tuple[str, str, bool]]]


class Suite(NamedTuple):
    """A subcommand. ``derive(row, seconds)`` adds the suite's numbers to a row (``seconds``: the
    median timed call, None when the case did not measure); ``progress`` formats a measured row for
    the progress line (``str.format_map``, missing keys read as 0); ``header(config, rows, env)`` is
    the paragraph under the title, ``notes(config, rows, memory_probes)`` the note lines;
    ``targets(rows, config)`` the informational checks; ``appendix(rows)`` lines after them."""

    name: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    validate: Callable[[argparse.Namespace, argparse.ArgumentParser], None]
    measurements: Callable[[argparse.Namespace], List[Measurement]]
    derive: Callable[[Row, Optional[float]], None]
    progress: str
    title: Callable[[dict], str]
    header: Callable[[dict, List[Row], dict], str]
    columns: Sequence[Column]
    notes: Callable[[dict, List[Row], List[str]], List[str]]
    targets: Callable[[List[Row], dict], List[dict]]
    plot: Optional[Plot] = None
    relative: Sequence[Relative] = ()
    group: str = "N"  # the field that ratios and failure notes group rows by
    targets_title: Callable[[dict], str] = lambda config: "Targets (informational)"
    appendix: Callable[[List[Row]], List[str]] = lambda rows: []
