"""The Markdown report of any suite, from its declared columns, header, notes and targets: number
cells, the table, notes for the cases that did not measure, ratios against a reference method.

A target is a dict ``{"name", "status", "detail"[, "value"]}``: PASS or FAIL when it could be
checked, SKIP when a (method, N) it needs was not measured or the reference failed; the method
under test failing (error, timeout, out of memory) is a FAIL."""

from typing import Dict, List, Optional, Sequence, Tuple

from .suite import Column, Row, Suite


def num(value, spec: str, suffix: str = "") -> str:
    """``value`` formatted with ``spec``, or ``-`` when there is none."""
    return "-" if value is None else f"{value:{spec}}{suffix}"


def ratio(value) -> str:
    """Ratios keep two significant digits when small (0.0031x), two decimals otherwise."""
    if value is None:
        return "-"
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def cell(column: Column, row: Row) -> str:
    value = column.value(row) if callable(column.value) else row.get(column.value)
    if column.spec == "x":
        return ratio(value)
    return num(value, column.spec) if column.spec else ("-" if value is None else str(value))


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """A GitHub-flavoured Markdown table with padded columns; ``right[i]`` right-aligns column i."""
    cells = [list(headers)] + [list(row) for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right)) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if r else ("-" * (w + 2)) for w, r in zip(widths, right)) + "|"
    return "\n".join([line(cells[0]), rule] + [line(row) for row in cells[1:]])


def one_line(text, limit: int = 300) -> str:
    """A worker's message on one line, cut at ``limit`` characters."""
    return " ".join(str(text or "").split())[:limit]


def failure_notes(rows: Sequence[Row], group: str = "N") -> Tuple[Dict[int, int], List[str]]:
    """Number each distinct (method, status, message) of the rows that did not measure; returns
    row index -> note number and the note lines (``- [k] method N=...: status: message``)."""
    numbers: Dict[tuple, int] = {}
    groups: Dict[tuple, list] = {}
    of_row: Dict[int, int] = {}
    for i, row in enumerate(rows):
        if row.get("status") != "ok":
            key = (row["method"], row.get("status"), one_line(row.get("message")))
            of_row[i] = numbers.setdefault(key, len(numbers) + 1)
            groups.setdefault(key, []).append(str(row[group]))
    lines = [f"- [{number}] {key[0]} N={', '.join(groups[key])}: {key[1]}: {key[2]}" for key, number in numbers.items()]
    return of_row, lines


def table(suite: Suite, rows: Sequence[Row]) -> Tuple[str, List[str]]:
    """The suite's table (a failed case shows ``status [k]`` in its status column) and failure notes."""
    note_of, failures = failure_notes(rows, suite.group)
    body = [[f"{row.get('status')} [{note_of[i]}]" if column.status and i in note_of else cell(column, row)
             for column in suite.columns] for i, row in enumerate(rows)]
    text = markdown_table([c.header for c in suite.columns], body, [c.right for c in suite.columns])
    return text, failures


def render(suite: Suite, rows: List[Row], env: dict, config: dict, memory_probes: List[str],
           targets: List[dict]) -> str:
    """The whole report: title, header, table, notes, targets, appendix."""
    text, failures = table(suite, rows)
    lines = [f"# {suite.title(config)}", "", suite.header(config, rows, env), "", text, "", "Notes:", ""]
    lines += suite.notes(config, rows, memory_probes) + failures + ["", f"## {suite.targets_title(config)}", ""]
    lines += [f"- {t['status']}: {t['name']} -- {t['detail']}" for t in targets]
    return "\n".join(lines + suite.appendix(rows)) + "\n"


def threads_of(rows: Sequence[Row]) -> str:
    """The intra-op thread counts the workers ran with."""
    return ", ".join(map(str, sorted({row["threads"] for row in rows if row.get("threads")}))) or "-"


def timing(config: dict, call: str = "") -> str:
    """How the report's times were taken: 'median of R [calls ]after W warmup[, rounds]'."""
    rounds = config.get("rounds", 1)
    pooled = f" per round, {rounds} interleaved rounds pooled" if rounds > 1 else ""
    return f"median of {config['repeats']}{call} after {config['warmup']} warmup{pooled}"


def machine_note(config: dict, rows: Sequence[Row], env: dict, how: str) -> str:
    """The header's tail: dtype and device, how times were taken, threads, torch and CPU."""
    return (f"{config['dtype']} on {config['device']}; {how}; threads {threads_of(rows)}; torch {env['torch']}; "
            f"CPU {env['cpu_model']}.")


def peak_note(baseline: str, call: str, memory_probes: Sequence[str], tail: str = "") -> str:
    """The notes' line on what peak MiB means."""
    return (f"- peak MiB: peak memory increase over the baseline ({baseline}) during the first, untimed {call}, "
            f"in a fresh process (probe: {', '.join(memory_probes) or '-'}){tail}.")


def method_notes(notes: Dict[str, str], methods) -> List[str]:
    """``- method: note`` for each of ``methods`` (once, in order) that has a note."""
    return [f"- {m}: {notes[m]}" for m in dict.fromkeys(methods) if m in notes]


def add_relative(rows: List[Row], reference, pairs: Sequence[Tuple[str, str, bool]], group: str = "N") -> None:
    """For each (key, name, inverse) in ``pairs``, set ``row[name]`` to the row's ``key`` relative
    to the reference's row of the same ``group`` value (``reference``: a method, or row -> method,
    None for none): reference / row when ``inverse`` (a speed ratio from times: above 1 is faster),
    row / reference otherwise; None where either number is missing or the divisor is 0."""
    for row in rows:
        name = reference(row) if callable(reference) else reference
        ref = next((r for r in rows if r["method"] == name and r[group] == row[group]), {})
        for key, out, inverse in pairs:
            a, b = (ref.get(key), row.get(key)) if inverse else (row.get(key), ref.get(key))
            row[out] = a / b if a is not None and b else None


def measured(row: Optional[Row], key: str) -> bool:
    """The row exists, measured, and has ``key``."""
    return bool(row) and row.get("status") == "ok" and row.get(key) is not None


def compare(name: str, subject: Optional[Row], reference: Optional[Row], key: str, bound: float,
            faster: bool, labels: Tuple[str, str]) -> dict:
    """Target: ``subject``'s ``key`` against ``reference``'s.

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
        ok, detail = value >= bound, f"{who} is {value:.2f}x {against}'s speed (need >= {bound:.3g}x)"
    else:
        if not reference[key]:
            return {"name": name, "status": "SKIP", "detail": f"{against} measured as 0"}
        value = subject[key] / reference[key]
        ok = value <= bound
        detail = f"{who} {subject[key]:.1f} vs {against} {reference[key]:.1f} = {value:.2f}x (need <= {bound:.3g}x)"
    return {"name": name, "status": "PASS" if ok else "FAIL", "value": value, "detail": detail}


def verdict(name: str, value: float, bound: float, detail: str) -> dict:
    """A target whose ``value`` must be at most ``bound``."""
    return {"name": name, "status": "PASS" if value <= bound else "FAIL", "value": value, "detail": detail}
