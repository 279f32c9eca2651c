"""The cost model's terms (``tools.cost_model``): the H100's constants, the six fitted constants and
what each prices, and a timed call's ``Cost`` (its launches, flash attention's FLOPs) turned into the
fit's row (``features``), a prediction (``predict``) and each launch's share of it (``breakdown``).
"""

from typing import List, NamedTuple, Sequence, Tuple

import numpy as np

from .causal_cost import Launch

# H100 SXM (the saved run: 132 SMs, 1,980 MHz): dense tensor multiply-adds per second (half the
# FLOPs the data sheet quotes) by operand type, and the memory bandwidth.
H100 = dict(sms=132, clock_ghz=1.98, macs_half=989e12 / 2, macs_tf32=494e12 / 2, bandwidth=3.35e12)
MAC_EFFICIENCY = 0.5  # products run at half the dense peak (not fitted: too small to fit)
SM_BYTES_PER_US = 64 * H100["clock_ghz"] * 1e3  # one SM's share of the L2: 64 B / cycle
H100_CHUNK = 16  # the chunk the launcher took for every saved row (f36c261's compile table)
# A greedy decoding step of the saved run's code (f36c261) at its sizes: (PyTorch ops, Triton
# launches). ``decode_ops`` gave softmax 193 ops and ABC 161 ops + 6 step launches on an export of
# f36c261; there, as now, the cross-attention read of the cached memory ran on the kernels on CUDA:
# 6 PyTorch ops on CPU per decoder layer, one launch on the GPU (161 - 6 x 6 = 125 ops, 6 + 6 launches).
H100_RUN_DECODE_COUNTS = {"softmax": (193, 0), "abc": (125, 12)}
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

