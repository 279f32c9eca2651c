"""A cost model of causal attention on a GPU (ours on the Triton kernels, fla's ``chunk_abc``, flash
attention; forward + backward, and greedy decoding steps), calibrated by least squares on the
H100's saved timings.

    python -m tools.cost_model                      # -> docs/gpu_cost/model.{md,json}
    python -m tools.cost_model --out-dir DIR --results docs/benchmarks/h100 --overwrite

Every op on a method's path is counted, PyTorch glue and the timing harness's own ops included
(``tools.causal_cost`` for ours, ``fla_launches`` and ``flash_launches`` here, ``decode_ops`` for a
decoding step): its PyTorch ops and Triton launches, the dependent steps of a sequential loop (a
PyTorch scan over N is N steps: ``torch.logcumsumexp`` scans a middle dimension with one thread
per (sequence, slot); a kernel's loop over chunks is one step a chunk), the bytes it moves and
its products. A timed call then takes, linear in six constants,

    t = call + op * (PyTorch ops) + triton * (Triton launches) + step * (dependent steps)
        + us_per_MB * MB + us_per_flash_TFLOP * (flash attention's TFLOP) + fixed

where ``fixed`` is not fitted: tensor-core products at half the dense peak of their operand type
(a few percent of any saved row) and a kernel scan step's bytes at one SM's share of the L2 (64 B
a cycle). The terms add up: host time (ops, launches) and device time are not overlapped, so a
call whose device work hides under its host work (SDPA at small sizes) is over-predicted and
flash's fitted throughput absorbs the difference. The constants are fitted on the saved rows
(``selfcheck.json``: ours and SDPA; ``attention_fp16_partial.json``: ours and SDPA;
``decode.json``: softmax and ABC decoding steps) by least squares on the relative error with
every constant >= 0, and checked by leave-one-out (fit without row i, predict row i). fla's
saved rows timed another problem (its [B, T, H, *] inputs given as [B, H, T, *]: B * N sequences
of H = 4 tokens); they are not fitted, only set beside the model of that problem. The PyTorch
path's rows are not modelled (not the kernels' path).

Writes model.md and model.json (commit, command, constants, fit and leave-one-out tables, the
predictions at three sizes); existing files are kept unless ``--overwrite``.
"""

import argparse
import datetime
import itertools
import json
import math
import os
import re
import shlex
import sys
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from . import causal_cost
from .causal_cost import F, Launch

RESULTS = os.path.join("docs", "benchmarks", "h100")
OUT_DIR = os.path.join("docs", "gpu_cost")

# H100 SXM (the saved run: 132 SMs, 1,980 MHz): dense tensor multiply-adds per second (half the
# FLOPs the data sheet quotes) by operand type, and the memory bandwidth.
H100 = dict(sms=132, clock_ghz=1.98, macs_half=989e12 / 2, macs_tf32=494e12 / 2, bandwidth=3.35e12)
MAC_EFFICIENCY = 0.5  # products run at half the dense peak (not fitted: too small to fit)
SM_BYTES_PER_US = 64 * H100["clock_ghz"] * 1e3  # one SM's share of the L2: 64 B / cycle
H100_CHUNK = 16  # the chunk the launcher took for every saved row (f36c261's compile table)
FLA_BT, FLA_BC = 64, 16  # fla chunk_abc's chunk and sub-chunk (hard-coded there)

CONSTANTS = ("call_us", "op_us", "triton_us", "step_us", "us_per_MB", "us_per_flash_TFLOP")
UNITS = {"call_us": "us per timed call (host side and harness)",
         "op_us": "us per PyTorch op (its dispatch and kernel launch)",
         "triton_us": "us per Triton kernel launch (Triton's launcher on the host)",
         "step_us": "us per dependent step: of a PyTorch scan, and of a kernel's loop over chunks",
         "us_per_MB": "us per MB moved", "us_per_flash_TFLOP": "us per TFLOP of flash attention"}
# Which dependent steps ``step_us`` prices. "both" (the model): a step of a PyTorch scan and one of
# a kernel's chunk loop each wait for one global-memory round trip. The saved rows cannot tell
# the two apart (every one ran at C = 16: 2 N / 16 kernel steps beside N PyTorch steps, a fixed
# ratio), so the report also fits each extreme ("torch": only PyTorch scans wait, "kernel": only
# the kernels' loops) and shows how the predictions move.
STEP_SPLITS = ("both", "torch", "kernel")


class Cost(NamedTuple):
    """What one timed call does: its launches (kind "kernel": Triton launches; "torch", "torch
    scan": PyTorch ops), flash attention's FLOPs, the multiply-adds per second its products run
    at (their operand type's dense peak), and how many timed calls it is (a decoding step: 0)."""
    launches: List[Launch]
    flash_flops: float = 0.0
    mac_rate: float = H100["macs_tf32"]
    calls: float = 1.0


def features(cost: Cost, steps: str = "both") -> Tuple[np.ndarray, float]:
    """(the row's coefficients of ``CONSTANTS``, its fixed microseconds); ``steps``: which
    dependent steps ``step_us`` prices (``STEP_SPLITS``)."""
    torch_steps = sum(x.steps for x in cost.launches if x.kind == "torch scan")
    kernel_steps = sum(x.steps for x in cost.launches if x.kind == "kernel")
    counted = {"both": torch_steps + kernel_steps, "torch": torch_steps, "kernel": kernel_steps}[steps]
    ops = sum(x.launches for x in cost.launches if x.kind != "kernel")
    triton = sum(x.launches for x in cost.launches if x.kind == "kernel")
    row = np.array([cost.calls, ops, triton, counted,
                    sum(x.bytes for x in cost.launches) / 1e6, cost.flash_flops / 1e12])
    fixed = 1e6 * sum(x.macs for x in cost.launches) / (MAC_EFFICIENCY * cost.mac_rate)
    for x in cost.launches:  # a scan step waits for its program's bytes at one SM's share of the L2
        if x.kind == "kernel" and x.steps > 1 and x.programs:
            fixed += x.steps * x.bytes / (x.programs * x.steps) / SM_BYTES_PER_US
    return row, fixed


def predict(cost: Cost, constants: Sequence[float], steps: str = "both") -> float:
    """Microseconds of one call."""
    row, fixed = features(cost, steps)
    return float(row @ np.asarray(constants)) + fixed


def breakdown(cost: Cost, constants: Sequence[float], steps: str = "both") -> List[dict]:
    """Each launch's share of ``predict`` (the per-call constant apart)."""
    c = dict(zip(CONSTANTS, constants))
    priced = {"both": ("kernel", "torch scan"), "torch": ("torch scan",), "kernel": ("kernel",)}[steps]
    out = []
    for x in cost.launches:
        steps_priced = x.steps if x.kind in priced else 0
        step_us = c["step_us"]
        if x.kind == "kernel" and x.steps > 1 and x.programs:
            step_us += x.bytes / (x.programs * x.steps) / SM_BYTES_PER_US
        us = (c["triton_us" if x.kind == "kernel" else "op_us"] * x.launches + c["step_us"] * steps_priced
              + (step_us - c["step_us"]) * x.steps
              + c["us_per_MB"] * x.bytes / 1e6
              + 1e6 * x.macs / (MAC_EFFICIENCY * cost.mac_rate))
        out.append(dict(name=x.name, launches=x.launches, steps=x.steps, MB=x.bytes / 1e6, us=us))
    if cost.flash_flops:
        out.append(dict(name="flash FLOPs", launches=0, steps=0, MB=0.0,
                        us=c["us_per_flash_TFLOP"] * cost.flash_flops / 1e12))
    return out


# ---- the timing harnesses' own ops (they are inside every timed call) ----

def harness_launches(harness: str, out_elems: int, P: int, leaves: Sequence[int]) -> List[Launch]:
    """``selfcheck``: out.backward(ones_like(out)), gradients accumulated into the leaves (one add
    each; ``leaves``: bytes of each leaf); ``attention`` (``benchmarks attention``): loss =
    sum(out * weight), autograd.grad (the multiply, the sum, and the multiply's backward)."""
    if harness == "selfcheck":
        return [Launch("harness: ones_like", 1, 0, 0, 0, out_elems * P, "torch"),
                Launch("harness: grad accumulation", len(leaves), 0, 0, 0, 3 * sum(leaves), "torch")]
    if harness == "attention":
        return [Launch("harness: sum(out * weight) and its backward", 3, 0, 0, 0, 6 * out_elems * P, "torch")]
    raise ValueError(f"unknown harness {harness!r}")


def ours(Z: int, N: int, d: int, n: int, C: int, P: int, harness: str, logit_bytes: Optional[int] = None,
         split_columns: bool = True, normaliser: str = "chunked") -> Cost:
    """Causal ABC on the Triton kernels (``tools.causal_cost``) inside ``harness``; dv = d.
    ``normaliser``: "chunked" (the current default) or "logcumsumexp" (the previous PyTorch scan);
    the code the H100 run timed is ``normaliser="logcumsumexp", split_columns=False``."""
    L = P if logit_bytes is None else logit_bytes
    launches = causal_cost.causal_launches(Z, N, d, d, n, C, P, logit_bytes=L, split_columns=split_columns,
                                           normaliser=normaliser)
    leaves = [Z * N * d * P] * 3 + [Z * N * n * L]
    return Cost(launches + harness_launches(harness, Z * N * d, P, leaves))


def flash_launches(Z: int, N: int, d: int, P: int) -> Tuple[List[Launch], float]:
    """torch's flash attention 2, causal, forward + backward: (launches, FLOPs). FLOPs: 7 N d per
    token and head (forward 2 N d, backward 5 N d: causal halves of 4 and 10). Two PyTorch ops:
    the forward, and the backward (its dq accumulator fill, do . o, main kernel and dq conversion).
    Bytes: q, k, v, o, do, dq, dk, dv once each, the log-sum-exp and do . o rows, the fp32 dq
    accumulator written and read (k, v re-read per query block hit the L2: not counted)."""
    rows = Z * N
    launches = [Launch("flash forward", 1, 0, 0, 0, rows * (4 * d * P + F), "torch"),
                Launch("flash backward", 1, 0, 0, 0, rows * (8 * d * P + 3 * F + 2 * d * F), "torch")]
    return launches, 7.0 * N * d * rows


def flash(Z: int, N: int, d: int, P: int, harness: str) -> Cost:
    launches, flops = flash_launches(Z, N, d, P)
    return Cost(launches + harness_launches(harness, Z * N * d, P, [Z * N * d * P] * 3), flops)


def fla_launches(Z: int, T: int, K: int, V: int, M: int, P: int) -> List[Launch]:
    """fla-core 0.6.0 ``chunk_abc`` forward + backward called with its documented layout
    [B, T, H, *] (Z = B * H sequence-heads of T tokens, K = V = M <= 64 per tile), read from its
    ``ops/abc/chunk.py``: chunk BT = 64, sub-chunk 16, ``num_stages=1``. Six loops over the
    chunks (T / 64 dependent steps, one program per sequence-head and 64-wide tile): the
    key and value chunk states forward (``fwd_kernel_h``), their gradients (``bwd_kernel_dh``),
    ``rcum_inter`` and the slot normaliser's ``logcumsumexp_fwd_kernel`` (autotuned block: 64
    rows assumed). Chunk states are stored per chunk in the inputs' dtype; the slot scores,
    softmax and gradients as its code allocates them. Bytes: each tensor read or written once
    per launch that takes it; products: the chunk-level ones, at half-precision rates.
    The transposes to [B, H, T, *] cost a copy of q, k, v, s and of the output gradient."""
    BT, BC = FLA_BT, FLA_BC
    NT, NC = math.ceil(T / BT), BT // BC
    NK, NV, NM = (math.ceil(w / 64) for w in (K, V, M))
    rows, chunks = Z * T, Z * NT
    q = k = K * P
    v, s, do, dq, dk, dv = V * P, M * P, V * P, K * P, K * P, V * P
    z = p = dp = dsv = dsk = ds = M * F
    ok = qv = dok = doo = M * P
    A = BT * P  # the intra-chunk score rows Ak, Av and their gradients
    hk, hv = K * M * P, M * V * P  # a chunk state (and its gradient)

    def kernel(name, programs, macs_per_row, bytes_, steps=1):
        return Launch(name, 1, programs, steps, rows * macs_per_row, bytes_)

    def glue(name, launches, bytes_):
        return Launch(f"PyTorch: {name}", launches, 0, 0, 0, bytes_, "torch")

    return [
        glue("transposes to [B, H, T, *]", 4, 2 * rows * (q + k + v + s)),
        kernel("logcumsumexp_fwd_kernel", Z, 0, rows * (s + z), steps=math.ceil(T / 64)),
        kernel("fwd_kernel_h (keys)", Z * NK * NM, K * M, rows * (k + s + z) + chunks * hk, steps=NT),
        kernel("fwd_kernel_K", Z * NM * NT, K * M + BT * K, rows * (q + k + z + ok + A) + chunks * hk),
        kernel("fwd_kernel_intra_K", Z * NM * NT * NC, BT * M / 2, rows * (s + z + A + ok)),
        glue("ok0 + ok1", 1, rows * 3 * ok),
        kernel("softmax_fwd", rows, 0, rows * (ok + p)),
        glue("p.to(dtype)", 1, rows * (p + qv)),
        kernel("fwd_kernel_h (values)", Z * NV * NM, M * V, rows * (s + v + z) + chunks * hv, steps=NT),
        glue("Av zeros, Av.sum(0)", 2, rows * A * (2 * NM + 1)),
        kernel("fwd_kernel_intra_V", Z * NM * NT * NC * NC, BT * M / 2, rows * (qv + s + z + NM * A)),
        kernel("fwd_kernel_V", Z * NV * NT, M * V + BT * V, rows * (qv + v + z + A + v) + chunks * hv),
        glue("do contiguous, p.to(dtype)", 2, rows * (2 * do + p + qv)),
        kernel("bwd_kernel_dh (values)", Z * NM * NV, M * V, rows * (qv + z + do) + chunks * hv, steps=NT),
        glue("dAv, dsv0 zeros", 2, rows * (A + dsv)),
        kernel("bwd_kernel_V", Z * NM * NT, 2 * M * V + BT * V + BT * M,
               rows * (s + v + z + A + do + dp + dsv + NM * dv + A) + chunks * 2 * hv),
        glue("dv.sum(0)", 1, rows * dv * (NM + 1)),
        kernel("bwd_kernel_intra_V", Z * NM * NT * NC, BT * M, rows * (qv + s + z + A + dp + dsv)),
        glue("dp, dsv adds", 2, rows * 3 * (dp + dsv)),
        kernel("softmax_bwd", rows, 0, rows * (p + dp + dok)),
        kernel("bwd_kernel_dh (keys)", Z * NK * NM, K * M, rows * (q + z + dok) + chunks * hk, steps=NT),
        glue("dAk zeros, dAk.sum(0), Ak zeros", 3, rows * A * (2 * NM + 1 + NK)),
        kernel("bwd_kernel_intra_K", Z * NM * NT * NC * NC, BT * M / 2, rows * (s + z + dok + NM * A)),
        kernel("bwd_kernel_K", Z * NK * NT, 2 * K * M + 2 * BT * K + BT * M,
               rows * (q + k + s + z + A + dok + dq + dk + NK * (dsk + A)) + chunks * 2 * hk),
        glue("Ak.sum(0), dsk1.sum(0)", 2, rows * (A + dsk) * (NK + 1)),
        kernel("bwd_kernel_intra_KV", Z * NM * NT * NC, BT * M / 2, rows * (s + z + A + dok + dsk)),
        glue("ds sums, ok * dok + p * dp", 5, rows * (3 * dsk + 3 * dsv + 3 * ok + 6 * p)),
        kernel("bwd_kernel_rcum_inter", Z * NM, 0, rows * (s + z + p + doo), steps=NT),
        kernel("bwd_kernel_rcum_intra", Z * NM * NT * NC, BT * M / 2, rows * (s + z + p + doo)),
        glue("ds -= doo, ds.to(dtype)", 2, rows * (3 * ds + doo + ds + s)),
    ]


def fla(B: int, T: int, H: int, d: int, n: int, P: int, harness: str, leaf_bytes: Optional[List[int]] = None) -> Cost:
    """fla's chunk_abc on [B, T, H, *] inputs inside ``harness`` (half-precision products)."""
    Z = B * H
    leaves = leaf_bytes if leaf_bytes is not None else [Z * T * d * P] * 3 + [Z * T * n * P]
    return Cost(fla_launches(Z, T, d, d, n, P) + harness_launches(harness, Z * T * d, P, leaves),
                mac_rate=H100["macs_half"])


# ---- greedy decoding (``benchmarks decode``): a step is one PyTorch op after another ----

def decode_ops(method: str, config: dict) -> Tuple[int, int]:
    """(PyTorch ops, Triton launches) of one greedy decoding step of ``benchmarks decode``'s model
    with the saved ``config``'s layers, heads and memories, counted on CPU in fp16 at toy widths
    (the count does not depend on them), at a steady step (the fourth). An aten op counts when it
    writes a new or in-place tensor or reads a value back to the host; ABC's ``causal_abc_step``,
    one fused Triton launch on CUDA, counts as one launch in place of its PyTorch ops."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    from abc_fairseq.ops.causal import op as causal_op
    from benchmarks.decode import build_translation_model, sizes_of

    class Counter(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops, self.triton, self.paused = 0, 0, False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            name = func.overloadpacket.__name__
            if self.paused or name.startswith(("empty", "new_empty", "_shape_as_tensor", "lift_fresh")):
                return out
            inputs = {x.untyped_storage().data_ptr() for x in tree_leaves((args, kwargs))
                      if isinstance(x, torch.Tensor)}
            new = any(x.untyped_storage().data_ptr() not in inputs for x in tree_leaves(out)
                      if isinstance(x, torch.Tensor))
            if new or name.endswith("_") or name in ("_local_scalar_dense", "item", "is_nonzero"):
                self.ops += 1
            return out

    counter = Counter()
    recurrent = causal_op.recurrent_causal_abc_step

    def fused_step(*args, **kwargs):  # on CUDA: causal.triton.recurrent.causal_step, one launch
        counter.paused, counter.triton = True, counter.triton + 1
        try:
            return recurrent(*args, **kwargs)
        finally:
            counter.paused = False

    params = dict(vocab=64, encoder_layers=1, decoder_layers=config["decoder_layers"], embed_dim=8 * config["heads"],
                  heads=config["heads"], ffn_dim=16 * config["heads"], method=method, length=16, batch=2,
                  sizes=sizes_of(config))
    torch.manual_seed(0)
    model, dictionary = build_translation_model(params)
    model = model.to(torch.float16)
    src = torch.randint(dictionary.nspecial, len(dictionary), (2, 16))
    src[:, -1] = dictionary.eos()
    causal_op.recurrent_causal_abc_step = fused_step
    try:
        with torch.inference_mode():
            encoder_out = model.encoder(src, src_lengths=torch.full((2,), 16, dtype=torch.long))
            tokens, state = torch.full((2, 6), dictionary.eos(), dtype=torch.long), {}
            for t in range(4):
                counter.ops = counter.triton = 0
                with counter:
                    logits, _ = model.decoder(tokens[:, : t + 1], encoder_out=encoder_out, incremental_state=state)
                    scores = logits[:, -1]
                    scores[:, dictionary.pad()] = float("-inf")
                    tokens[:, t + 1] = scores.argmax(dim=-1)
    finally:
        causal_op.recurrent_causal_abc_step = recurrent
    return counter.ops, counter.triton


def decode_step(method: str, config: dict, result: dict, ops: Tuple[int, int]) -> Cost:
    """One decoding step (no per-call constant): ``ops`` = (PyTorch ops, Triton launches) and the
    bytes it reads: the decoder's weights (each layer 8 E^2 + 2 E F, the output projection V E) and
    the state (``result["state_bytes"]`` after the last step: softmax reads the cross-attention
    cache and, on average, half its final self-attention cache; ABC reads its state and writes
    a new self-attention state)."""
    E, FF, P = config["embed_dim"], config["ffn_dim"], _bytes(config["dtype"])
    weights = P * (config["decoder_layers"] * (8 * E * E + 2 * E * FF) + config["vocab"] * E)
    state = result["state_bytes"]
    state_read = state["cross"] + (state["self"] / 2 if method == "softmax" else 2 * state["self"])
    return Cost([Launch("decode: PyTorch ops", ops[0], 0, 0, 0, weights + state_read, "torch"),
                 Launch("decode: Triton launches", ops[1], 0, 0, 0, 0)], calls=0.0)


# ---- the saved H100 rows ----

class Row(NamedTuple):
    source: str  # file under --results
    method: str
    size: str
    dtype: str
    measured_us: float
    cost: Cost
    fitted: bool  # False: shown beside the model, not fitted (fla's swapped problem)


def _bytes(dtype: str) -> int:
    return {"float16": 2, "bfloat16": 2, "float32": 4}[dtype]


def saved_rows(results: str, decode_counts: Optional[Dict[str, Tuple[int, int]]] = None) -> List[Row]:
    """The H100 rows the model can describe, from ``selfcheck.json``, ``attention_fp16_partial.json``
    and ``decode.json`` under ``results``; ``decode_counts``: method -> ``decode_ops`` (counted
    when None)."""
    rows = []
    decode_counts = {} if decode_counts is None else decode_counts
    with open(os.path.join(results, "selfcheck.json")) as f:
        selfcheck = json.load(f)
    for timing in selfcheck["timings"]:
        B, H, N, d, n = (int(x) for x in re.findall(r"=(\d+)", timing["size"]))
        P, Z = _bytes(timing["dtype"]), B * H
        # the self-check's logits are fp32 (q, k, v in the timed dtype); fla was given s in the timed dtype
        timed = ours(Z, N, d, n, H100_CHUNK, P, "selfcheck", logit_bytes=F, split_columns=False,
                     normaliser="logcumsumexp")
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
    H, d, n, P = config["heads"], config["head_dim"], config["memory"], _bytes(config["dtype"])
    for result in suite["results"]:
        if result["status"] != "ok" or result["method"] not in ("abc", "sdpa"):
            continue
        Z, N = result["batch"] * H, result["N"]
        cost = (ours(Z, N, d, n, H100_CHUNK, P, "attention", split_columns=False, normaliser="logcumsumexp")
                if result["method"] == "abc" else flash(Z, N, d, P, "attention"))
        rows.append(Row(name, result["method"], f"Z={Z} N={N} d={d}", config["dtype"], 1e3 * result["ms_per_call"],
                        cost, True))
    with open(os.path.join(results, "decode.json")) as f:
        decode = json.load(f)
    config = decode["config"]
    for result in decode["results"]:
        if result["status"] != "ok" or result["method"] not in ("softmax", "abc"):
            continue
        if result["method"] not in decode_counts:
            decode_counts[result["method"]] = decode_ops(result["method"], config)
        cost = decode_step(result["method"], config, result, decode_counts[result["method"]])
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


# ---- predictions ----

SIZES = ((8192, 4), (2048, 32), (512, 512))  # (N, sequence-heads Z)
CHUNKS = (16, 32, 64)


def predictions(constants: Sequence[float], steps: str = "both", d: int = 64, n: int = 64, P: int = 2) -> List[dict]:
    """Ours (the current kernels, normalisers chunk by chunk, at each chunk the launcher may take:
    it measures and keeps the fastest; and with the previous PyTorch logcumsumexp), the H100 run's
    code at C = 16, fla called correctly and flash attention, each inside the attention suite's
    harness, d = n = 64, fp16."""
    out = []
    for N, Z in SIZES:
        row = dict(N=N, Z=Z, tokens=N * Z)
        for C in CHUNKS:
            row[f"ours_C{C}_us"] = predict(ours(Z, N, d, n, C, P, "attention"), constants, steps)
        row["ours_us"] = min(row[f"ours_C{C}_us"] for C in CHUNKS)
        previous = {C: ours(Z, N, d, n, C, P, "attention", normaliser="logcumsumexp") for C in CHUNKS}
        previous_C = min(CHUNKS, key=lambda C: predict(previous[C], constants, steps))
        row["ours_logcumsumexp_us"] = predict(previous[previous_C], constants, steps)
        row["ours_logcumsumexp_C"] = previous_C
        row["ours_h100_code_us"] = predict(ours(Z, N, d, n, H100_CHUNK, P, "attention", split_columns=False,
                                                normaliser="logcumsumexp"),
                                           constants, steps)
        logcum = next(x for x in breakdown(previous[previous_C], constants, steps)
                      if x["name"] == "PyTorch: logcumsumexp")
        row["ours_logcumsumexp_scan_us"] = logcum["us"]
        row["fla_us"] = predict(fla(1, N, Z, d, n, P, "attention"), constants, steps)
        row["flash_us"] = predict(flash(Z, N, d, P, "attention"), constants, steps)
        best = min(CHUNKS, key=lambda C: row[f"ours_C{C}_us"])
        for name, cost in (("ours", ours(Z, N, d, n, best, P, "attention")),
                           ("fla", fla(1, N, Z, d, n, P, "attention")), ("flash", flash(Z, N, d, P, "attention"))):
            counts = features(cost)[0]
            row[f"{name}_counts"] = dict(pytorch_ops=int(counts[1]), triton_launches=int(counts[2]),
                                         dependent_steps=int(counts[3]), MB=float(counts[4]))
        out.append(row)
    return out


# ---- the report ----

def _pct(x: float) -> str:
    return f"{100 * x:+.0f}%"


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


def report(results: str, command: str) -> Tuple[dict, str]:
    """(model.json's record, model.md's text) from the saved rows under ``results``."""
    decode_counts: Dict[str, Tuple[int, int]] = {}
    rows = saved_rows(results, decode_counts)
    main_fit = calibrate(rows)
    constants = [main_fit["constants"][name] for name in CONSTANTS]
    side = [dict(source=row.source, method=row.method, size=row.size, dtype=row.dtype, measured_us=row.measured_us,
                 predicted_us=predict(row.cost, constants)) for row in rows if not row.fitted]
    extremes = {}
    for steps in STEP_SPLITS[1:]:
        other = calibrate(rows, steps)
        other_constants = [other["constants"][name] for name in CONSTANTS]
        extremes[steps] = dict(constants=other["constants"], fit_error=other["fit_error"],
                               leave_one_out_error=other["leave_one_out_error"],
                               predictions=predictions(other_constants, steps))
    from benchmarks.environment import git_commit

    record = dict(
        command=command, commit=git_commit(),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        results=results,
        device=dict(H100, mac_efficiency=MAC_EFFICIENCY, sm_bytes_per_us=SM_BYTES_PER_US,
                    chunk_of_saved_rows=H100_CHUNK),
        **main_fit, not_fitted=side, predictions=predictions(constants),
        breakdown_h100_8192=breakdown(ours(4, 8192, 64, 64, H100_CHUNK, 2, "selfcheck", F, False, "logcumsumexp"),
                                      constants),
        step_extremes=extremes,
        decode_ops_per_step={method: dict(pytorch_ops=ops, triton_launches=triton)
                             for method, (ops, triton) in decode_counts.items()})
    return record, markdown(record)


def markdown(record: dict) -> str:
    c = record["constants"]
    bandwidth = 1 / c["us_per_MB"] if c["us_per_MB"] else float("inf")  # MB / us = TB / s
    flash_rate = 1e6 / c["us_per_flash_TFLOP"] if c["us_per_flash_TFLOP"] else float("inf")
    lines = [
        "# Causal attention on the H100 (forward + backward, decoding steps): the calibrated cost model", "",
        f"`{record['command']}` at commit `{record['commit']}`, {record['date']}; saved timings: "
        f"`{record['results']}` (one H100 80GB HBM3, Triton 3.6, commit f36c261; every causal row at C = "
        f"{record['device']['chunk_of_saved_rows']}). The model and its assumptions: `tools/cost_model.py`.", "",
        "## Constants (least squares on the relative error, all >= 0)", "",
        "| constant | value | meaning |", "|---|---:|---|"]
    for name in CONSTANTS:
        lines.append(f"| `{name}` | {c[name]:.4g} | {UNITS[name]} |")
    lines += ["", f"Achieved bandwidth {bandwidth:.2f} TB/s (peak 3.35); flash attention {flash_rate:.0f} TFLOP/s "
              f"(dense fp16 peak 989). Not fitted: products at {MAC_EFFICIENCY:.0%} of the dense peak of their "
              f"operand type, a kernel scan step's bytes at {SM_BYTES_PER_US / 1e3:.0f} GB/s (one SM).", "",
              "## Every saved row used: predicted against measured", "",
              f"Fit: median |error| {record['fit_error']['median']:.0%}, max {record['fit_error']['max']:.0%}. "
              f"Leave-one-out (fit without the row, predict it): median {record['leave_one_out_error']['median']:.0%}, "
              f"max {record['leave_one_out_error']['max']:.0%}.", "",
              "| file | method | size | dtype | measured ms | model ms | error | leave-one-out ms | error |",
              "|---|---|---|---|---:|---:|---:|---:|---:|"]
    for r in record["fit"]:
        lines.append(f"| {r['source']} | {r['method']} | {r['size']} | {r['dtype']} | {r['measured_us'] / 1e3:.2f} | "
                     f"{r['predicted_us'] / 1e3:.2f} | {_pct(r['error'])} | {r['loo_us'] / 1e3:.2f} | "
                     f"{_pct(r['loo_error'])} |")
    lines += ["", "Not fitted: fla's saved rows timed another problem (inputs [B, H, N, *] read as [B, T, H, *]); "
              "the model of that problem, for comparison only:", "",
              "| file | size | dtype | measured ms | model ms |", "|---|---|---|---:|---:|"]
    for r in record["not_fitted"]:
        lines.append(f"| {r['source']} | {r['size']} | {r['dtype']} | {r['measured_us'] / 1e3:.2f} | "
                     f"{r['predicted_us'] / 1e3:.2f} |")
    lines += ["", "## Where the H100 run's 6.10 ms went (N = 8,192, 4 sequence-heads, d = n = 64, fp16, C = 16)", "",
              "| op | launches | dependent steps | MB | model us |", "|---|---:|---:|---:|---:|"]
    for b in record["breakdown_h100_8192"]:
        lines.append(f"| {b['name']} | {b['launches']} | {b['steps']:,} | {b['MB']:,.0f} | {b['us']:,.0f} |")
    lines.append(f"| per call | | | | {c['call_us']:,.0f} |")
    if record["decode_ops_per_step"]:
        counts = ", ".join(f"{method} {c['pytorch_ops']} PyTorch ops + {c['triton_launches']} Triton launches"
                           for method, c in record["decode_ops_per_step"].items())
        lines += ["", "## Decoding at batch 16 (`decode.json`: greedy, WMT-base sizes, fp16)", "",
                  f"A step, counted on CPU by `decode_ops` (the current code): {counts}. The rows above hold each "
                  "step predicted against measured; as speed against softmax:", "",
                  "| N | ABC / softmax, measured | ABC / softmax, model |", "|---:|---:|---:|"]
        steps = {(r["method"], r["size"]): r for r in record["fit"] if r["source"] == "decode.json"}
        for (method, size), r in steps.items():
            if method == "decode abc":
                soft = steps[("decode softmax", size)]
                lines.append(f"| {size.split('N=')[1].split(',')[0]} | {soft['measured_us'] / r['measured_us']:.2f}x | "
                             f"{soft['predicted_us'] / r['predicted_us']:.2f}x |")
    lines += ["", "## Predictions (d = n = 64, fp16, forward + backward, the attention suite's harness)", "",
              prediction_table(record["predictions"]), "", "What each does per call (ours at its best chunk):", "",
              "| N | sequence-heads | method | PyTorch ops | Triton launches | dependent steps | MB |",
              "|---:|---:|---|---:|---:|---:|---:|"]
    for p in record["predictions"]:
        for name in ("ours", "fla", "flash"):
            k = p[f"{name}_counts"]
            lines.append(f"| {p['N']:,} | {p['Z']} | {name} | {k['pytorch_ops']} | {k['triton_launches']} | "
                         f"{k['dependent_steps']:,} | {k['MB']:,.0f} |")
    lines += ["",
              "The saved rows cannot tell a PyTorch scan step from a kernel's chunk step (every row ran at C = 16: "
              "2 N / 16 kernel steps beside N PyTorch steps). The model prices both alike; fitted with only one "
              "kind waiting, the fit and the predictions become:", ""]
    for steps, other in record["step_extremes"].items():
        who = "only PyTorch scan steps wait" if steps == "torch" else "only the kernels' chunk steps wait"
        lines += [f"**{who}**: `step_us` = {other['constants']['step_us']:.3g}, fit median |error| "
                  f"{other['fit_error']['median']:.0%} (max {other['fit_error']['max']:.0%}), leave-one-out median "
                  f"{other['leave_one_out_error']['median']:.0%} (max {other['leave_one_out_error']['max']:.0%}).", "",
                  prediction_table(other["predictions"]), ""]
    return "\n".join(lines)


def prediction_table(preds: List[dict]) -> str:
    lines = ["| N | sequence-heads | ours (best C) | C = 16 / 32 / 64 | ours, previous logcumsumexp (best C) | "
             "of which the logcumsumexp | H100 run's code (C = 16) | fla chunk_abc | flash attention |",
             "|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for p in preds:
        chunks = " / ".join(f"{p[f'ours_C{C}_us'] / 1e3:.2f}" for C in CHUNKS)
        lines.append(f"| {p['N']:,} | {p['Z']} | {p['ours_us'] / 1e3:.2f} ms | {chunks} | "
                     f"{p['ours_logcumsumexp_us'] / 1e3:.2f} (C = {p['ours_logcumsumexp_C']}) | "
                     f"{p['ours_logcumsumexp_scan_us'] / 1e3:.2f} | {p['ours_h100_code_us'] / 1e3:.2f} | "
                     f"{p['fla_us'] / 1e3:.2f} | {p['flash_us'] / 1e3:.2f} |")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.cost_model", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=RESULTS,
                        help="folder of the saved H100 timings (selfcheck.json, attention_fp16_partial.json, "
                             "decode.json; default: %(default)s)")
    parser.add_argument("--out-dir", default=OUT_DIR, help="folder for model.{md,json} (default: %(default)s)")
    parser.add_argument("--overwrite", action="store_true", help="replace model.{md,json} already in --out-dir")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    for name in ("selfcheck.json", "attention_fp16_partial.json", "decode.json"):
        if not os.path.isfile(os.path.join(args.results, name)):
            parser.error(f"--results {args.results} has no {name}")
    paths = [os.path.join(args.out_dir, f"model.{ext}") for ext in ("json", "md")]
    if not args.overwrite and any(os.path.exists(p) for p in paths):
        parser.error(f"--out-dir {args.out_dir} already holds model.json / model.md: pass --overwrite or name "
                     "another folder")
    command = shlex.join(["python", "-m", "tools.cost_model", *(sys.argv[1:] if argv is None else argv)])
    record, text = report(args.results, command)
    os.makedirs(args.out_dir, exist_ok=True)
    with open(paths[0], "w") as f:
        json.dump(record, f, indent=1)
    with open(paths[1], "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {paths[0]} and {paths[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
