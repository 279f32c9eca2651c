"""Refuse a truncated checkpoint with a way out, instead of a miniz traceback (or a silent fallback).

fairseq 0.12 saves a checkpoint once (``checkpoint<EPOCH>.pt`` or ``checkpoint_<E>_<U>.pt``) and then
*copies* it to ``checkpoint_last.pt`` and ``checkpoint_best.pt`` (``PathManager.copy``, not atomic).
A run killed during that copy leaves a truncated ``checkpoint_last.pt``, and the next run, which
resumes from it by default (``checkpoint_utils.load_checkpoint`` -> ``Trainer.load_checkpoint`` ->
``checkpoint_utils.load_checkpoint_to_cpu`` -> ``torch.load``), fails deep inside torch's zip reader.

The plugin cannot change fairseq's resume logic without forking it, and a check when the plugin is
loaded would run before the save folder is known. Like ``checkpoint_compat`` (which extends torch's
loader), ``guard_checkpoint_loading``, called by ``plugin.install`` when the plugin loads, wraps
the one function every fairseq tool loads checkpoints through: when loading fails and the file is a
damaged archive, the error names the file and the newest intact checkpoint next to it, with the
``--restore-file`` to pass. Nothing is resumed silently from an older checkpoint, and the damaged
file is left untouched.
"""

import functools
import glob
import logging
import os
import zipfile
from typing import Optional

logger = logging.getLogger(__name__)

ZIP_MAGIC = b"PK\x03\x04"  # torch.save writes zip archives (since torch 1.6)


class DamagedCheckpointError(RuntimeError):
    """A checkpoint file that is an incomplete or corrupt archive."""


def is_intact(path: str) -> bool:
    """Whether ``path`` is a complete zip archive whose members all pass their CRC check (reads
    the whole file: call it on the failure path, not before every load)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return archive.testzip() is None
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError):
        return False


def is_damaged(path: str) -> bool:
    """An empty file, or one that starts as torch's zip archive but is not a complete one."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(ZIP_MAGIC))
    except OSError:
        return False
    return head == b"" or (head == ZIP_MAGIC and not is_intact(path))


def newest_intact_checkpoint(damaged: str) -> Optional[str]:
    """The most recently written intact ``checkpoint*.pt`` in the folder of ``damaged`` (not
    ``damaged`` itself), or None."""
    folder = os.path.dirname(os.path.abspath(damaged))
    candidates = [p for p in glob.glob(os.path.join(folder, "checkpoint*.pt"))
                  if os.path.isfile(p) and not os.path.samefile(p, damaged)]
    for path in sorted(candidates, key=os.path.getmtime, reverse=True):
        if is_intact(path):
            return path
    return None


def damage_report(path: str) -> str:
    """What to tell the user about the damaged checkpoint ``path``."""
    message = (f"{path} is truncated or corrupt (an incomplete checkpoint archive: was a run "
               f"killed while fairseq wrote or copied it?). It was left as it is. ")
    intact = newest_intact_checkpoint(path)
    if intact is None:
        return message + (f"No intact checkpoint*.pt is left in {os.path.dirname(os.path.abspath(path))}: "
                          f"move {path} aside to start over.")
    return message + (f"The newest intact checkpoint there is {intact}: resume from it with "
                      f"--restore-file {intact} (or move {path} aside and copy {intact} in its place).")


def guard_checkpoint_loading() -> bool:
    """Wrap ``fairseq.checkpoint_utils.load_checkpoint_to_cpu`` so that a damaged checkpoint
    raises ``DamagedCheckpointError`` naming the newest intact one. Idempotent; returns False
    when fairseq is not installed."""
    try:
        from fairseq import checkpoint_utils
    except ImportError:
        return False
    original = checkpoint_utils.load_checkpoint_to_cpu
    if getattr(original, "abc_fairseq_guarded", False):
        return True

    @functools.wraps(original)
    def load_checkpoint_to_cpu(path, *args, **kwargs):
        try:
            return original(path, *args, **kwargs)
        except Exception as error:
            if not (isinstance(path, (str, os.PathLike)) and os.path.isfile(path) and is_damaged(path)):
                raise
            report = damage_report(path)
            logger.error(report)
            raise DamagedCheckpointError(report) from error

    load_checkpoint_to_cpu.abc_fairseq_guarded = True
    checkpoint_utils.load_checkpoint_to_cpu = load_checkpoint_to_cpu
    return True
