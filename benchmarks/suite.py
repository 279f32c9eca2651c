"""How a suite is declared: a ``Suite`` holds its flags, its cases and, as data, its report
(columns, ratios to a reference, notes, targets, plot); ``harness.run_suite`` runs any ``Suite``."""

import argparse
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple, Union

Row = dict  # one case: its fields, the worker's result and the numbers derived from both


class Measurement(NamedTuple):
    """One worker run: progress ``label``, worker ``builder`` (``module:function``) and its
    ``params``, and the ``fields`` that identify the case in its row (method, N, ...)."""

    label: str
    builder: str
    params: dict
    fields: dict


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
    """The PNG: ``"lines"`` (``key`` against N on log axes, a line per ``label``) or ``"bars"`` (a
    group per ``group``, a bar per ``label``) of the rows ``select`` keeps; ``baseline``: a line."""

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
    median timed call, None if the case did not measure); ``progress`` formats a measured row
    (missing keys read as 0); ``header``, ``notes``, ``targets`` and ``appendix`` make the report."""

    name: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    validate: Callable[[argparse.Namespace, argparse.ArgumentParser], None]
    measurements: Callable[[argparse.Namespace], List[Measurement]]
    derive: Callable[[Row, Optional[float]], None]
    progress: str
    title: Callable[[dict], str]
    header: Callable[[dict, List[Row], dict], str]  # (config, rows, environment)
    columns: Sequence[Column]
    notes: Callable[[dict, List[Row], List[str]], List[str]]  # (config, rows, memory probes)
    targets: Callable[[List[Row], dict], List[dict]]
    plot: Optional[Plot] = None
    relative: Sequence[Relative] = ()
    group: str = "N"  # the field that ratios and failure notes group rows by
    targets_title: Callable[[dict], str] = lambda config: "Targets (informational)"
    appendix: Callable[[List[Row]], List[str]] = lambda rows: []
