"""What a benchmark hands to the worker: one prepared call to time and measure."""

from typing import Any, Callable, Dict, NamedTuple


class Case(NamedTuple):
    """One measurable unit of work whose inputs already exist.

    run:  does the work once (e.g. forward + backward); the result is discarded.
    info: JSON-serialisable facts to report with the measurement (shapes, notes, ...).
    """

    run: Callable[[], None]
    info: Dict[str, Any]


class CaseUnavailable(Exception):
    """The case cannot be built here (a module not written yet, no such kernel on this device).
    Reported as ``skipped``, not as an error."""
