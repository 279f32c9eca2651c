"""The performance targets ABC aims at, checked against one ``attention`` run (informational).

Each check gives PASS, FAIL, or SKIP when the lengths or methods it needs were not measured
(or the sdpa reference failed). ABC failing (error, timeout, out of memory) at a needed length
counts as FAIL.
"""

from typing import Dict, List, Optional, Tuple

Rows = Dict[Tuple[str, int], dict]  # (method, N) -> result row


def _needs(rows: Rows, lengths, methods) -> Optional[str]:
    """None if every (method, N) was measured; else why the target is skipped."""
    for n in lengths:
        for method in methods:
            if (method, n) not in rows:
                return f"{method} at N={n} not measured"
    return None


def _ok(row: dict) -> bool:
    return row.get("status") == "ok"


def _failure(rows: Rows, n: int, metric: str = "us_per_token") -> Optional[dict]:
    """A SKIP (sdpa failed) or FAIL (abc failed) verdict at N=n, else None."""
    sdpa, abc = rows[("sdpa", n)], rows[("abc", n)]
    if not _ok(sdpa) or sdpa.get(metric) is None:
        return {"status": "SKIP", "detail": f"sdpa at N={n} has no result ({sdpa.get('status')})"}
    if not _ok(abc) or abc.get(metric) is None:
        return {"status": "FAIL", "detail": f"abc at N={n}: {abc.get('status')}"}
    return None


def _speedup(rows: Rows, n: int, minimum: float, name: str) -> dict:
    skipped = _needs(rows, [n], ["abc", "sdpa"])
    if skipped:
        return {"name": name, "status": "SKIP", "detail": skipped}
    failed = _failure(rows, n)
    if failed:
        return {"name": name, **failed}
    speedup = rows[("sdpa", n)]["median_s"] / rows[("abc", n)]["median_s"]
    return {"name": name, "status": "PASS" if speedup >= minimum else "FAIL", "value": speedup,
            "detail": f"abc is {speedup:.2f}x sdpa's speed at N={n} (need >= {minimum:.3g}x)"}


def _flat(rows: Rows, low: int, high: int, max_ratio: float, name: str) -> dict:
    skipped = _needs(rows, [low, high], ["abc"])
    if skipped:
        return {"name": name, "status": "SKIP", "detail": skipped}
    measured = sorted(n for (method, n) in rows if method == "abc" and low <= n <= high)
    bad = [n for n in measured if not _ok(rows[("abc", n)])]
    if bad:
        return {"name": name, "status": "FAIL", "detail": f"abc has no time at N={bad}"}
    per_token = {n: rows[("abc", n)]["us_per_token"] for n in measured}
    ratio = max(per_token.values()) / min(per_token.values())
    spread = ", ".join(f"{n}: {t:.3f}" for n, t in per_token.items())
    return {"name": name, "status": "PASS" if ratio <= max_ratio else "FAIL", "value": ratio,
            "detail": f"max/min us/token = {ratio:.2f} (need <= {max_ratio:g}); {spread}"}


def _memory(rows: Rows, n: int, max_ratio: float, name: str) -> dict:
    skipped = _needs(rows, [n], ["abc", "sdpa"])
    if skipped:
        return {"name": name, "status": "SKIP", "detail": skipped}
    failed = _failure(rows, n, metric="peak_mib")
    if failed:
        return {"name": name, **failed}
    abc, sdpa = rows[("abc", n)]["peak_mib"], rows[("sdpa", n)]["peak_mib"]
    if sdpa <= 0:
        return {"name": name, "status": "SKIP", "detail": f"sdpa peak at N={n} measured as 0 MiB"}
    ratio = abc / sdpa
    return {"name": name, "status": "PASS" if ratio <= max_ratio else "FAIL", "value": ratio,
            "detail": f"abc {abc:.1f} MiB vs sdpa {sdpa:.1f} MiB = {ratio:.2f}x (need <= {max_ratio:g}x)"}


def check_targets(rows: Rows) -> List[dict]:
    """All targets, in a fixed order; each a dict with name, status, detail (and value)."""
    return [
        _speedup(rows, 4096, 3.0, "abc >= 3x faster than sdpa at N=4096"),
        _speedup(rows, 8192, 6.0, "abc >= 6x faster than sdpa at N=8192"),
        _speedup(rows, 512, 1 / 1.5, "abc at most 1.5x slower than sdpa at N=512"),
        _flat(rows, 512, 8192, 1.3, "abc time per token flat within 1.3x from N=512 to N=8192"),
        _memory(rows, 4096, 2.0, "abc peak memory at N=4096 <= 2x sdpa's"),
    ]


def format_targets(targets: List[dict]) -> str:
    """The printed ``targets`` section."""
    lines = ["## Targets (informational)", ""]
    for target in targets:
        lines.append(f"- {target['status']}: {target['name']} -- {target['detail']}")
    return "\n".join(lines)
