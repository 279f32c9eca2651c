"""One case in a fresh process: ``python -m benchmarks.worker`` reads its spec on stdin, primes
and builds the suite's ``Case``, takes the peak memory of a first untimed call (``peak_probe``),
times ``warmup`` + ``repeats`` calls and prints one ``@@bench {json}`` line. Status: ok, skipped
(``CaseUnavailable``), timeout (a call over ``--max-seconds``), oom or error."""

import cProfile
import importlib
import io
import json
import pstats
import random
import sys
import time
import traceback
from typing import Callable, List

from .harness import MARKER, CaseUnavailable


class TensorPeakProbe:
    """Peak increase of the bytes held in CPU tensors between ``start()`` and ``stop()``."""

    method = "tensors"

    def start(self) -> None:
        from torch.profiler import ProfilerActivity, profile

        self._profiler = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
        self._profiler.__enter__()

    def stop(self) -> int:
        self._profiler.__exit__(None, None, None)
        return peak_live_bytes(self._profiler.profiler.kineto_results.events())


def peak_live_bytes(events) -> int:
    """Highest running sum of the CPU allocation (+) and free (-) events, in time order, from 0.
    Frees of tensors made before the start count too, so the peak is the increase over them."""
    changes = sorted((event.start_ns(), event.nbytes()) for event in events
                     if event.name() == "[memory]" and str(event.device_type()).endswith("CPU"))
    live = peak = 0
    for _, nbytes in changes:
        live += nbytes
        peak = max(peak, live)
    return peak


class CudaPeakProbe:
    """Peak increase of ``torch.cuda.memory_allocated`` between ``start()`` and ``stop()``."""

    method = "cuda_max_memory_allocated"

    def __init__(self, device):
        from torch import cuda

        self.device, self.cuda = device, cuda

    def start(self) -> None:
        self.cuda.synchronize(self.device)
        self.cuda.reset_peak_memory_stats(self.device)
        self.baseline_bytes = self.cuda.memory_allocated(self.device)

    def stop(self) -> int:
        self.cuda.synchronize(self.device)
        return max(0, self.cuda.max_memory_allocated(self.device) - self.baseline_bytes)


def peak_probe(device, profile_cpu: bool):
    """CUDA: ``max_memory_allocated``; CPU: bytes held in tensors if ``profile_cpu`` (the profiler
    slows the call and logs about 2 KB per allocation), else None."""
    return CudaPeakProbe(device) if device.type == "cuda" else TensorPeakProbe() if profile_cpu else None


def timed_calls(fn: Callable[[], None], count: int, synchronize: Callable[[], None], max_seconds: float) -> List[float]:
    """Wall seconds of ``count`` calls of ``fn``, synchronized; TimeoutError past ``max_seconds``."""
    times = []
    for _ in range(count):
        synchronize()
        start = time.perf_counter()
        fn()
        synchronize()
        times.append(time.perf_counter() - start)
        if times[-1] > max_seconds:
            raise TimeoutError(f"one call took {times[-1]:.1f} s, over --max-seconds {max_seconds:g}")
    return times


def profile_top(run: Callable[[], None], entries: int = 25) -> List[str]:
    """The ``entries`` functions with the most own time in one call of ``run``, file names only."""
    profiler, text = cProfile.Profile(), io.StringIO()
    profiler.runcall(run)
    pstats.Stats(profiler, stream=text).strip_dirs().sort_stats("tottime").print_stats(entries)
    lines = text.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    return [line for line in lines[start:] if line.strip()]


def measure(spec: dict) -> dict:
    """Run the case ``spec`` (written by ``harness.measure``) describes; return the result fields."""
    import torch

    suite = importlib.import_module(f"{__package__}.{spec['suite']}").SUITE
    device, max_seconds = torch.device(spec["device"]), spec["max_seconds"]
    if spec["threads"]:
        torch.set_num_threads(spec["threads"])
    random.seed(spec["seed"])
    torch.manual_seed(spec["seed"])
    if device.type == "cuda":
        device = torch.device("cuda", torch.cuda.current_device() if device.index is None else device.index)
        torch.cuda.set_device(device)
    synchronize = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    result = {"threads": torch.get_num_threads(), "device": str(device)}
    try:
        suite.prime(spec["params"], device)
        case = suite.build_case(spec["params"], device)
    except CaseUnavailable as exc:
        return {**result, "status": "skipped", "message": str(exc)}
    result["info"], probe = case.info, peak_probe(device, profile_cpu=suite.cpu_peak and spec["repeats"] > 0)
    try:
        if probe:
            probe.start()
        try:
            result["first_call_s"] = timed_calls(case.run, 1, synchronize, max_seconds)[0]
        finally:
            if probe:
                result.update(peak_bytes=probe.stop(), memory_probe=probe.method)
        if not spec["repeats"]:
            result.update(timed_call="first", times_s=[result["first_call_s"]])
        else:
            timed_calls(case.run, spec["warmup"], synchronize, max_seconds)
            result["times_s"] = timed_calls(case.run, spec["repeats"], synchronize, max_seconds)
    except TimeoutError as exc:
        return {**result, "status": "timeout", "message": str(exc)}
    if spec["profile"]:
        result["profile"] = profile_top(case.run)
    return {**result, "status": "ok"}


def main() -> int:
    """Read the spec from stdin, measure, print the result; exit 0 even when the case failed."""
    try:
        result = measure(json.loads(sys.stdin.read()))
    except Exception as exc:  # reported to the parent, which prints it in the table notes
        traceback.print_exc()
        text = str(exc).lower()
        oom = isinstance(exc, MemoryError) or "out of memory" in text or "can't allocate memory" in text
        result = {"status": "oom" if oom else "error", "message": f"{type(exc).__name__}: {exc}"[:2000]}
    print(MARKER + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
