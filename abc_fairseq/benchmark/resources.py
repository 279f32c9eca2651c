"""Flags and checks every benchmark subcommand shares: device, memory cap, memory probe, outputs."""

import argparse
import os
from typing import Optional

from . import cli_types
from .memory import CPU_PROBES

DEFAULT_MEMORY_FRACTION = 0.8  # of MemAvailable, the default --max-memory-gib


def mem_available_bytes() -> Optional[int]:
    """MemAvailable from /proc/meminfo, or None where it cannot be read."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def add_output_flags(parser: argparse.ArgumentParser, name: str, cpu_memory_probe: str = "auto") -> None:
    """--max-memory-gib, --cpu-memory-probe (default ``cpu_memory_probe``), --out-dir and
    --no-plot; ``name`` names the files."""
    parser.add_argument("--max-memory-gib", type=cli_types.non_negative_float, default=None,
                        help="CPU only: cap each worker's extra address space so an oversized case fails "
                             "as oom instead of invoking the system's OOM killer; 0 disables "
                             f"(default: {DEFAULT_MEMORY_FRACTION:g} x MemAvailable at start)")
    parser.add_argument("--cpu-memory-probe", choices=CPU_PROBES, default=cpu_memory_probe,
                        help="how CPU peak memory is measured (see abc_fairseq/benchmark/memory.py): "
                             "hwm = kernel high-water mark reset via /proc/self/clear_refs, sampler = "
                             "1 ms /proc/self/statm polling, maxrss = getrusage; auto = hwm if possible; "
                             "tensors = peak bytes held in tensors, from torch.profiler's allocation events "
                             "(deterministic; ignores memory held outside tensors)")
    parser.add_argument("--out-dir", default=os.path.join("benchmark_results", name),
                        help=f"directory for {name}.json, {name}.md and {name}.png")
    parser.add_argument("--no-plot", action="store_true", help=f"do not write {name}.png")


def check_device_and_memory(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Reject an unusable --device (naming it) and resolve the default --max-memory-gib."""
    import torch

    try:
        device = torch.device(args.device)
    except RuntimeError as exc:
        parser.error(f"--device {args.device!r}: {exc}")
    if device.type not in ("cpu", "cuda"):
        parser.error(f"--device must be cpu or cuda[:index], got {args.device!r}")
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error(f"--device {args.device}: CUDA is not available on this machine")
    if args.max_memory_gib is None:
        available = mem_available_bytes()
        args.max_memory_gib = DEFAULT_MEMORY_FRACTION * available / 2 ** 30 if available else 0.0
