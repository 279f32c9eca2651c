"""Turning raw ``attention`` measurements into rows, the Markdown report and the plot panels."""

from typing import Dict, List, Sequence, Tuple

from .attention_methods import METHOD_NOTES
from .driver import rounds_note
from .plot import Panel
from .table import markdown_table
from .timing import median

HEADERS = ("N", "batch", "method", "ms/call", "us/token", "x sdpa speed", "peak MiB", "x sdpa memory")


def make_row(method: str, length: int, batch: int, result: dict) -> dict:
    """One JSON/table row from a worker result: raw numbers plus per-call and per-token times."""
    tokens = batch * length
    row = {"method": method, "N": length, "batch": batch, "tokens_per_call": tokens, **result}
    times = result.get("times_s") or []
    if row.get("status") == "ok" and times:
        median_s = median(times)
        row.update(median_s=median_s, ms_per_call=median_s * 1e3, us_per_token=median_s * 1e6 / tokens)
    if "peak_bytes" in result:
        row["peak_mib"] = result["peak_bytes"] / 2 ** 20
    return row


def add_relative(rows: List[dict]) -> None:
    """Add ``speed_vs_sdpa`` (sdpa time / method time, >1 is faster) and ``memory_vs_sdpa``
    (method peak / sdpa peak, <1 is smaller) where both numbers exist at the same N."""
    sdpa = {row["N"]: row for row in rows if row["method"] == "sdpa"}
    for row in rows:
        ref = sdpa.get(row["N"])
        row["speed_vs_sdpa"] = (
            ref["median_s"] / row["median_s"] if ref and "median_s" in ref and "median_s" in row else None
        )
        row["memory_vs_sdpa"] = (
            row["peak_mib"] / ref["peak_mib"]
            if ref and ref.get("peak_mib") and row.get("peak_mib") is not None else None
        )


def _num(value, spec: str, suffix: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{suffix}"


def _ratio(value) -> str:
    """Ratios keep two significant digits when small (0.0031x), two decimals otherwise."""
    if value is None:
        return "-"
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def _footnotes(rows: Sequence[dict]) -> Tuple[Dict[int, int], List[str]]:
    """Number each distinct (method, status, message) of the rows that did not run;
    returns row index -> footnote number, and the footnote lines."""
    numbers: Dict[tuple, int] = {}
    lengths: Dict[tuple, list] = {}
    of_row: Dict[int, int] = {}
    for i, row in enumerate(rows):
        if row.get("status") == "ok":
            continue
        key = (row["method"], row.get("status"), " ".join(str(row.get("message", "")).split()))
        numbers.setdefault(key, len(numbers) + 1)
        lengths.setdefault(key, []).append(str(row["N"]))
        of_row[i] = numbers[key]
    lines = [f"- [{number}] {method} N={', '.join(lengths[(method, status, message)])}: {status}: {message}"
             for (method, status, message), number in numbers.items()]
    return of_row, lines


def report(rows: Sequence[dict], env: dict, config: dict, memory_probes: Sequence[str]) -> str:
    """The Markdown report: header, table, notes (method caveats and failures)."""
    footnote_of, footnotes = _footnotes(rows)
    table_rows = []
    for i, row in enumerate(rows):
        if row.get("status") == "ok":
            time_cell = _num(row.get("ms_per_call"), ".2f")
        else:
            time_cell = f"{row.get('status')} [{footnote_of[i]}]"
        table_rows.append((
            row["N"], row["batch"], row["method"], time_cell,
            _num(row.get("us_per_token"), ".3f"), _ratio(row.get("speed_vs_sdpa")),
            _num(row.get("peak_mib"), ".1f"), _ratio(row.get("memory_vs_sdpa")),
        ))
    threads = sorted({row["threads"] for row in rows if row.get("threads")})
    lines = [
        "# Causal attention, forward + backward",
        "",
        f"{config['tokens']} tokens per call, H={config['heads']}, d={config['head_dim']}, "
        f"ABC slots n={config['memory']}, {config['dtype']} on {config['device']}; "
        f"median of {config['repeats']} after {config['warmup']} warmup{rounds_note(config)}; "
        f"threads {', '.join(map(str, threads)) or '-'}; torch {env['torch']}; CPU {env['cpu_model']}.",
        "",
        markdown_table(HEADERS, table_rows, right_align=(True, True, False, True, True, True, True, True)),
        "",
        "Notes:",
        "",
        "- x sdpa speed = sdpa time / method time (above 1 is faster); "
        "x sdpa memory = method peak / sdpa peak (below 1 is smaller).",
        f"- peak MiB: increase over the baseline after the inputs exist, on a first untimed call in a "
        f"fresh process (probe: {', '.join(memory_probes) or '-'}).",
    ]
    methods = list(dict.fromkeys(row["method"] for row in rows))
    lines += [f"- {method}: {METHOD_NOTES[method]}" for method in methods if method in METHOD_NOTES]
    lines += footnotes
    return "\n".join(lines)


def plot_panels(rows: Sequence[dict]) -> Tuple[Panel, Panel]:
    """Time per token and peak memory against N, one line per method (measured points only)."""
    time_series: Dict[str, list] = {}
    memory_series: Dict[str, list] = {}
    for row in rows:
        if row.get("us_per_token") is not None:
            time_series.setdefault(row["method"], []).append((row["N"], row["us_per_token"]))
        if row.get("status") == "ok" and row.get("peak_mib") is not None:
            memory_series.setdefault(row["method"], []).append((row["N"], row["peak_mib"]))
    return (
        Panel("Forward + backward time per token", "microseconds per token (log)", time_series),
        Panel("Peak memory increase over the inputs", "MiB (log)", memory_series),
    )
