"""Static report of every Triton kernel of every op, ours and fla's, compiled for each GPU
architecture without a GPU: registers, spills, shared memory, programs per SM, tensor-core
instructions by shape and operand type, and memory / MUFU / barrier instruction counts.

    python -m tools.kernel_report                   # the full grid -> docs/gpu_kernels/kernels.{md,json}
    python -m tools.kernel_report --archs 90 --widths 64 --dtypes fp16 --ops causal_abc \\
        --kernels columns_kernel --chunks 16 --json /tmp/k.json --md /tmp/k.md

Each op's forward and backward (decoding: one step) runs on small CPU tensors with Triton's launch
recorded instead of run (``tools.kernel_launches``), at d = n = dv = each width and each input
dtype; every launch is compiled with Triton's compiler for each architecture (``tools.gpu_compile``:
registers and spills from ``ptxas -v``, shared memory from Triton) and its cubin disassembled and
counted (``tools.sass``: static counts, each instruction once). Tiles are the launchers' own:
the causal ops at every chunk their launcher can take (``ops/triton/sizes.py``; ``pick`` marks the
one the compile table picks on that architecture), the bidirectional kernels at the first rows
block and pipelining depth whose shared memory fits the architecture (as ``launch_rows`` does on a
device), fla's kernels at their launchers' tiles and, where fla autotunes, at one config (the
closest to Triton's default of 4 warps and 3 stages, then the first fla lists; ``--fla-configs all``
compiles every config). Rows already in ``--json`` are kept (an interrupted run resumes).
"""

import argparse
import hashlib
import json
import math
import os
import sys
import time
from typing import Dict, Iterator, List, Optional, Tuple

from tools import gpu_compile
from tools.kernel_report_md import OPS, markdown

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "docs", "gpu_kernels")
ARCHS = (80, 90)
WIDTHS = (64, 128)
DTYPES = ("fp16", "bf16", "fp32")
def _constexpr_names(launch, constexprs: Dict) -> Dict:
    """name -> value of the launch's plain constexprs (sizes, flags, precisions)."""
    names = launch.fn.arg_names
    return {names[path[0]]: value for path, value in constexprs.items()
            if len(path) == 1 and isinstance(value, (int, float, str, bool))}


def compile_key(launch, arch: int, bound) -> str:
    """What decides the compiled binary: the kernel's code, architecture, signature, constexprs,
    specialisation, warps and stages."""
    signature, constexprs, attrs, options = bound
    # Triton's cache_key hashes the kernel's source and the JIT functions it calls: an edited kernel is
    # a new row when a run resumes.
    text = repr((launch.fn.fn.__module__, launch.name, launch.fn.cache_key, arch, sorted(signature.items()),
                 sorted((k, str(v)) for k, v in constexprs.items()), sorted((k, str(v)) for k, v in attrs.items()),
                 options.get("num_warps"), options.get("num_stages")))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def compile_launch(launch, arch: int, bound) -> Tuple[Dict, str]:
    """Compile one bound launch for sm_``arch``: (its figures, the SASS they were counted from)."""
    from tools import sass
    from tools.gpu_compile import compile_kernel

    signature, constexprs, attrs, options = bound
    started = time.time()
    compiled, usage = compile_kernel(launch.fn, signature, constexprs, arch, options, attrs)
    listing = sass.disassemble(compiled.asm["cubin"])
    warps, shared = options["num_warps"], compiled.metadata.shared
    figures = dict(registers=usage["registers"], spill_stores=usage["spills"], spill_loads=usage["spill_loads"],
                   stack=usage["stack"], shared=shared, warps=warps, stages=options.get("num_stages"),
                   **sass.occupancy(arch, usage["registers"], shared, warps), **sass.count(listing),
                   seconds=round(time.time() - started, 1))
    return figures, listing


class Job:
    """One row to make: a launch of ``op`` at (dtype, width, chunk) compiled for ``arch``."""

    def __init__(self, op, arch, dtype, width, chunk, launch, count):
        self.op, self.arch, self.dtype, self.width, self.chunk = op, arch, dtype, width, chunk
        self.launch, self.count = launch, count

    def row_key(self, bound) -> str:
        return f"{self.op}|sm_{self.arch}|{self.dtype}|w={self.width}|C={self.chunk}|{self.launch.name}|" + \
            compile_key(self.launch, self.arch, bound)

    def key(self) -> str:
        """The row's key: that of the launch as recorded (its first alternative)."""
        return self.row_key(self.launch.bind(self.arch, (self.launch.alternatives or [None])[0]))


def _preferred(group: List) -> object:
    """The config of an autotuned kernel the report compiles: closest to 4 warps and 3 stages."""
    def distance(launch):
        warps, stages = launch.kwargs.get("num_warps", 4), launch.kwargs.get("num_stages", 3)
        return abs(math.log2(warps / 4)), abs(stages - 3), launch.config[0]
    return min(group, key=distance)


def select(launches: List, all_configs: bool) -> List:
    """The launches to compile: one config per autotuned launch (or all of them)."""
    chosen, group = [], []
    for launch in launches + [None]:
        if launch is not None and launch.config is not None and (launch.config[0] > 0 or not group):
            group.append(launch)
            continue
        if group:
            chosen.extend(group if all_configs else [_preferred(group)])
            group = []
        if launch is not None and launch.config is not None:
            group.append(launch)
        elif launch is not None:
            chosen.append(launch)
    return chosen


def jobs(args) -> Iterator[Job]:
    """Every (op, dtype, width, chunk) capture, its launches deduplicated per architecture."""
    from abc_fairseq.ops.triton import sizes
    from tools import kernel_launches

    for op in args.ops:
        for width in args.widths:
            chunks = [c for c in sizes.chunks_for(width) if c in args.chunks] if kernel_launches.OPS[op][1] \
                else [None]
            for dtype in args.dtypes:
                for chunk in chunks:
                    launches = select(kernel_launches.capture(op, dtype, width, chunk), args.fla_configs == "all")
                    launches = [launch for launch in launches if not args.kernels or launch.name in args.kernels]
                    for arch in args.archs:
                        seen = {}
                        for launch in launches:
                            key = compile_key(launch, arch, launch.bind(arch))
                            if key in seen:
                                seen[key].count += 1
                            else:
                                seen[key] = Job(op, arch, dtype, width, chunk, launch, 1)
                        yield from seen.values()


def run_job(job: Job, probes: Dict) -> Tuple[Dict, str]:
    """(the row, the SASS it was counted from). A launch with alternatives (``launch_rows``) takes
    the first whose shared memory fits the architecture; ``probes`` (compile key -> shared bytes)
    remembers those that did not. The row's key is the job's (its first alternative's)."""
    from tools import sass

    limit = sass.LIMITS[job.arch].shared_block
    tried = []
    for extra in job.launch.alternatives or [None]:
        bound = job.launch.bind(job.arch, extra)
        probe = job.row_key(bound)
        if probe in probes:
            tried.append(dict(extra, shared=probes[probe]))
            continue
        figures, listing = compile_launch(job.launch, job.arch, bound)
        if extra is not None and figures["shared"] > limit:
            probes[probe] = figures["shared"]
            tried.append(dict(extra, shared=figures["shared"]))
            continue
        row = dict(key=job.key(), op=job.op, arch=job.arch, dtype=job.dtype, width=job.width, chunk=job.chunk,
                   pick=_picked(job), kernel=job.launch.name, tiles=_constexpr_names(job.launch, bound[1]),
                   config=job.launch.config, not_fitting=tried, launches=job.count, **figures)
        return row, listing
    raise RuntimeError(f"{job.launch.name} on sm_{job.arch}: no rows block fits {limit} B of shared memory: {tried}")


def _picked(job: Job) -> Optional[bool]:
    """Whether the causal launcher's table guess (``sizes.pick_chunk``) on this architecture is
    this row's chunk (None for ops without a chunk choice)."""
    if job.chunk is None:
        return None
    import torch

    from abc_fairseq.ops.triton import sizes
    from tools import sass

    w, dtype = job.width, {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[job.dtype]
    return sizes.pick_chunk(64, job.arch, sass.LIMITS[job.arch].shared_block, w, w, w, dtype) == job.chunk


def _in_scope(row: Dict, args) -> bool:
    """Whether this run's selection covers ``row`` (a row it covers but did not make is stale: an
    edited kernel or a launcher that no longer makes that launch)."""
    return (row["op"] in args.ops and row["arch"] in args.archs and row["dtype"] in args.dtypes
            and row["width"] in args.widths and (row["chunk"] is None or row["chunk"] in args.chunks)
            and (not args.kernels or row["kernel"] in args.kernels))


def _list(text: str, flag: str, allowed, convert=str) -> List:
    try:
        values = [convert(x) for x in text.split(",") if x]
    except ValueError:
        raise SystemExit(f"{flag}: expected a comma-separated list, got {text!r}")
    bad = [v for v in values if allowed is not None and v not in allowed]
    if bad or not values:
        raise SystemExit(f"{flag}: {bad or text!r} not among {', '.join(map(str, allowed))}")
    return values


def parse(argv) -> argparse.Namespace:
    from tools import sass

    parser = argparse.ArgumentParser(prog="python -m tools.kernel_report", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--archs", default=",".join(map(str, ARCHS)),
                        help=f"compute capabilities, comma separated, of {sorted(sass.LIMITS)} (default: %(default)s)")
    parser.add_argument("--widths", default=",".join(map(str, WIDTHS)),
                        help="d = n = dv, comma separated, powers of two 16-128 (default: %(default)s)")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="input dtypes (default: %(default)s)")
    parser.add_argument("--ops", default=",".join(OPS), help="ops (default: %(default)s)")
    parser.add_argument("--chunks", default="64,32,16", help="causal chunks C to compile (default: %(default)s)")
    parser.add_argument("--kernels", default="", help="only these kernel names, comma separated (default: all)")
    parser.add_argument("--fla-configs", choices=("one", "all"), default="one",
                        help="fla's autotuned kernels: the one config closest to 4 warps / 3 stages, or all")
    parser.add_argument("--json", default=os.path.join(OUT_DIR, "kernels.json"), help="rows (default: %(default)s)")
    parser.add_argument("--md", default=os.path.join(OUT_DIR, "kernels.md"), help="report (default: %(default)s)")
    parser.add_argument("--fresh", action="store_true", help="ignore rows already in --json")
    args = parser.parse_args(argv)
    try:
        args.archs = _list(args.archs, "--archs", sorted(sass.LIMITS), int)
        args.widths = _list(args.widths, "--widths", (16, 32, 64, 128), int)
        args.chunks = _list(args.chunks, "--chunks", (16, 32, 64), int)
        args.dtypes = _list(args.dtypes, "--dtypes", DTYPES)
        args.ops = _list(args.ops, "--ops", OPS)
        args.kernels = _list(args.kernels, "--kernels", None) if args.kernels else []
    except SystemExit as error:
        parser.error(str(error))
    return args


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(argv)
    os.environ.pop("TRITON_INTERPRET", None)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton


    saved = {}
    if os.path.exists(args.json) and not args.fresh:
        with open(args.json) as f:
            saved = json.load(f)
    rows = {r["key"]: r for r in saved.get("kernels", [])}
    for row in rows.values():  # rows of a report from before rows recorded their run: the report's
        row.setdefault("made_by", dict(commit=saved.get("commit"), command=saved.get("command")))
    probes = dict(saved.get("probes", {}))
    command = " ".join(["python -m tools.kernel_report"] + argv)
    meta = dict(triton=triton.__version__, fla=_version("fla-core"), date=time.strftime("%Y-%m-%d"),
                commit=gpu_compile.git_commit(), command=command)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    started, made = time.time(), 0
    visited = set()
    for job in jobs(args):
        key = job.key()
        visited.add(key)
        if key in rows:  # compiled already; the launcher's pick follows the compile table, which may be newer
            rows[key].update(launches=job.count, pick=_picked(job))
            continue
        try:
            row, _ = run_job(job, probes)
        except Exception as error:  # noqa: BLE001 (a kernel that does not compile is reported, not fatal)
            row = dict(key=key, op=job.op, arch=job.arch, dtype=job.dtype, width=job.width, chunk=job.chunk,
                       kernel=job.launch.name, error=f"{type(error).__name__}: {str(error).splitlines()[0][:200]}")
            print(f"{job.op} sm_{job.arch} {job.dtype} w={job.width} {job.launch.name}: {row['error']}", flush=True)
            rows[key] = row
            continue
        row["made_by"] = dict(commit=meta["commit"], command=command)
        rows[row["key"]] = row
        made += 1
        print(f"{row['op']} sm_{row['arch']} {row['dtype']} w={row['width']} C={row['chunk']} {row['kernel']}: "
              f"{row['registers']} registers, {row['spill_stores']} B spilled, {row['shared']} B shared, "
              f"{row['programs_per_sm']}/SM, MMA {row['mma_by_operand']} ({row['seconds']} s)", flush=True)
        with open(args.json + ".part", "w") as f:
            json.dump(dict(meta, kernels=sorted(rows.values(), key=lambda r: r["key"]), probes=probes), f, indent=1)
        os.replace(args.json + ".part", args.json)
    rows = {key: r for key, r in rows.items() if key in visited or not _in_scope(r, args)}  # stale rows go
    with open(args.json + ".part", "w") as f:
        json.dump(dict(meta, kernels=sorted(rows.values(), key=lambda r: r["key"]), probes=probes), f, indent=1)
    os.replace(args.json + ".part", args.json)
    os.makedirs(os.path.dirname(os.path.abspath(args.md)), exist_ok=True)
    with open(args.md, "w") as f:
        f.write(markdown(list(rows.values()), meta))
    print(f"{len(rows)} kernel rows ({made} compiled now, {time.time() - started:.0f} s); wrote {args.json} "
          f"and {args.md}")
    return 0


def _version(package: str) -> Optional[str]:
    import importlib.metadata

    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
