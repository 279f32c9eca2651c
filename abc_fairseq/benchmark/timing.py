"""Wall-clock timing of repeated calls: warmup, then the median of the timed repeats."""

import statistics
import time
from typing import Callable, List, Optional


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
