"""Facts about the machine and software a benchmark ran on, for its JSON record."""

import datetime
import os
import platform
import shlex
import subprocess
from importlib import metadata
from typing import List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_model() -> str:
    """The CPU's name from /proc/cpuinfo, else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as handle:
            return next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine() or "unknown"


def git_commit() -> Optional[str]:
    """The checkout's commit (with ``-dirty`` when tracked files differ from it), or None."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()

    try:
        commit, dirty = git("rev-parse", "HEAD"), git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return (commit + ("-dirty" if dirty else "")) or None


def fairseq_version() -> Optional[str]:
    """The installed fairseq distribution and version (this project installs ``ve-fairseq``)."""
    for dist in ("ve-fairseq", "fairseq"):
        try:
            return f"{dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            pass
    return None


def environment_info(prog: str, argv: List[str], device: str = "cpu") -> dict:
    """Versions, processor, threads, date, the load (other work skews timings), the command line and
    the attention's switches set in the environment (``ABC_BACKEND``, ``ABC_TRITON_*``)."""
    import torch

    info = {"commit": git_commit(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": shlex.join(prog.split() + list(argv)), "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.release()} {platform.machine()}", "torch": torch.__version__,
            "fairseq": fairseq_version(), "torch_default_threads": torch.get_num_threads(), "cpu_model": cpu_model(),
            "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "load_average": list(os.getloadavg()),
            # the attention's own switches (backend, forced chunk, scan group): which variant was timed
            "abc_variables": {name: value for name, value in sorted(os.environ.items())
                              if name == "ABC_BACKEND" or name.startswith("ABC_TRITON_")}}
    if device.startswith("cuda") and torch.cuda.is_available():
        info.update(cuda_device=torch.cuda.get_device_name(torch.device(device)), cuda_version=torch.version.cuda)
    return info
