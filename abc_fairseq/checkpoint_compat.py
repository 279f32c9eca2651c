"""Let fairseq load its own checkpoints under torch >= 2.6 (``torch.load(weights_only=True)``).

Since torch 2.6, ``torch.load`` defaults to ``weights_only=True``: it unpickles only tensors,
primitive containers and explicitly allowed globals. fairseq 0.12 calls ``torch.load`` without
``weights_only`` in two places that read more than tensors:

1. ``checkpoint_utils.load_checkpoint_to_cpu`` (fairseq-generate, -interactive, -eval-lm, resuming
   training): checkpoints of models registered the argparse way (``transformer`` for translation,
   and any checkpoint that kept ``args``) store an ``argparse.Namespace``. Checkpoints of
   dataclass models (``transformer_lm``, ``abc_lm``) hold only primitives and load as they are.
2. ``distributed.utils.broadcast_object`` (resuming multi-process training): rank 0 loads the
   checkpoint, converts its config to an omegaconf ``DictConfig`` and pickles it to the other
   ranks, which unpickle it with ``torch.load``. That stream holds omegaconf's containers and
   nodes, ``typing.Any`` (their type annotations), a few builtin types, and fairseq's tensor
   placeholders.

The alternatives are worse: ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` or patching ``torch.load`` to
``weights_only=False`` re-enables arbitrary code execution for every file the process loads.
Instead this module adds exactly the globals found in those two streams (each verified by
loading real LM and translation checkpoints and the resume broadcast) to torch's allowlist with
``torch.serialization.add_safe_globals``. All of them are data holders whose unpickling runs no
code beyond building the container; the loader stays weights-only for every other global.
"""

import argparse
import collections
import logging
import os
import typing

import torch

logger = logging.getLogger(__name__)


def fairseq_checkpoint_globals() -> list:
    """The globals fairseq checkpoints and checkpoint broadcasts need (see the module doc)."""
    from fairseq.distributed.utils import _TensorPlaceholder
    from omegaconf import DictConfig, ListConfig
    from omegaconf.base import ContainerMetadata, Metadata
    from omegaconf.nodes import AnyNode

    return [
        argparse.Namespace,  # cfg.model / args of argparse-registered models
        # resume broadcast: the DictConfig of the loaded checkpoint and its tensor placeholders
        DictConfig,
        ListConfig,
        ContainerMetadata,
        Metadata,
        AnyNode,
        typing.Any,
        dict,
        list,
        int,
        collections.defaultdict,
        _TensorPlaceholder,
    ]


def allow_fairseq_checkpoints() -> bool:
    """Register the globals with torch's weights-only unpickler; returns False when this torch
    has no allowlist (before 2.4, where ``torch.load`` is not weights-only by default)."""
    add_safe_globals = getattr(torch.serialization, "add_safe_globals", None)
    if add_safe_globals is None:
        return False
    add_safe_globals(fairseq_checkpoint_globals())
    return True


class CheckpointLoadError(RuntimeError):
    """A checkpoint file that the weights-only loader cannot read; the message says why."""


def load_error_detail(error: BaseException) -> str:
    """The specific part of a torch.load error (torch's weights-only message wraps it in advice
    to re-run with ``weights_only=False``, which is wrong for a file that is no checkpoint)."""
    text = str(error)
    marker = "WeightsUnpickler error:"
    if marker in text:
        text = text.split(marker, 1)[1].split("Check the documentation of torch.load", 1)[0]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def refused_global(error: BaseException) -> bool:
    """Whether a weights-only ``torch.load`` failed only because the pickle names a global outside
    the allowlist (a real checkpoint holding other objects), not because the file is no pickle."""
    return "Unsupported global" in str(error)


def load_checkpoint_file(path: str) -> dict:
    """``torch.load(path)`` on CPU with the weights-only unpickler and the fairseq allowlist, as
    the fairseq command-line tools load under the plugin. Raises CheckpointLoadError naming the
    file: damaged (with the newest intact checkpoint beside it), refused objects, or not a
    checkpoint at all."""
    from .checkpoint_integrity import damage_report, is_damaged

    allow_fairseq_checkpoints()
    if not os.path.isfile(path):
        raise CheckpointLoadError(f"{path}: no such file")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        if is_damaged(path):
            raise CheckpointLoadError(damage_report(path)) from error
        if refused_global(error):
            raise CheckpointLoadError(
                f"{path} holds Python objects outside the allowlist of torch's weights-only loader "
                f"({load_error_detail(error)})") from error
        raise CheckpointLoadError(f"{path} is not a torch checkpoint ({load_error_detail(error)})") from error
