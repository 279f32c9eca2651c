"""Tile sizes and matmul precision of every launcher, and the tiles each one can pick.

Widths are padded to powers of two of at least 16 (``tl.dot``'s minimum). fp32 inputs get exact
fp32 products ("ieee"); half inputs carry half precision already, so tensor cores' tf32 (10-bit
mantissa) loses nothing they had.

The causal kernels' chunk C is the one tile a launcher chooses: ``CHUNKS`` lists the candidates,
largest first. ``chunk_candidates`` keeps those whose four kernels, compiled for the device's
architecture (``compile_table.json``, written by ``python -m tools.gpu_compile``), fit the
device's shared memory per block (read from the device at run time), and ``tuning`` times them on
the device and takes the fastest. ``device_chunk`` is the table's own guess, without a
measurement (the largest chunk that fits without register spills, else the one spilling least;
the smallest for an architecture the table lacks): what the self-check and the profiler report
beside the measured choice. The bidirectional launchers' free tile is their rows block BT and
pipelining depth: ``launch_rows`` takes the largest BT, then the deepest pipeline, that the
device accepts.
"""

import functools
import json
import os
from types import MappingProxyType
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import torch

CHUNKS = (64, 32, 16)
# 128-wide tiles at C = 64 need 290-390 KiB of shared memory in the backward: no GPU has that.
WIDE_CHUNKS = (32, 16)
WIDTHS = (16, 32, 64, 128)  # padded head dims and memory sizes the kernels take
TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compile_table.json")
CAUSAL_KERNELS = ("chunk_sums_kernel", "output_kernel", "rows_kernel", "columns_kernel")


def cdiv(a: int, b: int) -> int:
    """ceil(a / b) for grids, on the host (``triton.cdiv`` costs a JIT helper's call there)."""
    return -(-a // b)


def pad(width: int, cap: Optional[int] = None) -> int:
    """The tile width covering ``width`` columns: a power of two >= 16, at most ``cap``."""
    padded = max(16, 1 << max(width - 1, 0).bit_length())
    return padded if cap is None else min(cap, padded)


def precision(dtype: torch.dtype) -> str:
    """``tl.dot``'s input_precision for inputs of ``dtype``."""
    return "ieee" if dtype == torch.float32 else "tf32"


def causal_warps(*widths: int) -> int:
    """8 warps once a tile is 64 wide: a quarter of the register pressure of 4 (ptxas)."""
    return 8 if max(pad(w) for w in widths) >= 64 else 4


@functools.lru_cache(maxsize=None)
def causal_tiles(chunk: int, n: int, d: int, dv: int, dtype: torch.dtype) -> Mapping:
    """Compile-time sizes of the causal kernels: C rows per chunk, BS slots, BK key and BV value
    columns (each padded), the matmul precision and the warps. Kept per arguments (every launch
    asks), hence read-only."""
    return MappingProxyType(dict(C=chunk, BS=pad(n), BK=pad(d), BV=pad(dv), PREC=precision(dtype),
                                 num_warps=causal_warps(n, d, dv)))


@functools.lru_cache(maxsize=None)
def step_tiles(K: int, V: int, n: int) -> Mapping:
    """Compile-time sizes of the decoding step kernels: the real widths and their padded tiles.
    Kept per arguments (every layer asks, every token), hence read-only."""
    return MappingProxyType(dict(K=K, V=V, BK=pad(K), BV=pad(V), BS=pad(n)))


TILE_KEYS = ("K", "V", "C", "BT", "BS", "BK", "BV", "BLOCK", "REVERSE")


def dtype_class(dtype: torch.dtype) -> str:
    """The compile table's input class: "fp32", or "half" (fp16 and bf16: one code path)."""
    return "fp32" if dtype == torch.float32 else "half"


def table_key(kernel: str, arch: int, dtype: str, tiles: Dict) -> str:
    """The row of ``compile_table.json`` for ``kernel`` compiled for sm_``arch`` with inputs of
    class ``dtype`` at ``tiles`` (only the sizes count: flags like DROPOUT take their costlier value)."""
    sizes = ",".join(f"{k}={tiles[k]}" for k in TILE_KEYS if k in tiles)
    return f"{kernel}|sm_{arch}|{dtype}|{sizes}|warps={tiles.get('num_warps', 4)}"


def table_width(*widths: int) -> int:
    """The width class a problem is looked up under: its widest padded tile, at least 64 (a
    narrower tile needs fewer registers and less shared memory than the 64-wide row)."""
    return max(64, max(pad(w) for w in widths))


@functools.lru_cache(maxsize=None)
def compile_table() -> Dict[str, Dict]:
    """key -> {"registers", "spills", "shared"} from the generated table ({} when absent)."""
    if not os.path.exists(TABLE):
        return {}
    with open(TABLE) as f:
        return {row["key"]: row for row in json.load(f)["kernels"]}


def shared_memory_per_block(device: torch.device) -> int:
    """Bytes of shared memory one block may use on ``device`` (the opt-in maximum)."""
    props = torch.cuda.get_device_properties(device)
    return int(getattr(props, "shared_memory_per_block_optin", 0) or props.shared_memory_per_block)


def chunk_rows(arch: int, chunk: int, n: int, d: int, dv: int, dtype: torch.dtype,
               table: Optional[Dict[str, Dict]] = None) -> Optional[List[Dict]]:
    """The compile-table rows of the four causal kernels at ``chunk`` on sm_``arch`` (None when
    the table lacks one of them)."""
    table = compile_table() if table is None else table
    w = table_width(n, d, dv)
    tiles = causal_tiles(chunk, w, w, w, dtype)
    rows = [table.get(table_key(kernel, arch, dtype_class(dtype), tiles)) for kernel in CAUSAL_KERNELS]
    return None if any(row is None for row in rows) else rows


def chunks_for(width: int) -> Tuple[int, ...]:
    """The chunks the causal launcher can pick for tiles ``width`` wide (a table width)."""
    return WIDE_CHUNKS if width > 64 else CHUNKS


def pick_chunk(chunk: int, arch: int, limit: int, n: int, d: int, dv: int, dtype: torch.dtype,
               table: Optional[Dict[str, Dict]] = None) -> int:
    """The largest candidate <= ``chunk`` whose kernels fit ``limit`` bytes of shared memory
    without register spills; if every fitting one spills, the one that spills least (ties: the
    larger); if none is in the table or none fits, the smallest (which fits everywhere)."""
    options = chunks_for(table_width(n, d, dv))
    candidates = [c for c in options if c <= chunk] or [options[-1]]
    spilling = []
    for candidate in candidates:
        rows = chunk_rows(arch, candidate, n, d, dv, dtype, table)
        if rows is None or any(row["shared"] > limit for row in rows):
            continue
        spills = max(row["spills"] for row in rows)
        if spills == 0:
            return candidate
        spilling.append((spills, -candidate))
    return -min(spilling)[1] if spilling else candidates[-1]


@functools.lru_cache(maxsize=None)
def _device_limits(index: int) -> Tuple[int, int]:
    major, minor = torch.cuda.get_device_capability(index)
    return major * 10 + minor, shared_memory_per_block(torch.device("cuda", index))


# Tuning override: the causal kernels' chunk, taken as given (no spill or shared-memory choice).
# For measuring which chunk is fastest on a GPU (the self-check times every one this way).
CHUNK_VARIABLE = "ABC_TRITON_CHUNK"


def forced_chunk(width: int) -> Optional[int]:
    """The chunk ``ABC_TRITON_CHUNK`` names for tiles ``width`` wide (a table width), or None
    when it is unset; a value the kernels cannot take is a ValueError naming the variable."""
    text = os.environ.get(CHUNK_VARIABLE, "").strip()
    if not text:
        return None
    options = chunks_for(width)
    if not text.isdigit() or int(text) not in options:
        raise ValueError(f"{CHUNK_VARIABLE}={text!r}: the causal kernels take a chunk of "
                         f"{', '.join(map(str, options))} rows at {width}-wide tiles")
    return int(text)


# The causal scan's tiles (``causal.triton.scan``): GROUP chunks x BLOCK memory elements per
# program on WARPS warps. At 8 x 128 on 4 warps ptxas keeps it in registers without spilling on
# sm_80 and sm_90 (16 chunks spill, or need 8 warps and shared memory), and 8,192 tokens x 4
# sequence-heads at C = 64, n = d = dv = 64 make 256 programs.
SCAN_BLOCK, SCAN_GROUP, SCAN_WARPS = 128, 8, 4
# ABC's forward scan also turns each chunk's totals into its normalisers (logaddexps per slot): it
# holds more per chunk, and at 8 chunks a step Triton 3.6's ptxas gives it 255 registers and spills
# 56 bytes on sm_90 (docs/gpu_kernels/triton36); at 4 it takes 128 and spills nothing, there as in 3.9.
NORMALISING_SCAN_GROUP = 4
# Tuning override: how many chunks the scan loads and combines per dependent step (default
# ``SCAN_GROUP``, ``NORMALISING_SCAN_GROUP`` for ABC's forward). 1 is the scan before the grouped
# one: one chunk per step, for timing the two against each other on a GPU.
SCAN_GROUP_VARIABLE = "ABC_TRITON_SCAN_GROUP"
SCAN_GROUPS = (1, 2, 4, 8, 16)


def scan_group(normalise: bool = False) -> int:
    """The chunks per scan step: ``ABC_TRITON_SCAN_GROUP`` when set (one of ``SCAN_GROUPS``, else a
    ValueError naming the variable), else ``SCAN_GROUP`` (``NORMALISING_SCAN_GROUP`` for the scan
    that also writes ABC's normalisers, ``normalise``)."""
    text = os.environ.get(SCAN_GROUP_VARIABLE, "").strip()
    if not text:
        return NORMALISING_SCAN_GROUP if normalise else SCAN_GROUP
    if not text.isdigit() or int(text) not in SCAN_GROUPS:
        raise ValueError(f"{SCAN_GROUP_VARIABLE}={text!r}: the causal scan takes "
                         f"{', '.join(map(str, SCAN_GROUPS))} chunks per step")
    return int(text)


@functools.lru_cache(maxsize=None)
def chunk_candidates(chunk: int, n: int, d: int, dv: int, dtype: torch.dtype, device: torch.device) -> Tuple[int, ...]:
    """The chunks the causal launchers measure (``tuning``) when ``ABC_TRITON_CHUNK`` does not name
    one (``forced_chunk``, which the launchers ask first), largest first: ``chunk`` alone off CUDA
    (the interpreter); on CUDA every candidate up to ``chunk`` whose four kernels, compiled for the
    device's architecture, fit its shared memory (``compile_table.json``; spills do not count: time
    decides), or all of them for an architecture the table lacks (one that cannot launch is
    skipped when measured). Kept per arguments: every launch asks."""
    if device.type != "cuda":
        return (chunk,)
    arch, limit = _device_limits(device.index if device.index is not None else torch.cuda.current_device())
    options = [c for c in chunks_for(table_width(n, d, dv)) if c <= chunk] or [chunks_for(table_width(n, d, dv))[-1]]
    fitting = []
    for candidate in options:
        rows = chunk_rows(arch, candidate, n, d, dv, dtype)
        if rows is None or all(row["shared"] <= limit for row in rows):
            fitting.append(candidate)
    return tuple(fitting) or (options[-1],)


def device_chunk(chunk: int, n: int, d: int, dv: int, dtype: torch.dtype, device: torch.device) -> int:
    """The causal kernels' chunk on ``device``: ``ABC_TRITON_CHUNK`` when set; else ``chunk``
    itself off CUDA (the interpreter), else ``pick_chunk`` for the device's architecture and
    shared memory."""
    forced = forced_chunk(table_width(n, d, dv))
    if forced is not None:
        return forced
    if device.type != "cuda":
        return chunk
    arch, limit = _device_limits(device.index if device.index is not None else torch.cuda.current_device())
    return pick_chunk(chunk, arch, limit, n, d, dv, dtype)


# Software-pipelining depths tried per rows block, deepest (Triton's default) first: each stage
# buffers the loop's loads in shared memory, so a shallower pipeline is what lets a wide tile fit
# (Triton 3.6 on sm_90: the 128-wide read backward needs 248 KB at 3 stages, 166 KB at 2).
PIPELINE_STAGES = (3, 2, 1)

_launch_chosen: Dict[tuple, Tuple[int, int]] = {}


def launch_rows(kernel, grid: Callable[[int], tuple], args: Sequence, rows: Sequence[int], device, **tiles) -> int:
    """Launch ``kernel[grid(BT)](*args, BT=BT, num_stages=S, **tiles)`` with the first (BT, S)
    the device accepts, BT from ``rows`` (largest first), S from ``PIPELINE_STAGES`` within each
    BT: Triton refuses a kernel needing more shared memory than the device's block has
    (OutOfResources, checked against the device's own limit), and the next pair is tried. The
    choice is kept per kernel, tiles and device. Returns BT."""
    from triton.runtime.errors import OutOfResources

    key = (id(kernel), tuple(sorted(tiles.items())), str(device))
    options = [(bt, stages) for bt in rows for stages in PIPELINE_STAGES]
    if key in _launch_chosen:
        options = options[options.index(_launch_chosen[key]):]
    for bt, stages in options:
        try:
            kernel[grid(bt)](*args, BT=bt, num_stages=stages, **tiles)
        except OutOfResources:
            if (bt, stages) == options[-1]:
                raise
            continue
        _launch_chosen[key] = (bt, stages)
        return bt
    raise AssertionError("unreachable")
