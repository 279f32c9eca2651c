"""Host time of each call on the Triton path, measured on CPU: the Python and PyTorch work a GPU
waits behind when its kernels are short (what the fitted cost model's per-launch and per-call
constants hold).

    python -m tools.host_time --out-dir docs/gpu_host --overwrite
    python -m tools.host_time --width 128 --tokens 256 --repeats 500 --out-dir DIR
    python -m tools.host_time --device cuda --out-dir DIR     # on a GPU: Triton's launcher included

Each call (``tools.host_cases``: the ops, forward + backward where they train; a greedy decoding
step of ABC's and of softmax's translation decoder) runs on small CPU tensors with the kernels
taken (backend "triton", and "auto" in the layers) and Triton's launches recorded instead of run
(``tools.kernel_launches.recording``: the kernels' outputs stay uninitialised, all host code around
them runs). Denormal floats are flushed to zero meanwhile: an uninitialised buffer may hold them,
and on CPU an op over denormals runs 10x slower or more (ABC's backward add of dl's two parts took
110 us against 9), arithmetic that a GPU would not wait for. Each call's median CPU time, of the
calling thread (other work on the machine does not count), is "ours": argument checks, dispatch,
the launchers' geometry, allocations, autograd's Function and engine, PyTorch glue (whose CPU
kernels run here and are launches on a GPU). Beside it, "Python calls" counts the function calls
the interpreter makes in one call: the same on every machine. Triton's own launch
(``JITFunction.run``) is not in "ours"; its Python part, the binder that specialises the arguments
and the cache key, is timed apart on every recorded launch with the sm_90 backend's binder. Neither
covers the driver's launch itself (a few us a launch).

With ``--device cuda`` the launches run (a size class's chunk is measured by its first call, before
the timed calls) and the device is synchronised before each timed call, untimed, so that no call
waits on a full queue: the thread's CPU time is then the whole host cost, Triton's launcher and the
driver included (the binder column reads 0).

Two rows give the scale on the same machine: "one PyTorch op" (a tiny ``torch.add``) and "autograd
floor" (one op forward and backward through ``torch.autograd.grad``, the harness every forward +
backward row pays). Host time barely moves with the problem size, so the sizes are small. Writes
host.json, host.md and host.png (commit, command, machine, load).
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from contextlib import contextmanager
from typing import Callable, Dict, List

import torch

from .host_cases import CASES, Case, Problem
from .kernel_launches import Launch, recording


@contextmanager
def kernels_on_cpu():
    """backend="triton" accepted on CPU tensors without Triton's interpreter, and "auto" taking the
    kernels there (the launches are recorded, never run)."""
    from abc_fairseq.ops import backend

    saved = backend.interpreting, backend.AUTO_DEVICES
    backend.interpreting, backend.AUTO_DEVICES = (lambda: True), ("cuda", "cpu")  # "auto": the layers' default
    try:
        yield
    finally:
        backend.interpreting, backend.AUTO_DEVICES = saved


@contextmanager
def denormals_flushed():
    """Within: this thread's CPU float ops flush denormals to zero (the flag is per thread: CPU
    autograd runs on the calling thread). Yields whether the CPU can (False: they cost what they
    cost). After: denormals kept, torch's default (torch has no getter to restore another)."""
    flushed = torch.set_flush_denormal(True)
    try:
        yield flushed
    finally:
        torch.set_flush_denormal(False)


@contextmanager
def counted_launches(launches: List[Launch]):
    """Within: Triton launches run as usual and each is appended to ``launches`` (on a GPU, where
    ``recording`` would keep them from running)."""
    from triton.runtime.jit import JITFunction

    run = JITFunction.run

    def counted(self, *args, grid, warmup, **kwargs):
        launches.append(Launch(self, args, kwargs))
        return run(self, *args, grid=grid, warmup=warmup, **kwargs)

    JITFunction.run = counted
    try:
        yield launches
    finally:
        JITFunction.run = run


def cpu_ns(call: Callable[[], object], repeats: int, settle: Callable[[], object] = lambda: None) -> List[int]:
    """CPU time of this thread in each of ``repeats`` calls, ns: the time the host spends, not the
    time other processes on the machine take from it (wall time would count those). ``settle()``
    runs before each call, untimed (on a GPU: a synchronisation, so that no call waits on a full
    launch queue)."""
    samples = []
    for _ in range(repeats):
        settle()
        start = time.thread_time_ns()
        call()
        samples.append(time.thread_time_ns() - start)
    return samples


def python_calls(call: Callable[[], object]) -> int:
    """Python and C function calls the interpreter makes in one ``call()``: a count that does not
    depend on the machine or its load, beside the time that does."""
    count = [0]

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return count[0] - 1  # the call of sys.setprofile(None) itself


def binder(launch: Launch, arch: int = 90) -> Callable[[], None]:
    """A call of Triton's binder and cache key for ``launch`` (what ``JITFunction.run`` does in
    Python before the driver's launch), with the sm_``arch`` backend's binder."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    from triton.runtime.jit import compute_cache_key, create_function_from_signature

    bind_args = create_function_from_signature(launch.fn.signature, launch.fn.params, make_backend(
        GPUTarget("cuda", arch, 32)))
    kwargs = dict(launch.kwargs, debug=False)
    cache: Dict = {}

    def bind() -> None:
        _, specialization, options = bind_args(*launch.args, **kwargs)
        compute_cache_key(cache, specialization, options)
    return bind


def measure(cases: List[Case], problem: Problem, repeats: int, rounds: int = 5) -> List[Dict]:
    """A row per case: its launches, Python calls, median CPU time per call and Triton's binder
    time. The timed calls run round after round, each round every case in turn (``repeats /
    rounds`` calls each, then on CPU a quarter as many of each of its launches' binders), so that
    a machine whose speed drifts weighs on every case and on its binders alike. On CPU the
    launches are recorded, not run, and Triton's binder is timed apart on each; on a GPU they run,
    and the binder, the rest of Triton's launcher and the driver are in "ours"."""
    launches: List[Launch] = []
    on_gpu = problem.device.type == "cuda"
    settle = torch.cuda.synchronize if on_gpu else (lambda: None)
    prepared = []
    with contextlib.ExitStack() as stack:
        if on_gpu:
            stack.enter_context(counted_launches(launches))
        else:
            stack.enter_context(kernels_on_cpu())
            stack.enter_context(recording(launches))
            stack.enter_context(denormals_flushed())
        for case in cases:
            call = case.build(problem)
            call()  # the first call measures the chunk (``ops.triton.tuning``) and fills caches
            launches.clear()
            call()
            binders = [] if on_gpu else [binder(launch) for launch in launches]
            prepared.append((case, call, list(launches), python_calls(call), binders))
        samples: Dict[str, List[int]] = {case.name: [] for case in cases}
        binder_samples: Dict[str, List[List[int]]] = {case.name: [[] for _ in binders]
                                                      for case, _, _, _, binders in prepared}
        for _ in range(rounds):
            for case, call, _, _, binders in prepared:
                call()  # warm this case's caches again after the others ran
                samples[case.name] += cpu_ns(call, max(1, repeats // rounds), settle)
                launches.clear()
                for bind, timed in zip(binders, binder_samples[case.name]):
                    bind()
                    timed += cpu_ns(bind, max(10, repeats // 4 // rounds))
        settle()
    rows = []
    for case, _, per_call, calls, _ in prepared:
        host = statistics.median(samples[case.name]) / 1e3
        bound = sum(statistics.median(timed) for timed in binder_samples[case.name]) / 1e3
        rows.append(dict(op=case.name, what=case.what, launches=len(per_call),
                         kernels=[launch.name for launch in per_call], python_calls=calls, host_us=round(host, 1),
                         binder_us=round(bound, 1), total_us=round(host + bound, 1)))
    return rows


def markdown(rows: List[Dict], record: Dict) -> str:
    env, sizes = record["environment"], record["sizes"]
    scale = next(row["host_us"] for row in rows if row["op"] == "one PyTorch op")
    on_gpu = record.get("device", "cpu").startswith("cuda")
    title = (f"on {env.get('cuda_device', record['device'])} (launches run; Triton's launcher in ours)" if on_gpu
             else "(launches recorded, not run)")
    lines = [f"# Host time per call on the Triton path {title}", "",
             f"`{env['command']}` at commit {env['commit']} ({env['date']}; {env['cpu_model']}, "
             f"{env['usable_cpus']} CPUs, load {', '.join(f'{x:.2f}' for x in env['load_average'])}; "
             f"torch {env['torch']}, triton {record['triton']}, {record['torch_threads']} torch thread(s)).",
             f"Sizes: batch 1, 4 heads, {sizes['tokens']} tokens, d = n = dv = {sizes['width']}, {sizes['dtype']}; "
             f"median of {sizes['repeats']} calls in {sizes['rounds']} rounds, every op in turn each round. "
             "The tool and what it leaves out: `tools/host_time.py`.", "",
             "| op | call | launches | Python calls | ours, us | Triton's binder, us | total, us | in PyTorch ops |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['op']} | {row['what']} | {row['launches']} | {row['python_calls']} | "
                     f"{row['host_us']:.1f} | {row['binder_us']:.1f} | {row['total_us']:.1f} | "
                     f"{row['total_us'] / scale:.1f} |")
    lines += ["", "`Python calls`: function calls (Python and C) the interpreter makes in one call of the op, "
              "Triton's launcher left out on CPU (recorded launches), in on a GPU: the same on every machine of a "
              "kind. `in PyTorch ops`: the total over "
              "the `one PyTorch op` row's time on this machine."]
    return "\n".join(lines) + "\n"


def plot(rows: List[Dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [row["op"] for row in rows][::-1]
    ours = [row["host_us"] for row in rows][::-1]
    binder = [row["binder_us"] for row in rows][::-1]
    figure, axis = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.2))
    axis.barh(names, ours, label="ours (Python, PyTorch, autograd)")
    axis.barh(names, binder, left=ours, label="Triton's binder")
    axis.set_xscale("log")
    axis.set_xlabel("host us per call (CPU, launches recorded; log scale)")
    axis.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.host_time", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--width", type=int, default=64, choices=(16, 32, 64, 128),
                        help="d = n = dv (default: %(default)s)")
    parser.add_argument("--tokens", type=int, default=64, help="tokens per sequence (default: %(default)s)")
    parser.add_argument("--dtype", choices=("fp16", "bf16", "fp32"), default="fp16",
                        help="input dtype (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=1000, help="timed calls per op (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds the timed calls are split into, every op in turn in each (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default: %(default)s)")
    parser.add_argument("--device", default="cpu",
                        help="cpu (the launches recorded, Triton's binder timed apart), or cuda / cuda:I (the "
                             "launches run; Triton's whole launcher and the driver are in 'ours') (default: cpu)")
    parser.add_argument("--ops", nargs="+", choices=[case.name for case in CASES], metavar="OP",
                        default=[case.name for case in CASES], help="ops to time (default: all)")
    parser.add_argument("--out-dir", default="docs/gpu_host",
                        help="folder for host.{json,md,png} (default: %(default)s)")
    parser.add_argument("--overwrite", action="store_true", help="replace host.{json,md,png} already in --out-dir")
    return parser


def main(argv=None) -> int:
    import triton

    from benchmarks.environment import environment_info

    argv = sys.argv[1:] if argv is None else argv
    parser = _parser()
    args = parser.parse_args(argv)
    if args.tokens < 1:
        parser.error(f"--tokens {args.tokens} must be at least 1")
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats} must be at least 1")
    if not 1 <= args.rounds <= args.repeats:
        parser.error(f"--rounds {args.rounds} must be between 1 and --repeats ({args.repeats})")
    paths = {ext: os.path.join(args.out_dir, f"host.{ext}") for ext in ("json", "md", "png")}
    existing = [path for path in paths.values() if os.path.exists(path)]
    if existing and not args.overwrite:
        parser.error(f"{existing[0]} exists: pass --overwrite to replace it, or another --out-dir")
    if "one PyTorch op" not in args.ops:
        args.ops.append("one PyTorch op")  # the scale of the last column
    try:
        device = torch.device(args.device)
    except RuntimeError:
        parser.error(f"--device {args.device!r}: not a torch device (cpu, cuda or cuda:I)")
    if device.type not in ("cpu", "cuda"):
        parser.error(f"--device {args.device}: the tool times cpu or cuda")
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error(f"--device {args.device}: CUDA is not available here")
    torch.set_num_threads(args.threads)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
    rows = measure([case for case in CASES if case.name in args.ops], Problem(args.width, args.tokens, dtype, device),
                   args.repeats, args.rounds)
    for row in rows:
        print(f"{row['op']:16s} {row['launches']} launches, {row['python_calls']:5d} Python calls: ours "
              f"{row['host_us']:8.1f} us, "
              f"Triton's binder {row['binder_us']:6.1f} us", flush=True)
    record = dict(tool="tools.host_time",
                  environment=environment_info("python -m tools.host_time", argv, device=str(device)),
                  triton=triton.__version__, torch_threads=args.threads, device=str(device),
                  sizes=dict(width=args.width, tokens=args.tokens, dtype=args.dtype, repeats=args.repeats,
                             rounds=args.rounds), rows=rows)
    os.makedirs(args.out_dir, exist_ok=True)
    with open(paths["json"], "w") as handle:
        json.dump(record, handle, indent=1)
    text = markdown(rows, record)
    with open(paths["md"], "w") as handle:
        handle.write(text)
    plot(rows, paths["png"])
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
