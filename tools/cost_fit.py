"""The cost model's fit (``tools.cost_model``): the saved H100 rows it describes (``saved_rows``), the
constants >= 0 by least squares on the relative error (``fit``), each row predicted by the constants
fitted without it (``leave_one_out``), and the whole calibration (``calibrate``).
"""

import itertools
import json
import math
import os
import re
from typing import List, NamedTuple, Sequence, Tuple

import numpy as np

from .causal_cost import F
from .cost_launches import decode_step, dtype_bytes, fla, flash, ours
from .cost_terms import CONSTANTS, H100_CHUNK, H100_RUN_DECODE_COUNTS, Cost, features

# ---- the saved H100 rows ----

class Row(NamedTuple):
    source: str  # file under --results
    method: str
    size: str
    dtype: str
    measured_us: float
    cost: Cost
    fitted: bool  # False: shown beside the model, not fitted (fla's swapped problem)


def saved_rows(results: str) -> List[Row]:
    """The H100 rows the model can describe, from ``selfcheck.json``, ``attention_fp16_partial.json``
    and ``decode.json`` under ``results``, each priced as the run's code (f36c261) did its work:
    the causal rows with the logcumsumexp normalisers at C = 16, the decoding steps with
    ``H100_RUN_DECODE_COUNTS``."""
    rows = []
    with open(os.path.join(results, "selfcheck.json")) as f:
        selfcheck = json.load(f)
    for timing in selfcheck["timings"]:
        B, H, N, d, n = (int(x) for x in re.findall(r"=(\d+)", timing["size"]))
        P, Z = dtype_bytes(timing["dtype"]), B * H
        # the self-check's logits are fp32 (q, k, v in the timed dtype); fla was given s in the timed dtype
        timed = ours(Z, N, d, n, H100_CHUNK, P, "selfcheck", logit_bytes=F, split_columns=False,
                     normaliser="logcumsumexp", grouped_scan=False)
        models = {"abc triton": (timed, True),
                  "sdpa causal": (flash(Z, N, d, P, "selfcheck"), True),
                  # fla read [B, H, N, *] as [B, T, H, *]: B * N sequence-heads of H tokens
                  "fla chunk_abc": (fla(B, H, N, d, n, P, "selfcheck", [Z * N * d * P] * 3 + [Z * N * n * P]), False)}
        for method, (cost, fitted) in models.items():
            if method in timing and math.isfinite(timing[method]):
                size = f"Z={Z} N={N} d={d}" + (" (as run: B*N seqs of H=4 tokens)" if not fitted else "")
                rows.append(Row("selfcheck.json", method, size, timing["dtype"], 1e3 * timing[method], cost, fitted))
    name = "attention_fp16_partial.json"
    with open(os.path.join(results, name)) as f:
        suite = json.load(f)
    config = suite["config"]
    H, d, n, P = config["heads"], config["head_dim"], config["memory"], dtype_bytes(config["dtype"])
    for result in suite["results"]:
        if result["status"] != "ok" or result["method"] not in ("abc", "sdpa"):
            continue
        Z, N = result["batch"] * H, result["N"]
        cost = (ours(Z, N, d, n, H100_CHUNK, P, "attention", split_columns=False, normaliser="logcumsumexp",
                     grouped_scan=False)
                if result["method"] == "abc" else flash(Z, N, d, P, "attention"))
        rows.append(Row(name, result["method"], f"Z={Z} N={N} d={d}", config["dtype"], 1e3 * result["ms_per_call"],
                        cost, True))
    with open(os.path.join(results, "decode.json")) as f:
        decode = json.load(f)
    config = decode["config"]
    for result in decode["results"]:
        if result["status"] != "ok" or result["method"] not in ("softmax", "abc"):
            continue
        cost = decode_step(result["method"], config, result, H100_RUN_DECODE_COUNTS[result["method"]])
        rows.append(Row("decode.json", f"decode {result['method']}", f"batch {result['batch']} N={result['N']}, a step",
                        config["dtype"], 1e3 * result["ms_per_step"], cost, True))
    return rows


# ---- the fit ----

def fit(X: np.ndarray, fixed: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Constants >= 0 minimising sum(((X c + fixed) / measured - 1)^2): non-negative least
    squares, exact, by trying every set of free constants (2^6 small solves)."""
    A = X / measured[:, None]
    b = 1.0 - fixed / measured
    best, best_loss = np.zeros(X.shape[1]), float(np.sum(b ** 2))
    for k in range(1, X.shape[1] + 1):
        for free in itertools.combinations(range(X.shape[1]), k):
            cols = list(free)
            sol, *_ = np.linalg.lstsq(A[:, cols], b, rcond=None)
            if np.any(sol < 0):
                continue
            c = np.zeros(X.shape[1])
            c[cols] = sol
            loss = float(np.sum((A @ c - b) ** 2))
            if loss < best_loss - 1e-15:
                best, best_loss = c, loss
    return best


def design(rows: Sequence[Row], steps: str = "both") -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, fixed, measured) of ``rows``: the fit's system."""
    pairs = [features(row.cost, steps) for row in rows]
    return (np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]),
            np.array([row.measured_us for row in rows]))


def leave_one_out(X: np.ndarray, fixed: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Each row's prediction by the constants fitted on all the other rows."""
    out = np.empty(len(measured))
    for i in range(len(measured)):
        keep = np.arange(len(measured)) != i
        out[i] = X[i] @ fit(X[keep], fixed[keep], measured[keep]) + fixed[i]
    return out


def calibrate(rows: Sequence[Row], steps: str = "both") -> dict:
    """The constants fitted on the ``fitted`` rows, each row predicted against measured, and the
    leave-one-out predictions."""
    fitted = [row for row in rows if row.fitted]
    X, fixed, measured = design(fitted, steps)
    constants = fit(X, fixed, measured)
    loo = leave_one_out(X, fixed, measured)
    table = []
    for i, row in enumerate(fitted):
        pred = float(X[i] @ constants + fixed[i])
        table.append(dict(source=row.source, method=row.method, size=row.size, dtype=row.dtype,
                          measured_us=row.measured_us, predicted_us=pred, error=pred / row.measured_us - 1,
                          loo_us=float(loo[i]), loo_error=float(loo[i] / row.measured_us - 1)))
    errors = np.abs([r["error"] for r in table])
    loo_errors = np.abs([r["loo_error"] for r in table])
    return dict(steps=steps, constants={name: float(value) for name, value in zip(CONSTANTS, constants)},
                fit=table, fit_error=dict(median=float(np.median(errors)), max=float(errors.max())),
                leave_one_out_error=dict(median=float(np.median(loo_errors)), max=float(loo_errors.max())))

