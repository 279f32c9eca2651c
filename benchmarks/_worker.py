"""Subprocess side of one measurement: ``python -m benchmarks._worker < spec.json``.

The spec (see ``harness.worker_spec``) names a builder ``module:function`` of this package and its
params. The worker sets threads and seed, runs the module's optional ``prime(params, device)`` (a
tiny run, so thread pools and lazy kernels exist before the baseline), builds the ``Case`` (or the
builder raises ``CaseUnavailable``: skipped), measures the peak memory of a first, untimed call
over the baseline after the inputs exist, then times ``warmup`` untimed and ``repeats`` timed calls
(``repeats`` 0: the first call's own time, for cases that run for minutes). Progress lines
``@@bench {json}`` on stdout let the parent (``runner``) watch for hangs; the last is the
``result``, with a ``status``: ok, timeout, oom, skipped or error."""

import importlib
import json
import random
import resource
import sys
import traceback
from typing import Any, Callable, Dict, NamedTuple


class Case(NamedTuple):
    """One measurable unit of work whose inputs already exist.

    run:  does the work once (e.g. forward + backward); the result is discarded.
    info: JSON-serialisable facts to report with the measurement (shapes, notes, ...).
    """

    run: Callable[[], None]
    info: Dict[str, Any]


class CaseUnavailable(Exception):
    """The case cannot be built here (a module not written yet, no such kernel on this device).
    Reported as ``skipped``, not as an error."""


MARKER = "@@bench "
BUILDER_PACKAGE = __package__ or "benchmarks"


def emit(event: str, **fields) -> None:
    """Print one progress line for the parent."""
    print(MARKER + json.dumps({"event": event, **fields}), flush=True)


def load_builder(path: str):
    """Import ``module:function``; only modules of this package are allowed."""
    module_name, _, function_name = path.partition(":")
    if not module_name.startswith(BUILDER_PACKAGE + ".") or not function_name:
        raise ValueError(f"builder must look like '{BUILDER_PACKAGE}.module:function', got {path!r}")
    module = importlib.import_module(module_name)
    return module, getattr(module, function_name)


def limit_address_space(extra_bytes: int) -> None:
    """Cap further virtual memory at ``extra_bytes`` over the current size, so an oversized case
    fails with an allocation error instead of waking the system's OOM killer (CPU only)."""
    try:
        with open("/proc/self/status") as handle:
            fields = dict(line.split(":", 1) for line in handle if ":" in line)
        current = int(fields["VmSize"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = current + extra_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def classify(exc: BaseException) -> str:
    """``oom`` for allocation failures, ``error`` otherwise."""
    text = str(exc).lower()
    if isinstance(exc, MemoryError) or "out of memory" in text or "can't allocate memory" in text:
        return "oom"
    return "error"


def measure(spec: dict) -> dict:
    """Run the measurement described by ``spec``; return the result fields."""
    import torch

    from ._worker import CaseUnavailable  # the class suites raise: this file runs as __main__
    from .probes import MIB, CallTooSlow, peak_probe, release_free_heap, time_calls, timed_call

    device = torch.device(spec.get("device", "cpu"))
    if spec.get("threads"):
        torch.set_num_threads(int(spec["threads"]))
    random.seed(spec.get("seed", 0))
    torch.manual_seed(spec.get("seed", 0))
    synchronize = lambda: None  # noqa: E731
    if device.type == "cuda":
        if device.index is None:  # "cuda" means the current device; set_device needs an index
            device = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(device)
        synchronize = lambda: torch.cuda.synchronize(device)  # noqa: E731
    max_seconds = spec.get("max_seconds")
    result = {"threads": torch.get_num_threads(), "device": str(device)}
    module, build_case = load_builder(spec["builder"])
    params = spec.get("params", {})
    try:
        if hasattr(module, "prime"):
            module.prime(params, device)
        if device.type == "cpu" and spec.get("max_memory_bytes"):
            limit_address_space(int(spec["max_memory_bytes"]))
        case = build_case(params, device)
    except CaseUnavailable as exc:
        return {**result, "status": "skipped", "message": str(exc)}
    result["info"] = case.info
    emit("ready", info=case.info)

    probe = peak_probe(device, spec.get("cpu_memory_probe", "auto"))
    if device.type == "cpu":
        release_free_heap()
    probe.start()
    try:
        first = timed_call(case.run, synchronize, max_seconds)
    except CallTooSlow as exc:
        return {**result, "status": "timeout", "message": str(exc), "peak_bytes": probe.stop(),
                "memory_probe": probe.method}
    peak = probe.stop()
    result.update(peak_bytes=peak, peak_mib=peak / MIB, memory_probe=probe.method,
                  baseline_mib=probe.baseline_bytes / MIB, first_call_s=first)
    emit("memory", peak_mib=peak / MIB, first_call_s=first)
    if not spec.get("repeats", 1):
        return {**result, "status": "ok", "times_s": [first], "timed_call": "first"}
    try:
        times = time_calls(case.run, int(spec.get("repeats", 1)), int(spec.get("warmup", 0)), synchronize,
                           max_seconds, on_call=lambda phase, seconds: emit("call", phase=phase, seconds=seconds))
    except CallTooSlow as exc:
        return {**result, "status": "timeout", "message": str(exc)}
    return {**result, "status": "ok", "times_s": times}


def main() -> int:
    """Read the spec from stdin, measure, report; exit 0 even when the case failed."""
    spec = json.loads(sys.stdin.read())
    emit("started")
    try:
        result = measure(spec)
    except Exception as exc:  # reported to the parent, which prints it in the table notes
        traceback.print_exc()
        result = {"status": classify(exc), "message": f"{type(exc).__name__}: {exc}"[:2000]}
    emit("result", **result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
