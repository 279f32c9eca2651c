#!/usr/bin/env python3
"""fairseq-train with every W_phi (``PhiProjection``) initialised GAIN times its usual scale: an
experiment of compare_bible.py (issue "ABC translation learns slower than softmax at small scale"),
NOT the paper's model (the paper gives no initialisation; the plugin uses Xavier uniform).

    ABC_PHI_INIT_GAIN=4 python scripts/mt/phi_init_train.py DATA --arch abc_transformer ...

All arguments go to fairseq-train unchanged. compare_bible.py puts a ``fairseq-train`` wrapper that
runs this file first on train.sh's PATH (``install_wrapper``), so the run is otherwise identical.
"""

import os
import stat
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GAIN_VARIABLE = "ABC_PHI_INIT_GAIN"


def patch_phi_init(gain: float):
    """Scale the initial W_phi of every PhiProjection built from now on by ``gain``; returns the
    original ``__init__`` (to undo the patch)."""
    import torch

    from abc_fairseq.strategies.phi import PhiProjection

    original = PhiProjection.__init__

    def scaled_init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        with torch.no_grad():
            self.weight.mul_(gain)

    PhiProjection.__init__ = scaled_init
    return original


def install_wrapper(folder: Path, gain: float, python: str = sys.executable) -> Path:
    """Write ``folder/fairseq-train`` (this harness with the gain set) and ``folder/python`` (runs
    ``python``, for train.sh's checks); returns the folder to put first on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    scripts = {"fairseq-train": f'{GAIN_VARIABLE}={gain!r} exec "{python}" "{Path(__file__).resolve()}" "$@"',
               "python": f'exec "{python}" "$@"'}  # a script, not a link: a venv is found from its own path
    for name, line in scripts.items():
        path = folder / name
        path.write_text(f"#!/bin/sh\n{line}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def main() -> None:
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(f"usage: {GAIN_VARIABLE}=G phi_init_train.py FAIRSEQ_TRAIN_ARGS...\n{__doc__}")
        return
    value = os.environ.get(GAIN_VARIABLE)
    try:
        gain = float(value)
    except (TypeError, ValueError):
        sys.exit(f"phi_init_train.py: ERROR: set {GAIN_VARIABLE} to a positive number (got {value!r})")
    if not gain > 0:
        sys.exit(f"phi_init_train.py: ERROR: {GAIN_VARIABLE} must be positive, got {gain}")
    sys.path.insert(0, str(REPO))
    patch_phi_init(gain)
    from fairseq_cli.train import cli_main

    sys.argv[0] = "fairseq-train"
    cli_main()


if __name__ == "__main__":
    main()
