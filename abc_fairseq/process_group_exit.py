"""Destroys gloo process groups before the interpreter shuts down.

fairseq 0.12's ``fairseq-train`` initialises torch.distributed and never destroys its process
groups; it also caches a second group (``get_global_group``) on a function attribute, which keeps
that group alive until interpreter finalisation. With the gloo backend (multi-process CPU
training), a group's backend and its C++ worker threads are then torn down while the interpreter
is being dismantled, and a rank occasionally aborts after training has finished and saved
("terminate called without an active exception", SIGABRT), which torchrun reports as a failed
run. An ``atexit`` hook runs while the interpreter is still whole: it destroys every group, drops
fairseq's cached one and collects the cycles that may still hold one (a trainer, a DDP wrapper),
so the backends shut down in order. NCCL groups are left to fairseq: there an exiting rank only
warns, and shutting NCCL down while a peer has failed can block.
"""

import atexit
import gc
import sys

import torch.distributed as dist


def _release_fairseq_global_group() -> None:
    """Drop the group fairseq caches on ``fairseq.distributed.utils.get_global_group``."""
    getter = getattr(sys.modules.get("fairseq.distributed.utils"), "get_global_group", None)
    if getter is not None and hasattr(getter, "_global_group"):
        del getter._global_group


def destroy_gloo_group() -> bool:
    """Destroys every process group when the default one exists and uses gloo (then releases
    fairseq's cached group and collects garbage); returns whether it did."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_backend() != "gloo":
        return False
    dist.destroy_process_group()  # no argument: every group, the default one included
    _release_fairseq_global_group()
    gc.collect()
    return True


def destroy_gloo_group_at_exit() -> None:
    """Registers ``destroy_gloo_group`` with ``atexit`` (``plugin.install`` does, once, when the
    plugin loads; a second registration would only call it again, and it does nothing without a
    group)."""
    atexit.register(destroy_gloo_group)
