"""One measurement in a fresh process, both sides of it. Parent: ``run_worker`` starts
``python -m benchmarks._worker``, writes it the spec (``harness.worker_spec``) and watches its
``@@bench {json}`` progress lines, turning hangs and crashes into results. Child: ``measure`` runs the
builder module's optional ``prime`` (a tiny run, so thread pools and lazy kernels exist before the
baseline), builds the ``Case``, takes the peak memory of a first untimed call, then times ``warmup`` +
``repeats`` calls (``repeats`` 0: the first call's time). Result ``status``: ok, skipped (the builder
raised ``CaseUnavailable``), timeout, oom, error or crashed."""

import importlib
import json
import os
import queue
import random
import resource
import signal
import subprocess
import sys
import threading
import traceback
from collections import deque
from typing import Any, Callable, Dict, NamedTuple, Optional

MARKER = "@@bench "
BUILDER_PACKAGE = __package__ or "benchmarks"
SETUP_SECONDS = 300.0  # from process start to the case being ready: imports, prime, inputs
STDERR_TAIL_CHARS = 1500


class Case(NamedTuple):
    run: Callable[[], None]  # the work, once (e.g. forward + backward); inputs already exist
    info: Dict[str, Any]  # JSON facts reported with the measurement (shapes, ...)


class CaseUnavailable(Exception):
    """The case cannot be built here (no such kernel on this device, ...): reported as skipped."""


def run_worker(spec: dict, call_seconds: Optional[float], setup_seconds: float = SETUP_SECONDS) -> dict:
    """Run one measurement in a subprocess and return its result fields; a worker silent for longer
    than ``setup_seconds`` before its case is ready or ``call_seconds`` after is killed (timeout)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.environ.get("PYTHONPATH")])))
    env.setdefault("MPLBACKEND", "Agg")
    proc = subprocess.Popen([sys.executable, "-m", f"{BUILDER_PACKAGE}._worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    events: "queue.Queue[Optional[dict]]" = queue.Queue()
    stderr_tail: deque = deque(maxlen=200)

    def pump(stream, sink) -> None:
        for line in iter(stream.readline, ""):
            sink(line)
        stream.close()
        sink(None)

    def on_stdout(line: Optional[str]) -> None:
        if line is None or line.startswith(MARKER):
            events.put(line and json.loads(line[len(MARKER):]))

    threads = [threading.Thread(target=pump, args=(proc.stdout, on_stdout), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, lambda line: line and stderr_tail.append(line)),
                                daemon=True)]
    for thread in threads:
        thread.start()
    try:
        proc.stdin.write(json.dumps(spec))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the worker died at once; reported below from its exit code
    result, timeout, stage, ended = None, setup_seconds, "setting up (imports, inputs)", False
    try:
        while True:
            try:
                event = events.get(timeout=timeout)
            except queue.Empty:
                return {"status": "timeout", "message": f"no progress for {timeout:.0f} s while {stage}; worker killed"}
            if event is None:  # end of the worker's stdout: it is exiting
                ended = True
                break
            if event["event"] == "result":
                result = {k: v for k, v in event.items() if k != "event"}
            elif event["event"] == "ready":
                timeout, stage = call_seconds, "running a call"
    finally:
        if not ended:  # timed out or interrupted (e.g. Ctrl-C): do not leave the worker behind
            proc.kill()
        proc.wait()
        for thread in threads:
            thread.join()
    tail = "".join(stderr_tail)[-STDERR_TAIL_CHARS:]
    if result is None:
        code = proc.returncode
        if code >= 0:
            why = f"worker exited with code {code} before reporting a result"
        else:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            why = f"worker killed by {name}" + (" (likely out of memory)" if -code == signal.SIGKILL else "")
        last = next((line.strip() for line in reversed(tail.splitlines()) if line.strip()), "")
        return {"status": "crashed", "message": why + (f": {last}" if last else ""), "stderr_tail": tail}
    if result.get("status") not in ("ok", "skipped"):
        result["stderr_tail"] = tail
    return result


def emit(event: str, **fields) -> None:
    print(MARKER + json.dumps({"event": event, **fields}), flush=True)


def limit_address_space(extra_bytes: int) -> None:
    """Cap further virtual memory at ``extra_bytes`` over the current size (CPU), so that an
    oversized case fails with an allocation error instead of waking the system's OOM killer."""
    try:
        with open("/proc/self/status") as handle:
            fields = dict(line.split(":", 1) for line in handle if ":" in line)
        limit = int(fields["VmSize"].split()[0]) * 1024 + extra_bytes
    except (OSError, KeyError, ValueError):
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))


def measure(spec: dict) -> dict:
    """Run the measurement ``spec`` describes; return the result fields."""
    import torch

    from ._worker import CaseUnavailable  # the class the builders raise: this file runs as __main__
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
    max_seconds, params = spec.get("max_seconds"), spec.get("params", {})
    result = {"threads": torch.get_num_threads(), "device": str(device)}
    module_name, _, function_name = spec["builder"].partition(":")
    if not module_name.startswith(BUILDER_PACKAGE + ".") or not function_name:  # only this package's modules
        raise ValueError(f"builder must look like '{BUILDER_PACKAGE}.module:function', got {spec['builder']!r}")
    module = importlib.import_module(module_name)
    try:
        if hasattr(module, "prime"):
            module.prime(params, device)
        if device.type == "cpu" and spec.get("max_memory_bytes"):
            limit_address_space(int(spec["max_memory_bytes"]))
        case = getattr(module, function_name)(params, device)
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
        text = str(exc).lower()
        oom = isinstance(exc, MemoryError) or "out of memory" in text or "can't allocate memory" in text
        result = {"status": "oom" if oom else "error", "message": f"{type(exc).__name__}: {exc}"[:2000]}
    emit("result", **result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
