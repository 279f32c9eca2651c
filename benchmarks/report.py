"""What every suite's report is made of: number cells, Markdown tables, notes for the cases that
did not measure, ratios against a reference method, and informational PASS/FAIL/SKIP targets.

A target is a dict ``{"name", "status", "detail"[, "value"]}``: PASS or FAIL when it could be
checked, SKIP when a (method, N) it needs was not measured or the reference failed; the method
under test failing (error, timeout, out of memory) is a FAIL."""

from typing import Dict, Hashable, List, Optional, Sequence, Tuple

from .probes import MIB, median


def result_row(fields: dict, result: dict) -> Tuple[dict, Optional[float]]:
    """A JSON/table row (``fields``, then the worker's ``result``, plus ``peak_mib``) and the median
    time of its timed calls, None when the case did not measure."""
    row = {**fields, **result}
    if "peak_bytes" in result:
        row["peak_mib"] = result["peak_bytes"] / MIB
    times = result.get("times_s") or []
    return row, (median(times) if row.get("status") == "ok" and times else None)


def machine_note(config: dict, rows: Sequence[dict], env: dict, timing: str) -> str:
    """The header's tail: dtype and device, how times were taken, threads, torch and CPU."""
    return (f"{config['dtype']} on {config['device']}; {timing}; threads {threads_of(rows)}; torch {env['torch']}; "
            f"CPU {env['cpu_model']}.")


def peak_note(baseline: str, call: str, memory_probes: Sequence[str]) -> str:
    """The notes' line on what peak MiB means."""
    return (f"- peak MiB: peak memory increase over the baseline ({baseline}) during the first, untimed {call}, "
            f"in a fresh process (probe: {', '.join(memory_probes) or '-'}).")


def num(value, spec: str, suffix: str = "") -> str:
    """``value`` formatted with ``spec``, or ``-`` when there is none."""
    return "-" if value is None else f"{value:{spec}}{suffix}"


def ratio(value) -> str:
    """Ratios keep two significant digits when small (0.0031x), two decimals otherwise."""
    if value is None:
        return "-"
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]], right_align: Sequence[bool] = ()) -> str:
    """A GitHub-flavoured Markdown table with padded columns; ``right_align[i]`` right-aligns column i."""
    cells: List[List[str]] = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    right = list(right_align) + [False] * (len(headers) - len(right_align))

    def line(row: Sequence[str]) -> str:
        padded = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right)]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if r else ("-" * (w + 2)) for w, r in zip(widths, right)) + "|"
    return "\n".join([line(cells[0]), rule] + [line(row) for row in cells[1:]])


def one_line(text, limit: int = 300) -> str:
    """A worker's message on one line, cut at ``limit`` characters."""
    return " ".join(str(text or "").split())[:limit]


def failure_notes(rows: Sequence[dict]) -> Tuple[Dict[int, int], List[str]]:
    """Number each distinct (method, status, message) of the rows that did not measure; returns
    row index -> note number and the note lines (``- [k] method N=...: status: message``)."""
    numbers: Dict[tuple, int] = {}
    lengths: Dict[tuple, list] = {}
    of_row: Dict[int, int] = {}
    for i, row in enumerate(rows):
        if row.get("status") == "ok":
            continue
        key = (row["method"], row.get("status"), one_line(row.get("message")))
        numbers.setdefault(key, len(numbers) + 1)
        lengths.setdefault(key, []).append(str(row["N"]))
        of_row[i] = numbers[key]
    lines = [f"- [{number}] {method} N={', '.join(lengths[(method, status, message)])}: {status}: {message}"
             for (method, status, message), number in numbers.items()]
    return of_row, lines


def status_cell(row: dict, value: str, note_of: Dict[int, int], index: int) -> str:
    """``value`` for a measured row, ``status [k]`` (pointing at its note) for the others."""
    return value if row.get("status") == "ok" else f"{row.get('status')} [{note_of[index]}]"


def threads_of(rows: Sequence[dict]) -> str:
    """The intra-op thread counts the workers ran with."""
    return ", ".join(map(str, sorted({row["threads"] for row in rows if row.get("threads")}))) or "-"


def add_relative(rows: List[dict], reference: str, pairs: Sequence[Tuple[str, str, bool]],
                 group: Hashable = "N") -> None:
    """For each (key, name, inverse) in ``pairs``, set ``row[name]`` to the row's ``key`` relative
    to the ``reference`` method's row of the same ``group`` value: reference / row when
    ``inverse`` (a speed ratio from times: above 1 is faster), row / reference otherwise (a size
    ratio: below 1 is smaller); None where either number is missing or the reference is 0."""
    refs = {row[group]: row for row in rows if row["method"] == reference}
    for row in rows:
        ref = refs.get(row[group]) or {}
        for key, name, inverse in pairs:
            a, b = (ref.get(key), row.get(key)) if inverse else (row.get(key), ref.get(key))
            row[name] = a / b if a is not None and b else None


def measured(row: Optional[dict], key: str) -> bool:
    """The row exists, measured, and has ``key``."""
    return bool(row) and row.get("status") == "ok" and row.get(key) is not None


def compare(name: str, subject: Optional[dict], reference: Optional[dict], key: str, bound: float,
            faster: bool, labels: Tuple[str, str]) -> dict:
    """Target: ``subject``'s ``key`` against ``reference``'s at one N.

    faster=True:  reference / subject >= bound (``key`` a time, the subject at least bound x faster).
    faster=False: subject / reference <= bound (``key`` a size, the subject at most bound x as big).
    ``labels``: (subject, reference) as the detail names them, e.g. ("abc at N=512", "sdpa")."""
    who, against = labels
    if subject is None or reference is None:
        return {"name": name, "status": "SKIP", "detail": f"needs {who} and {against} measured"}
    if not measured(reference, key):
        return {"name": name, "status": "SKIP", "detail": f"{against} has no result ({reference.get('status')})"}
    if not measured(subject, key):
        return {"name": name, "status": "FAIL", "detail": f"{who}: {subject.get('status')}"}
    if faster:
        value = reference[key] / subject[key] if subject[key] else float("inf")
        ok, need = value >= bound, f"need >= {bound:.3g}x"
        detail = f"{who} is {value:.2f}x {against}'s speed ({need})"
    else:
        if not reference[key]:
            return {"name": name, "status": "SKIP", "detail": f"{against} measured as 0"}
        value = subject[key] / reference[key]
        ok, need = value <= bound, f"need <= {bound:.3g}x"
        detail = f"{who} {subject[key]:.1f} vs {against} {reference[key]:.1f} = {value:.2f}x ({need})"
    return {"name": name, "status": "PASS" if ok else "FAIL", "value": value, "detail": detail}


def format_targets(targets: List[dict], title: str = "Targets (informational)") -> str:
    """The printed targets section."""
    lines = [f"## {title}", ""]
    lines += [f"- {t['status']}: {t['name']} -- {t['detail']}" for t in targets]
    return "\n".join(lines)
