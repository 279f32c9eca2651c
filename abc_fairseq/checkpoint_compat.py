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
