"""Destroys a gloo default process group before the interpreter shuts down.

fairseq 0.12's ``fairseq-train`` initialises torch.distributed and never destroys the process
group. With the gloo backend (multi-process CPU training), the group's C++ worker threads are
then torn down during interpreter finalisation, and a rank occasionally aborts after training
has finished and saved ("terminate called without an active exception", SIGABRT), which
torchrun reports as a failed run. An ``atexit`` hook runs while the interpreter is still whole
and shuts the group down in order. NCCL groups are left to fairseq: there an exiting rank only
warns, and shutting NCCL down while a peer has failed can block.
"""

import atexit

import torch.distributed as dist

_installed = False


def destroy_gloo_group() -> bool:
    """Destroys the default process group when it exists and uses gloo; returns whether it did."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_backend() != "gloo":
        return False
    dist.destroy_process_group()
    return True


def destroy_gloo_group_at_exit() -> None:
    """Registers ``destroy_gloo_group`` with ``atexit`` (once per process)."""
    global _installed
    if not _installed:
        atexit.register(destroy_gloo_group)
        _installed = True
