"""Probes of one call: its wall time (``timed_call``, ``time_calls``) and its peak memory, the
increase over a baseline taken just before it (``peak_probe``; each case runs in a fresh process).
CPU (``--cpu-memory-probe``): ``hwm`` (the kernel's VmHWM, reset via ``/proc/self/clear_refs``),
``sampler`` (``/proc/self/statm`` every millisecond), ``maxrss`` (``getrusage``), ``tensors`` (bytes
in tensors, replayed from ``torch.profiler``; deterministic); CUDA: ``max_memory_allocated``. How each
works and which to use: docs/benchmarks.md."""

import os
import re
import resource
import sys
import threading
import time
from typing import Callable, List, Optional

CPU_PROBES = ("auto", "hwm", "sampler", "maxrss", "tensors")
MIB = 1024 ** 2
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _status_bytes(field: str) -> Optional[int]:
    """A ``kB`` field of ``/proc/self/status`` (VmRSS, VmHWM) in bytes, or None if unreadable."""
    try:
        with open("/proc/self/status") as handle:
            match = re.search(rf"^{field}:\s+(\d+)\s+kB", handle.read(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) * 1024 if match else None


def current_rss_bytes() -> Optional[int]:
    """Resident set size now, from ``/proc/self/statm``; None where it cannot be read."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * _PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return None


def release_free_heap() -> None:
    """``malloc_trim(0)`` on glibc: heap freed while making the inputs goes back to the OS before a
    CPU baseline, where it would hide the work's own needs."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


def _maxrss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # KiB on Linux


def _reset_hwm() -> bool:
    """Reset VmHWM to the current RSS; True if the reset was allowed and took effect."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    hwm, rss = _status_bytes("VmHWM"), _status_bytes("VmRSS")
    return hwm is not None and rss is not None and hwm <= rss + 2 ** 20  # RSS may grow between the reads


class CpuPeakProbe:
    """Peak RSS increase of this process between ``start()`` and ``stop()``, in bytes."""

    def __init__(self, method: str = "auto", sample_seconds: float = 0.001):
        self.method, self.sample_seconds, self.baseline_bytes = method, sample_seconds, 0
        self._peak, self._stop, self._thread = 0, threading.Event(), None

    def _read(self) -> Optional[int]:
        if self.method == "hwm":
            return _status_bytes("VmHWM")
        return current_rss_bytes() if self.method == "sampler" else _maxrss_bytes()

    def start(self) -> None:
        """Resolve ``auto`` (hwm where it can be reset, else sampler or maxrss), take the baseline."""
        if self.method in ("auto", "hwm") and _reset_hwm():
            self.method = "hwm"
        elif self.method == "hwm":
            raise RuntimeError("--cpu-memory-probe hwm: cannot reset VmHWM via /proc/self/clear_refs here")
        elif self.method == "auto":
            self.method = "sampler" if current_rss_bytes() is not None else "maxrss"
        if self.method == "sampler" and current_rss_bytes() is None:
            raise RuntimeError("--cpu-memory-probe sampler: /proc/self/statm is not readable here")
        self.baseline_bytes = self._peak = self._read()
        if self.method == "sampler":
            self._thread = threading.Thread(target=self._sample, name="rss-sampler", daemon=True)
            self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self._peak = max(self._peak, current_rss_bytes() or 0)
            self._stop.wait(self.sample_seconds)

    def stop(self) -> int:
        """Stop watching; the peak increase over the baseline in bytes (>= 0)."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        return max(0, max(self._peak, self._read() or 0) - self.baseline_bytes)


class CudaPeakProbe:
    """Peak increase of ``torch.cuda.memory_allocated`` between ``start()`` and ``stop()``."""

    method = "cuda_max_memory_allocated"

    def __init__(self, device):
        self.device, self.baseline_bytes = device, 0

    def start(self) -> None:
        from torch import cuda

        cuda.synchronize(self.device)
        cuda.reset_peak_memory_stats(self.device)
        self.baseline_bytes = cuda.memory_allocated(self.device)

    def stop(self) -> int:
        from torch import cuda

        cuda.synchronize(self.device)
        return max(0, cuda.max_memory_allocated(self.device) - self.baseline_bytes)


class TensorPeakProbe:
    """Peak increase of the bytes held in CPU tensors between ``start()`` and ``stop()``; the
    baseline is the tensors alive at ``start()``."""

    method, baseline_bytes = "tensors", 0

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


def peak_probe(device, cpu_method: str = "auto"):
    """The probe for ``device`` (a ``torch.device``)."""
    if device.type == "cuda":
        return CudaPeakProbe(device)
    return TensorPeakProbe() if cpu_method == "tensors" else CpuPeakProbe(cpu_method)


class CallTooSlow(Exception):
    """One call ran longer than the allowed budget (``--max-seconds``)."""

    def __init__(self, seconds: float, limit: float):
        super().__init__(f"one call took {seconds:.1f} s, over --max-seconds {limit:g}")


def timed_call(fn: Callable[[], None], synchronize: Callable[[], None], max_seconds: Optional[float]) -> float:
    """``fn``'s wall time in seconds, ``synchronize`` run before and after; ``CallTooSlow`` past ``max_seconds``."""
    synchronize()
    start = time.perf_counter()
    fn()
    synchronize()
    seconds = time.perf_counter() - start
    if max_seconds is not None and seconds > max_seconds:
        raise CallTooSlow(seconds, max_seconds)
    return seconds


def time_calls(fn: Callable[[], None], repeats: int, warmup: int, synchronize: Callable[[], None],
               max_seconds: Optional[float], on_call: Callable[[str, float], None]) -> List[float]:
    """``warmup`` untimed then ``repeats`` timed calls of ``fn``, each within ``max_seconds``; returns
    the timed seconds. ``on_call(phase, seconds)`` hears of every call ("warmup" or "repeat")."""
    for _ in range(warmup):
        on_call("warmup", timed_call(fn, synchronize, max_seconds))
    times = []
    for _ in range(repeats):
        times.append(timed_call(fn, synchronize, max_seconds))
        on_call("repeat", times[-1])
    return times
