"""Probes of one call: its wall time (``timed_call``, ``time_calls``) and its peak memory,
measured as the increase over a baseline taken just before it.

CPU probes (resident set size of this process; run each measurement in a fresh process):

- ``hwm`` (preferred, Linux): write ``5`` to ``/proc/self/clear_refs``, which resets the kernel's
  resident high-water mark (VmHWM) to the current RSS, run the work, then read VmHWM from
  ``/proc/self/status``. The kernel updates the mark before it frees pages, so short spikes are
  caught exactly. Used when the reset is allowed and verified to take effect.
- ``sampler`` (Linux fallback): a background thread reads ``/proc/self/statm`` about every
  millisecond and keeps the maximum; spikes shorter than the sampling period can be missed.
- ``maxrss`` (portable fallback): ``getrusage(RUSAGE_SELF).ru_maxrss`` before and after. It is a
  lifetime peak, so it under-reports when an earlier peak (e.g. while importing) was higher.
- ``tensors`` (deterministic): the peak of bytes held by tensors, replayed from the allocation
  and free events that ``torch.profiler`` records with ``profile_memory=True``, like CUDA's
  ``max_memory_allocated``. It ignores what the process holds outside tensors (freed heap that
  glibc keeps, page-table and library pages), which makes the resident-set probes vary by 10-20%
  between runs, so it is the probe to compare models whose peaks are close.

Before a CPU baseline, ``release_free_heap`` asks glibc to hand freed heap pages back to the OS
(``malloc_trim(0)``), so memory freed while creating inputs does not hide the work's own needs.

CUDA probe: ``torch.cuda.max_memory_allocated`` after ``reset_peak_memory_stats``, minus the
memory allocated at the start (tensors held by the caching allocator, not the driver's view).
"""

import os
import re
import resource
import statistics
import sys
import threading
import time
from typing import Callable, List, Optional

CPU_PROBES = ("auto", "hwm", "sampler", "maxrss", "tensors")
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MIB = 1024 ** 2


def _status_kib(field: str) -> Optional[int]:
    """A ``kB`` field of ``/proc/self/status`` (e.g. VmRSS, VmHWM) in KiB, or None if unreadable."""
    try:
        with open("/proc/self/status") as handle:
            match = re.search(rf"^{field}:\s+(\d+)\s+kB", handle.read(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) if match else None


def current_rss_bytes() -> Optional[int]:
    """Resident set size now, from ``/proc/self/statm``; None where that file does not exist."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * _PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return None


def release_free_heap() -> bool:
    """``malloc_trim(0)`` where the C library is glibc; True if it was called."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        return False
    return True


def _maxrss_bytes() -> int:
    """Lifetime peak RSS from getrusage (KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _reset_hwm() -> bool:
    """Reset VmHWM to the current RSS; True if the reset was allowed and took effect."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    hwm, rss = _status_kib("VmHWM"), _status_kib("VmRSS")
    # Allow a little slack: RSS can grow between the two reads.
    return hwm is not None and rss is not None and hwm <= rss + 1024


class CpuPeakProbe:
    """Peak RSS increase of this process between ``start()`` and ``stop()``, in bytes."""

    def __init__(self, method: str = "auto", sample_seconds: float = 0.001):
        if method not in CPU_PROBES:
            raise ValueError(f"unknown CPU memory probe {method!r}; choose from {CPU_PROBES}")
        self.requested = method
        self.method: Optional[str] = None
        self.sample_seconds = sample_seconds
        self._baseline = 0
        self._peak = 0
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        """Take the baseline and begin watching."""
        method = self.requested
        if method in ("auto", "hwm"):
            if _reset_hwm():
                method = "hwm"
            elif method == "hwm":
                raise RuntimeError("--cpu-memory-probe hwm: cannot reset VmHWM via /proc/self/clear_refs here")
            else:
                method = "sampler" if current_rss_bytes() is not None else "maxrss"
        if method == "sampler" and current_rss_bytes() is None:
            raise RuntimeError("--cpu-memory-probe sampler: /proc/self/statm is not readable here")
        self.method = method
        if method == "hwm":
            self._baseline = _status_kib("VmHWM") * 1024
        elif method == "sampler":
            self._baseline = self._peak = current_rss_bytes()
            self._stop.clear()
            self._thread = threading.Thread(target=self._sample, name="rss-sampler", daemon=True)
            self._thread.start()
        else:
            self._baseline = _maxrss_bytes()

    def _sample(self) -> None:
        while not self._stop.is_set():
            rss = current_rss_bytes()
            if rss is not None and rss > self._peak:
                self._peak = rss
            self._stop.wait(self.sample_seconds)

    def stop(self) -> int:
        """Stop watching; return the peak increase over the baseline in bytes (>= 0)."""
        if self.method == "hwm":
            peak = _status_kib("VmHWM") * 1024
        elif self.method == "sampler":
            self._stop.set()
            self._thread.join()
            peak = max(self._peak, current_rss_bytes() or 0)
        elif self.method == "maxrss":
            peak = _maxrss_bytes()
        else:
            raise RuntimeError("CpuPeakProbe.stop() called before start()")
        return max(0, peak - self._baseline)

    @property
    def baseline_bytes(self) -> int:
        """The reference the increase is measured from (RSS, or lifetime peak for ``maxrss``)."""
        return self._baseline


class CudaPeakProbe:
    """Peak increase of ``torch.cuda.memory_allocated`` between ``start()`` and ``stop()``."""

    method = "cuda_max_memory_allocated"

    def __init__(self, device):
        self.device = device
        self._baseline = 0

    def start(self) -> None:
        import torch

        torch.cuda.synchronize(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)
        self._baseline = torch.cuda.memory_allocated(self.device)

    def stop(self) -> int:
        import torch

        torch.cuda.synchronize(self.device)
        return max(0, torch.cuda.max_memory_allocated(self.device) - self._baseline)

    @property
    def baseline_bytes(self) -> int:
        return self._baseline


class TensorPeakProbe:
    """Peak increase of the bytes held in CPU tensors between ``start()`` and ``stop()``."""

    method = "tensors"

    def __init__(self):
        self._profiler = None

    def start(self) -> None:
        from torch.profiler import ProfilerActivity, profile

        self._profiler = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
        self._profiler.__enter__()

    def stop(self) -> int:
        if self._profiler is None:
            raise RuntimeError("TensorPeakProbe.stop() called before start()")
        self._profiler.__exit__(None, None, None)
        return peak_live_bytes(self._profiler.profiler.kineto_results.events())

    @property
    def baseline_bytes(self) -> int:
        return 0  # the increase is counted from the tensors alive at start()


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
    if cpu_method == "tensors":
        return TensorPeakProbe()
    return CpuPeakProbe(cpu_method)



class CallTooSlow(Exception):
    """One call ran longer than the allowed budget (``--max-seconds``)."""

    def __init__(self, seconds: float, limit: float):
        super().__init__(f"one call took {seconds:.1f} s, over --max-seconds {limit:g}")
        self.seconds = seconds
        self.limit = limit


def timed_call(fn: Callable[[], None], synchronize: Callable[[], None], max_seconds: Optional[float]) -> float:
    """Run ``fn`` once and return its wall time in seconds, ``synchronize`` run before and after
    (a no-op on CPU, ``torch.cuda.synchronize`` on CUDA). Raises ``CallTooSlow`` past ``max_seconds``."""
    synchronize()
    start = time.perf_counter()
    fn()
    synchronize()
    seconds = time.perf_counter() - start
    if max_seconds is not None and seconds > max_seconds:
        raise CallTooSlow(seconds, max_seconds)
    return seconds


def time_calls(
    fn: Callable[[], None],
    repeats: int,
    warmup: int,
    synchronize: Callable[[], None] = lambda: None,
    max_seconds: Optional[float] = None,
    on_call: Callable[[str, float], None] = lambda phase, seconds: None,
) -> List[float]:
    """Run ``warmup`` untimed then ``repeats`` timed calls of ``fn``; return the timed seconds.

    ``on_call(phase, seconds)`` is told about every call ("warmup" or "repeat"), e.g. to report
    progress to a watchdog. Every call, warmup included, must finish within ``max_seconds``.
    """
    for _ in range(warmup):
        on_call("warmup", timed_call(fn, synchronize, max_seconds))
    times = []
    for _ in range(repeats):
        seconds = timed_call(fn, synchronize, max_seconds)
        times.append(seconds)
        on_call("repeat", seconds)
    return times


def median(values: List[float]) -> float:
    """The median of a non-empty list."""
    return statistics.median(values)
