"""Markdown tables."""

from typing import List, Sequence


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
