"""The causal kernels' chunk, chosen by measurement on the device (as ``triton.autotune`` chooses a
config): the first call of a size class times one forward + backward of the kernels at every
candidate chunk (``sizes.chunk_candidates``: the chunks whose kernels fit the device's shared
memory) on its own inputs, and every later call of that class takes the fastest.

A size class is the op (ABC or GSA), the device, the padded widths, the input class (fp32 or
half) and the power of two above N: the best chunk moves with N (at long N the sequential scans
favour large chunks).
A candidate that fails to compile or launch is skipped; when every one fails the failure is
raised (``ops.backend`` then falls back to PyTorch under "auto"). One candidate: no timing.
"""

import logging
import time
from typing import Callable, Dict, Sequence, Tuple

import torch

logger = logging.getLogger(__name__)
_chosen: Dict[Tuple, int] = {}
REPEATS = 2  # timed trials per candidate after one untimed (compiling) trial


def size_class(op: str, device: torch.device, widths: Sequence[int], dtype: torch.dtype, N: int) -> Tuple:
    """The key the choice is kept under."""
    return (op, str(device), tuple(widths), dtype == torch.float32, max(N - 1, 1).bit_length())


def _elapsed(trial: Callable[[], None], device: torch.device) -> float:
    """Seconds of one trial: CUDA events on a GPU, the wall clock elsewhere (the interpreter)."""
    if device.type != "cuda":
        start = time.perf_counter()
        trial()
        return time.perf_counter() - start
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    trial()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def tuned_chunk(candidates: Sequence[int], key: Tuple, device: torch.device,
                trial: Callable[[int], None]) -> int:
    """The fastest of ``candidates`` for ``key`` (measured once, then kept): ``trial(chunk)`` runs
    the kernels at that chunk, timed by ``_elapsed``."""
    if len(candidates) == 1:
        return candidates[0]
    if key in _chosen:
        return _chosen[key]
    times, failure = {}, None
    for chunk in candidates:
        run = lambda: trial(chunk)  # noqa: E731
        try:
            run()  # compiles, and finds what cannot launch here
        except Exception as error:  # noqa: BLE001 (a candidate the device refuses is skipped)
            logger.info("causal kernels, %s: chunk %d cannot run here (%s)", key, chunk, error)
            failure = error
            continue
        times[chunk] = min(_elapsed(run, device) for _ in range(REPEATS))
    if not times:
        raise failure
    best = min(times, key=times.get)
    logger.info("causal kernels, %s: chunk %d (measured ms: %s)", key, best,
                ", ".join(f"{c}: {t * 1e3:.3f}" for c, t in sorted(times.items())))
    _chosen[key] = best
    return best


def chosen() -> Dict[Tuple, int]:
    """The chunks measured so far in this process, by size class (the self-check reports them)."""
    return dict(_chosen)


def forget() -> None:
    """Forget the measured choices (tests; a process that changed device)."""
    _chosen.clear()
