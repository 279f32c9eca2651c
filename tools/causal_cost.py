"""The cost model of causal ABC on the Triton kernels: per launch of one forward + backward, the
programs it starts, the sequential steps of each program, its multiply-adds and the bytes it moves.

Counted from the equations each launch computes (the kernels' docstrings in
``abc_fairseq/ops/causal/triton``), with every tensor read or written once; the compiled code may
reload a tile, so bytes are a lower bound. Per sequence and head (Z = B * H of them), with chunk C,
nc = ceil(N / C) chunks, head dims d (keys) and dv (values), n slots, P bytes per input element and
F = 4 (fp32: normalisers, chunk memories, the backward's row terms):

    launch         programs          steps  multiply-adds per chunk            bytes per chunk
    chunk sums     Z nc              1      C n (d + dv)                       C (d + dv + n) P + n (d + dv + 1) F
    scan           Z [n(d+dv)/128]   nc/8   0                                  n (2 (d + dv) + 4) F
                                                                               (+ the last memory, n (d + dv) F)
    output         Z nc              1      C^2 (d + dv + 2n) + C n (d + dv)   C (2d + 2dv + n) P + n (d + dv + 1) F
    rows           Z nc              1      C^2 (2d + dv + 3n) + C n (3d + 2dv) C (3d + 2dv + n) P + 3C n F
                                                                               + n (2d + 2dv + 2) F
    reverse scan   Z [n(d+dv+1)/128] nc/8   0                                  n (2 (d + dv + 1) + 1) F
    columns (x 2)  2 Z nc            1      C^2 (2d + 2dv + 5n) + 2C n (d + dv) C (3d + 3dv + n) P + 5C n F
                                                                               + n (d + dv + 3) F
    dl sum         (PyTorch, 1 add)  -      0                                  C n (2F + P)

That is the kernels' way: the prefix normalisers found chunk by chunk inside the kernels (chunk
totals from the chunk sums, e_c from the forward scan, each row's g rebuilt from its chunk's
logits). The terms were set against the interpreter's counts (``tools.kernel_counts``, whose
report sets each kernel's distinct bytes and its dot products beside these; the bytes agree within
2%, the multiply-adds exactly). The previous way, which the H100 run timed (``normaliser=
"logcumsumexp"``; removed from the op since the H200 measured it slower at every size), had PyTorch
ops before the kernels and a read of g (C n F) in the output, rows and columns kernels:

    logcumsumexp   Z n threads       N      0                                  2 C n F
    normalisers    (PyTorch, 10-11)  -      0                                  C n (2F [+ P + F]) + 9 n F + small

(bracketed: half logits, cast to fp32). ``torch.logcumsumexp(logits, dim=1)`` scans the middle
dimension of [Z, N, n]: on CUDA one thread per (sequence, slot) walks the N rows, N dependent
load / logaddexp / store steps each, the largest sequential cost on that path at long N. The
normalisers' other ops (logaddexp with the carried normaliser, the chunk-boundary index_select /
cat / sub / exp: 9 n F a chunk, a fill) are elementwise.

At d = dv = n = C = 64 the forward is 2Cd + 2Cn + 4nd multiply-adds per row (32,768), causal
softmax about N d / 2 (flash attention skips the masked half): ABC does less arithmetic from
N = 1,024. ``estimate`` turns a row into microseconds at a device's peak tensor throughput and
memory bandwidth and a latency per sequential step (the largest of the three, plus a launch each),
and ``table`` writes the model for one size; ``tools.kernel_profile`` sets it beside the measured
kernel times.
"""

import math
from typing import Dict, List, NamedTuple, Optional

F = 4  # fp32 bytes
# Elements of a chunk memory per scan program and chunks it loads and combines at once, 4 for ABC's
# forward scan, which also writes the normalisers (a copy of ops/triton/sizes.py's, which imports
# torch); before 5bdd324 (the H100 run's code) 256 and one chunk a step.
SCAN_BLOCK, SCAN_GROUP, NORMALISING_SCAN_GROUP = 128, 8, 4
SEQUENTIAL_SCAN = (256, 1)
LAUNCH_US = 4.0  # a kernel launch and its tail on a busy stream, roughly
STEP_US = 0.5  # one dependent step of a sequential loop: a global-memory round trip, roughly

# Dense half-precision tensor throughput (multiply-adds per second: half the FLOPs quoted) and
# memory bandwidth (bytes per second), from the vendors' data sheets.
PEAKS = {
    "H100": (989e12 / 2, 3.35e12),
    "H200": (989e12 / 2, 4.8e12),
    "A100": (312e12 / 2, 2.0e12),
}


class Launch(NamedTuple):
    name: str  # the kernel (or "PyTorch: ..." for the glue between kernels)
    launches: int
    programs: int
    steps: int  # sequential (dependent) steps of one program, or of one thread of a PyTorch scan
    macs: float  # multiply-adds, all programs
    bytes: float  # bytes read and written, all programs
    kind: str = "kernel"  # "kernel" (a Triton kernel), "torch" (PyTorch ops), "torch scan" (a PyTorch scan)


def causal_launches(Z: int, N: int, d: int, dv: int, n: int, C: int, P: int,
                    logit_bytes: Optional[int] = None, split_columns: bool = True,
                    normaliser: str = "chunked", grouped_scan: bool = True) -> List[Launch]:
    """The launches of one causal ABC forward + backward on the kernels (see the module docstring),
    PyTorch glue included. ``logit_bytes``: bytes per logit (default P; the self-check passes fp32
    logits with half q, k, v). ``normaliser``: "chunked" (the kernels' way): the prefix
    normalisers found chunk by chunk inside the kernels (chunk totals written by the chunk sums,
    e_c by the forward scan, each row's g rebuilt from the logits: no PyTorch scan, no g [Z, N,
    n]); "logcumsumexp": the previous way (the H100 run's), PyTorch ops around one
    ``torch.logcumsumexp`` over N before the kernels, g read by the output, rows and columns
    kernels.
    ``split_columns=False``: the code the H100 run timed (commit f36c261, logcumsumexp): one
    columns program per chunk writing dl in the logits' dtype, no dl sum.
    ``grouped_scan=False``: the scan before 5bdd324 (the H100 run's), one chunk per dependent step
    in blocks of 256 elements; grouped (now): SCAN_GROUP chunks loaded, then combined in registers,
    per dependent step (NORMALISING_SCAN_GROUP in the forward scan that writes the normalisers)."""
    if normaliser not in ("chunked", "logcumsumexp"):
        raise ValueError(f"normaliser must be 'chunked' or 'logcumsumexp', got {normaliser!r}")
    L = P if logit_bytes is None else logit_bytes
    nc = math.ceil(N / C)
    chunks = Z * nc
    width = d + dv
    rows = Z * N * n  # elements of one [Z, N, n] tensor
    block, group = (SCAN_BLOCK, SCAN_GROUP) if grouped_scan else SEQUENTIAL_SCAN
    forward_group = NORMALISING_SCAN_GROUP if grouped_scan and normaliser == "chunked" else group
    scan = lambda w: Z * math.ceil(n * w / block)  # noqa: E731
    scan_steps = math.ceil(nc / group)
    g = 0 if normaliser == "chunked" else 1  # a chunk kernel reads g (C n F) only when it is stored
    if normaliser == "chunked":  # e_prev, e_end, decay out of the scan
        launches, boundary = [], 3 * n * F
    else:
        cast = 0 if L == F else 1  # logits.float(): a copy unless the logits are fp32
        # logaddexp with the carried normaliser (2 rows F), the chunk-boundary index_select / cat /
        # sub / exp (9 [Z, nc, n] fp32 passes), the carried normaliser's fill
        glue = cast * rows * (L + F) + 2 * rows * F + 9 * Z * nc * n * F + Z * n * F
        launches = [
            Launch("PyTorch: logcumsumexp", 1, Z * n, N, 0, 2 * rows * F, "torch scan"),  # a thread per (z, slot)
            Launch("PyTorch: normalisers", 10 + cast, 0, 0, 0, glue, "torch")]
        boundary = 0
    launches += [
        # the chunk memories and one n-vector (the chunk totals; the previous way's normaliser column)
        Launch("chunk_sums_kernel", 1, chunks, 1, chunks * C * n * width,
               chunks * (C * (width + n) * P + n * (width + 1) * F)),
        Launch("chunk_scan_kernel (forward)", 1, scan(width), math.ceil(nc / forward_group), 0,
               chunks * (n * (2 * width + 1) * F + boundary) + Z * n * width * F),  # + the last memory
        Launch("output_kernel", 1, chunks, 1, chunks * (C * C * (width + 2 * n) + C * n * width),
               chunks * (C * (2 * d + 2 * dv + n) * P + g * C * n * F + n * (width + 1) * F)),
        Launch("rows_kernel", 1, chunks, 1, chunks * (C * C * (2 * d + dv + 3 * n) + C * n * (3 * d + 2 * dv)),
               chunks * (C * (3 * d + 2 * dv + n) * P + (3 + g) * C * n * F + n * (2 * width + 2) * F)),
        Launch("chunk_scan_kernel (reverse)", 1, scan(width + 1), scan_steps, 0,
               chunks * n * (2 * (width + 1) + 1) * F),
    ]
    if split_columns:
        launches += [
            Launch("columns_kernel", 1, 2 * chunks, 1, chunks * (C * C * (2 * width + 5 * n) + 2 * C * n * width),
                   chunks * (C * (3 * width + n) * P + (5 + g) * C * n * F + n * (width + 3) * F)),
            Launch("PyTorch: dl sum", 1, 0, 0, 0, rows * (2 * F + L), "torch"),  # one add, the cast included
        ]
    else:
        launches.append(Launch("columns_kernel", 1, chunks, 1,
                               chunks * (C * C * (2 * width + 2 * n) + 2 * C * n * width),
                               chunks * (C * (2 * width + n) * P + C * n * L + 4 * C * n * F + n * (width + 1) * F)))
    return launches


def peaks(device_name: str) -> Optional[tuple]:
    """(multiply-adds / s, bytes / s) of a device named like ``torch.cuda.get_device_name``."""
    return next((value for key, value in PEAKS.items() if key in device_name), None)


def estimate(launch: Launch, device_peaks: Optional[tuple]) -> Optional[float]:
    """Microseconds at the device's peaks: the slowest of arithmetic, memory and the sequential
    steps' latency, plus the launches."""
    if device_peaks is None:
        return None
    macs_per_s, bytes_per_s = device_peaks
    return (max(1e6 * launch.macs / macs_per_s, 1e6 * launch.bytes / bytes_per_s, STEP_US * launch.steps)
            + LAUNCH_US * launch.launches)


def table(Z: int, N: int, d: int, dv: int, n: int, C: int, P: int, device_name: str = "H100",
          measured: Optional[Dict[str, float]] = None) -> List[dict]:
    """The model's rows at one size, each with its estimate on ``device_name`` and, when given,
    the measured microseconds (``measured``: kernel name -> us)."""
    device_peaks = peaks(device_name)
    rows = []
    for launch in causal_launches(Z, N, d, dv, n, C, P):
        row = dict(launch._asdict(), model_us=estimate(launch, device_peaks))
        if measured is not None:
            row["measured_us"] = measured.get(launch.name)
        rows.append(row)
    return rows


def markdown(rows: List[dict]) -> str:
    """The rows as a Markdown table with a total line."""
    has_measured = any("measured_us" in row for row in rows)
    head = "| launch | launches | programs | steps | multiply-adds (G) | MB moved | model us |"
    head += " measured us |" if has_measured else ""
    lines = [head, "|" + "---|" * (8 if has_measured else 7)]
    fmt = lambda x: "-" if x is None else f"{x:,.0f}"  # noqa: E731
    for row in rows:
        line = (f"| {row['name']} | {row['launches']} | {row['programs']:,} | {row['steps']} | "
                f"{row['macs'] / 1e9:.2f} | {row['bytes'] / 1e6:,.0f} | {fmt(row['model_us'])} |")
        lines.append(line + (f" {fmt(row.get('measured_us'))} |" if has_measured else ""))
    total = lambda key: sum(row[key] or 0 for row in rows)  # noqa: E731
    line = (f"| total | {total('launches')} | | | {total('macs') / 1e9:.2f} | {total('bytes') / 1e6:,.0f} | "
            f"{fmt(total('model_us') if rows[0]['model_us'] is not None else None)} |")
    lines.append(line + (f" {fmt(total('measured_us'))} |" if has_measured else ""))
    return "\n".join(lines)
