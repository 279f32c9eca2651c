"""Facts about the machine and software a benchmark ran on, for its JSON record."""

import datetime
import os
import platform
import shlex
from typing import List, Optional


def cpu_model() -> str:
    """The CPU's name from /proc/cpuinfo (``model name``, or ARM's ``Hardware``/``CPU part``)."""
    try:
        with open("/proc/cpuinfo") as handle:
            fields = [line.split(":", 1) for line in handle if ":" in line]
    except OSError:
        return platform.processor() or platform.machine() or "unknown"
    for key in ("model name", "Hardware", "Processor", "CPU part"):
        for name, value in fields:
            if name.strip() == key and value.strip():
                return value.strip()
    return platform.processor() or platform.machine() or "unknown"


def command_line(prog: str, argv: List[str]) -> str:
    """The command as a user would type it, e.g. ``python -m benchmarks attention ...``."""
    return shlex.join(prog.split() + list(argv))


def git_commit() -> Optional[str]:
    """The checkout's commit (with ``-dirty`` when tracked files differ from it), or None."""
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (commit + ("-dirty" if dirty else "")) or None


def _version(module_name: str) -> Optional[str]:
    try:
        module = __import__(module_name)
    except Exception:
        return None
    return getattr(module, "__version__", "unknown")


def environment_info(prog: str, argv: List[str], device: str = "cpu") -> dict:
    """Versions, CPU, threads, date and command line."""
    import torch

    try:
        usable_cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        usable_cpus = os.cpu_count()
    info = {
        "commit": git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command_line(prog, argv),
        "argv": list(argv),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        "torch": torch.__version__,
        "fairseq": _version("fairseq"),
        "numpy": _version("numpy"),
        "torch_default_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": usable_cpus,
        "cuda_available": torch.cuda.is_available(),
        # Other work on the machine skews timings; the load when the run started tells how much.
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
    if device.startswith("cuda") and torch.cuda.is_available():
        info["cuda_device"] = torch.cuda.get_device_name(torch.device(device))
        info["cuda_version"] = torch.version.cuda
    return info

