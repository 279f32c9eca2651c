"""The performance targets of causal ABC, checked against one ``attention`` run (informational).

CPU (issue 2): against torch's SDPA in fp32 at 32k tokens per call. GPU (issue 13, one H100 or
H200, bf16, 32k tokens per call, 8 heads, d = n = 64): time per token flat from N = 512 to
16,384; at least 5x ``abc-torch``; at least as fast as ``fla-abc``; faster than flash SDPA from
N = 8,192 on. Each check gives PASS, FAIL, or SKIP when the lengths or methods it needs were not
measured (or the reference failed); ABC failing at a needed length counts as FAIL.
"""

from typing import Dict, List, Tuple

from .report import compare, measured

Rows = Dict[Tuple[str, int], dict]  # (method, N) -> result row


def _speed(rows: Rows, n: int, minimum: float, name: str, reference: str = "sdpa") -> dict:
    return compare(name, rows.get(("abc", n)), rows.get((reference, n)), "median_s", minimum, True,
                   (f"abc at N={n}", reference))


def _memory(rows: Rows, n: int, maximum: float, name: str) -> dict:
    return compare(name, rows.get(("abc", n)), rows.get(("sdpa", n)), "peak_mib", maximum, False,
                   (f"abc at N={n} (MiB)", "sdpa"))


def _flat(rows: Rows, low: int, high: int, max_ratio: float, name: str) -> dict:
    for n in (low, high):
        if ("abc", n) not in rows:
            return {"name": name, "status": "SKIP", "detail": f"abc at N={n} not measured"}
    lengths = sorted(n for (method, n) in rows if method == "abc" and low <= n <= high)
    bad = [n for n in lengths if not measured(rows[("abc", n)], "us_per_token")]
    if bad:
        return {"name": name, "status": "FAIL", "detail": f"abc has no time at N={bad}"}
    per_token = {n: rows[("abc", n)]["us_per_token"] for n in lengths}
    value = max(per_token.values()) / min(per_token.values())
    spread = ", ".join(f"{n}: {t:.3f}" for n, t in per_token.items())
    return {"name": name, "status": "PASS" if value <= max_ratio else "FAIL", "value": value,
            "detail": f"max/min us/token = {value:.2f} (need <= {max_ratio:g}); {spread}"}


def _every_length(rows: Rows, reference: str, minimum: float, name: str, start: int = 0) -> dict:
    """abc against ``reference`` at every N >= ``start`` where the reference was measured; the
    worst ratio decides. SKIP when the reference has no result at any such N."""
    lengths = sorted(n for (method, n) in rows if method == reference and n >= start)
    checks = [_speed(rows, n, minimum, name, reference) for n in lengths]
    checks = [check for check in checks if check["status"] != "SKIP"]
    if not checks:
        return {"name": name, "status": "SKIP", "detail": f"{reference} has no result at N >= {start or 1}"}
    failed = [check for check in checks if check["status"] == "FAIL"]
    worst = failed[0] if failed else min(checks, key=lambda check: check["value"])
    return {**worst, "name": name, "detail": f"worst of {len(checks)} lengths: {worst['detail']}"}


def check_targets(rows: Rows) -> List[dict]:
    """Issue 2's CPU targets, in a fixed order; each a dict with name, status, detail (and value)."""
    return [
        _speed(rows, 4096, 3.0, "abc >= 3x faster than sdpa at N=4096"),
        _speed(rows, 8192, 6.0, "abc >= 6x faster than sdpa at N=8192"),
        _speed(rows, 512, 1 / 1.5, "abc at most 1.5x slower than sdpa at N=512"),
        _flat(rows, 512, 8192, 1.3, "abc time per token flat within 1.3x from N=512 to N=8192"),
        _memory(rows, 4096, 2.0, "abc peak memory at N=4096 <= 2x sdpa's"),
    ]


def check_gpu_targets(rows: Rows) -> List[dict]:
    """Issue 13's GPU targets (bf16), in a fixed order."""
    return [
        _flat(rows, 512, 16384, 1.3, "abc time per token flat within 1.3x from N=512 to N=16384"),
        _every_length(rows, "abc-torch", 5.0, "abc >= 5x faster than abc-torch at every N"),
        _every_length(rows, "fla-abc", 1.0, "abc at least as fast as fla-abc wherever both run"),
        _every_length(rows, "sdpa", 1.0 + 1e-9, "abc faster than flash sdpa from N=8192 on", start=8192),
    ]
