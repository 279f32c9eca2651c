"""Compile every Triton kernel with Triton's real compiler for each GPU architecture, no GPU needed,
and tabulate registers, spills and shared memory per kernel, tile and architecture.

    python -m tools.gpu_compile                     # the full grid -> the two tables below
    python -m tools.gpu_compile --archs 80 --widths 64 --json /tmp/t.json --md /tmp/t.md

Writes ``abc_fairseq/ops/triton/compile_table.json`` (what the causal launcher reads to pick its
chunk on a device: ``ops/triton/sizes.py``) and ``docs/gpu_compile.md``. Rows already in the JSON
are kept and not compiled again (an interrupted run resumes); ``--fresh`` starts a new table.
Registers, spill stores and stack frame come from ``ptxas -v`` (the log of the ptxas run
Triton makes: every kernel is compiled afresh, past Triton's cache),
shared memory from Triton's metadata; ``limit`` is the architecture's shared memory per block
(opt-in maximum, CUDA programming guide), the bound the launcher reads from the device at run time.
"""

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import time
from typing import Dict, Iterator, List, NamedTuple

# Shared memory per block (opt-in maximum) by architecture: V100, T4, A100, RTX 30 / A10,
# RTX 40 / L4 / L40, H100 / H200.
SHARED_LIMITS = {70: 98304, 75: 65536, 80: 166912, 86: 101376, 89: 101376, 90: 232448}
ARCHS = (70, 75, 80, 86, 89, 90)
DTYPES = {"half": ("bf16", "tf32"), "fp32": ("fp32", "ieee")}  # class -> (input pointer type, tl.dot precision)
FLOATS = {"scale", "keep_scale"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_JSON = os.path.join(ROOT, "abc_fairseq", "ops", "triton", "compile_table.json")
DEFAULT_MD = os.path.join(ROOT, "docs", "gpu_compile.md")


class Case(NamedTuple):
    """One kernel at one tile: ``module.kernel`` with constexprs ``tiles`` (num_warps apart)."""

    module: str
    kernel: str
    dtype: str
    tiles: Dict


def cases(widths, chunks) -> Iterator[Case]:
    """Every kernel at every tile its launcher can pick for these padded widths (all of a
    kernel's widths equal: the largest of a problem's head dims and memory size, the worst case)."""
    from abc_fairseq.ops.gsa.triton.gates import LATER_CHUNKS
    from abc_fairseq.ops.triton import sizes

    for dtype, (_, prec) in DTYPES.items():
        for w in widths:
            for chunk in (c for c in chunks if c in sizes.chunks_for(w)):
                tiles = dict(C=chunk, BS=w, BK=w, BV=w, PREC=prec, num_warps=sizes.causal_warps(w))
                yield Case("causal.triton.forward", "chunk_sums_kernel", dtype, tiles)
                yield Case("causal.triton.forward", "output_kernel", dtype, dict(tiles, SAFE=60.0, DROPOUT=True))
                yield Case("causal.triton.backward", "rows_kernel", dtype, dict(tiles, SAFE=60.0, DROPOUT=True))
                yield Case("causal.triton.backward", "columns_kernel", dtype, dict(tiles, SAFE=60.0, GATED=False))
                yield Case("gsa.triton.gates", "gate_grads_kernel", dtype,
                           dict(C=chunk, BS=w, CB=LATER_CHUNKS, SPAN=1, num_warps=sizes.causal_warps(w)))
            wide = dict(K=w, V=w, BK=w, BV=w, PREC=prec, num_warps=4)
            yield Case("bidirectional.triton.memory", "memory_write_fwd", dtype,
                       dict(wide, BT=64, BS=min(w, 64), HAS_PAD=True))
            yield Case("bidirectional.triton.memory", "memory_write_bwd", dtype, dict(wide, BT=32, BS=w, HAS_PAD=True))
            yield Case("bidirectional.triton.read", "memory_read_fwd", dtype, dict(wide, BT=64, BS=w, HAS_DROPOUT=True))
            yield Case("bidirectional.triton.read", "memory_read_bwd", dtype,
                       dict(wide, BT=32 if w <= 64 else 16, BS=w, HAS_DROPOUT=True))
            step = {k: v for k, v in wide.items() if k != "PREC"}
            yield Case("causal.triton.recurrent", "causal_step_kernel", dtype, dict(step, BS=w))
    for reverse in (False, True):
        yield Case("causal.triton.scan", "chunk_scan_kernel", "fp32",
                   dict(BLOCK=sizes.SCAN_BLOCK, GROUP=sizes.scan_group(normalise=not reverse), REVERSE=reverse,
                        HAS_CARRY=not reverse, HAS_FINAL=not reverse, NORMALISE=not reverse,
                        num_warps=sizes.SCAN_WARPS))


def _signature(fn, dtype: str, constants: Dict) -> Dict[str, str]:
    signature = {}
    for name in fn.arg_names:
        if name in constants:
            signature[name] = "constexpr"
        elif name in ("keep_ptr", "pad_ptr"):
            signature[name] = "*i8"
        elif name in ("q_ptr", "k_ptr", "v_ptr", "do_ptr", "o_ptr", "dq_ptr", "dk_ptr", "dv_ptr", "out_ptr",
                      "gate_ptr", "dgate_ptr"):
            signature[name] = "*" + DTYPES[dtype][0]
        elif name.endswith("_ptr"):
            signature[name] = "*fp32"
        else:
            signature[name] = "fp32" if name in FLOATS else "i32"
    return signature


def ptxas_usage(log: str) -> Dict[str, int]:
    """Registers, spill-store and spill-load bytes and stack-frame bytes per thread from ``ptxas -v``'s log."""
    def number(pattern):
        found = re.search(pattern, log)
        return int(found.group(1)) if found else 0

    if "Used" not in log:
        raise RuntimeError(f"no ptxas -v figures in: {log[-500:]}")
    return dict(registers=number(r"Used (\d+) registers"), spills=number(r"(\d+) bytes spill stores"),
                spill_loads=number(r"(\d+) bytes spill loads"), stack=number(r"(\d+) bytes stack frame"))


def compile_kernel(fn, signature: Dict, constexprs: Dict, arch: int, options: Dict, attrs=None):
    """Compile the JIT function ``fn`` for sm_``arch`` with Triton's real compiler: (the compiled
    kernel, its ``ptxas -v`` usage). ``signature``, ``constexprs`` and ``attrs`` as Triton's
    ``ASTSource`` takes them; ``options``: launch options (num_warps, num_stages, ...)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from abc_fairseq.ops.utils import scoped_environment

    # Triton prints ptxas -v's log when it runs ptxas, and here always runs it: a kernel taken from
    # its cache has no log, and ptxas rerun on the PTX lacks the flags Triton passes (3.9 adds
    # --regAllocOptLevel=2), which moved registers and spills with the cache's state
    log = io.StringIO()
    with scoped_environment(TRITON_DUMP_PTXAS_LOG="1", TRITON_ALWAYS_COMPILE="1"), contextlib.redirect_stdout(log):
        compiled = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget("cuda", arch, 32),
                                  options=options)
    return compiled, ptxas_usage(log.getvalue())


def compile_case(case: Case, arch: int) -> Dict:
    """Compile ``case`` for sm_``arch``: its table row."""
    import importlib

    from abc_fairseq.ops.triton import sizes

    fn = getattr(importlib.import_module(f"abc_fairseq.ops.{case.module}"), case.kernel)
    constants = {k: v for k, v in case.tiles.items() if k != "num_warps"}
    constexprs = {(fn.arg_names.index(k),): v for k, v in constants.items()}
    started = time.time()
    compiled, usage = compile_kernel(fn, _signature(fn, case.dtype, constants), constexprs, arch,
                                     dict(num_warps=case.tiles["num_warps"]))
    usage = {k: v for k, v in usage.items() if k != "spill_loads"}  # the table's columns
    shared, limit = compiled.metadata.shared, SHARED_LIMITS[arch]
    return dict(key=sizes.table_key(case.kernel, arch, case.dtype, case.tiles), kernel=case.kernel,
                arch=arch, dtype=case.dtype, tiles=case.tiles, **usage, shared=shared,
                limit=limit, fits=shared <= limit and usage["spills"] == 0, seconds=round(time.time() - started, 1))


def _tile_text(tiles: Dict) -> str:
    return " ".join(f"{k}={v}" for k, v in tiles.items() if k != "PREC")


def markdown(rows: List[Dict], command: str, meta: Dict) -> str:
    lines = ["# Triton kernels compiled per GPU architecture", "",
             f"Generated by `{command}` (triton {meta['triton']}, {meta['date']}, commit {meta['commit']}): "
             "Triton's real compiler and the ptxas in its wheel, no GPU. Registers and spills per "
             "thread from `ptxas -v` (spills: bytes of spill stores; stack: the stack frame, spills and "
             "local arrays); shared memory per block from Triton's metadata; "
             "limit: the architecture's shared memory per block (opt-in). `fits`: shared <= limit and no "
             "spills. The causal launcher takes the largest chunk C whose four kernels fit on the device "
             "at hand (`ops/triton/sizes.py`); a row that does not fit is a tile the launcher skips there.",
             "", "| kernel | arch | dtype | tile | warps | registers | spills (B) | stack (B) | shared (B) | limit (B) "
             "| fits |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["kernel"], r["arch"], r["dtype"], json.dumps(r["tiles"], sort_keys=True))):
        lines.append(f"| {r['kernel']} | sm_{r['arch']} | {r['dtype']} | {_tile_text(r['tiles'])} | "
                     f"{r['tiles'].get('num_warps', 4)} | {r['registers']} | {r['spills']} | {r['stack']} | "
                     f"{r['shared']} | {r['limit']} | {'yes' if r['fits'] else 'no'} |")
    return "\n".join(lines) + "\n"


def git_commit() -> str:
    """The checkout's short commit, or "unknown" outside git."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gpu_compile", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archs", default=",".join(map(str, ARCHS)),
                        help="compute capabilities to compile for, comma separated (default: %(default)s)")
    parser.add_argument("--widths", default="64,128",
                        help="padded head dim / memory size classes, comma separated (default: %(default)s)")
    parser.add_argument("--chunks", default="64,32,16", help="causal chunk sizes C (default: %(default)s)")
    parser.add_argument("--json", default=DEFAULT_JSON, help="table the launcher reads (default: the package's)")
    parser.add_argument("--md", default=DEFAULT_MD, help="markdown table (default: docs/gpu_compile.md)")
    parser.add_argument("--fresh", action="store_true", help="ignore rows already in --json (compile everything)")
    args = parser.parse_args(argv)
    try:
        archs = [int(a) for a in args.archs.split(",")]
        widths = [int(w) for w in args.widths.split(",")]
        chunks = [int(c) for c in args.chunks.split(",")]
    except ValueError as error:
        parser.error(f"--archs, --widths and --chunks take comma-separated integers ({error})")
    unknown = [a for a in archs if a not in SHARED_LIMITS]
    if unknown:
        parser.error(f"--archs: no shared-memory limit known for {unknown} (known: {sorted(SHARED_LIMITS)})")
    bad = [w for w in widths if w not in (16, 32, 64, 128)] + [c for c in chunks if c not in (16, 32, 64, 128)]
    if bad:
        parser.error(f"--widths and --chunks take powers of two from 16 to 128, got {bad}")
    os.environ.pop("TRITON_INTERPRET", None)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton

    rows = {}
    if os.path.exists(args.json) and not args.fresh:
        with open(args.json) as f:
            rows = {r["key"]: r for r in json.load(f)["kernels"]}
    meta = dict(triton=triton.__version__, date=time.strftime("%Y-%m-%d"), commit=git_commit())
    command = "python -m tools.gpu_compile " + " ".join(argv if argv is not None else sys.argv[1:])
    todo = [(case, arch) for arch in archs for case in cases(widths, chunks)]
    from abc_fairseq.ops.triton import sizes

    for i, (case, arch) in enumerate(todo, 1):
        key = sizes.table_key(case.kernel, arch, case.dtype, case.tiles)
        if key in rows:
            continue
        row = compile_case(case, arch)
        rows[key] = row
        print(f"[{i}/{len(todo)}] {case.kernel} sm_{arch} {case.dtype} {_tile_text(case.tiles)}: "
              f"{row['registers']} registers, {row['spills']} B spilled, {row['shared']} B shared "
              f"({row['seconds']} s)", flush=True)
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json + ".part", "w") as f:
            json.dump(dict(meta, command=command, kernels=sorted(rows.values(), key=lambda r: r["key"])), f, indent=1)
        os.replace(args.json + ".part", args.json)
    os.makedirs(os.path.dirname(os.path.abspath(args.md)), exist_ok=True)
    with open(args.md, "w") as f:
        f.write(markdown(list(rows.values()), command, meta))
    oversized = sum(r["shared"] > r["limit"] for r in rows.values())
    spilling = sum(r["spills"] > 0 for r in rows.values())
    print(f"{len(rows)} kernels tabulated: {oversized} need more shared memory than their architecture has "
          f"(the launcher skips those tiles), {spilling} spill registers; wrote {args.json} and {args.md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
