"""The model families the converter takes, and telling which one a checkpoint holds.

A ``Family`` names the fairseq models it converts from (``transformer_lm``, ``transformer``,
``roberta``, and the plugin's own ``abc_*`` models, e.g. a softmax ``abc_lm``), the plugin model it
converts to, its attention positions with their default strategy and memory, and how to build
the little of a fairseq task its model's ``build_model`` reads (dictionaries of the checkpoint's
vocabulary sizes: ``task_for``). The family modules (``lm``, ``mt``, ``roberta``) define one each.
"""

import argparse
from dataclasses import dataclass
from typing import Callable, Dict, Optional, Tuple

import torch

from .checkpoint_io import ConversionError

StateDict = Dict[str, torch.Tensor]


@dataclass(frozen=True)
class Family:
    """One convertible model family.

    name: the ``--family`` value. label: for messages ("language model").
    source_models: fairseq model names (not architectures) it converts from.
    target_model: the ``abc_*`` model it converts to (also its base architecture).
    defaults: position -> (strategy, memory) when the flags leave them unset, as the target's
        base architecture sets them.
    task_for: (model state dict, model args) -> the task stub ``build_model`` reads; raises
        ConversionError when the state holds no embedding of this family.
    """

    name: str
    label: str
    source_models: Tuple[str, ...]
    target_model: str
    defaults: Dict[object, Tuple[str, int]]
    task_for: Callable[[StateDict, argparse.Namespace], object]

    @property
    def positions(self):
        return tuple(self.defaults)


def made_up_dictionary(size: int):
    """A fairseq ``Dictionary`` of ``size`` entries (fairseq's four specials first: pad index 1,
    as every fairseq model the converter takes was trained with)."""
    from fairseq.data import Dictionary

    dictionary = Dictionary()
    while len(dictionary) < size:
        dictionary.add_symbol(f"madeupword{len(dictionary):06d}")
    return dictionary


class TaskStub:
    """What ``build_model`` reads from a task: dictionaries and the maximum positions."""

    def __init__(self, source_dictionary, target_dictionary=None, max_positions: Optional[int] = None):
        self.source_dictionary = source_dictionary
        self.target_dictionary = target_dictionary if target_dictionary is not None else source_dictionary
        self._max_positions = max_positions

    def max_positions(self):
        return self._max_positions


def first_key(state: StateDict, keys, what: str, family_label: str) -> torch.Tensor:
    """The tensor of the first of ``keys`` present, else a ConversionError saying the checkpoint
    is no ``family_label`` (it lacks ``what``)."""
    for key in keys:
        if key in state:
            return state[key]
    raise ConversionError(f"not a {family_label} checkpoint: its model state has no {what}")


def architecture(args: argparse.Namespace) -> Optional[str]:
    return getattr(args, "arch", None) or getattr(args, "_name", None)


def model_of_architecture(arch: Optional[str]) -> Optional[str]:
    """fairseq's model name of a registered architecture (``transformer_lm_wiki103`` ->
    ``transformer_lm``), None when unknown here."""
    from fairseq.models import ARCH_MODEL_NAME_REGISTRY, MODEL_REGISTRY

    if arch in ARCH_MODEL_NAME_REGISTRY:
        return ARCH_MODEL_NAME_REGISTRY[arch]
    return arch if arch in MODEL_REGISTRY else None


def family_of_keys(state: StateDict, families) -> Optional[Family]:
    """The family a state dict's names point to, for a checkpoint whose architecture is not
    registered here: a RoBERTa sentence encoder, an encoder and a decoder, or a decoder alone."""
    keys = list(state)
    if any(k.startswith(("encoder.sentence_encoder.", "decoder.sentence_encoder.")) for k in keys):
        return families["roberta"]
    has_encoder = any(k.startswith("encoder.layers.") for k in keys)
    has_decoder = any(k.startswith("decoder.layers.") for k in keys)
    if has_encoder and has_decoder:
        return families["mt"]
    if has_decoder:
        return families["lm"]
    return None


def detect(args: argparse.Namespace, state: StateDict, families) -> Tuple[Optional[Family], str]:
    """(family, how it was told) of a checkpoint: from its architecture when fairseq knows it,
    else from its parameter names; (None, why) when neither tells."""
    arch = architecture(args)
    model = model_of_architecture(arch)
    if model is not None:
        for family in families.values():
            if model in family.source_models:
                return family, f"its architecture is {arch!r} (fairseq's {model})"
        return None, f"its architecture is {arch!r} (fairseq's {model}), which no family converts"
    family = family_of_keys(state, families)
    if family is not None:
        return family, f"its parameter names are a {family.label}'s"
    return None, f"its architecture {arch!r} is unknown here and its parameter names match no family"


def target_architecture(source_arch: Optional[str], family: Family) -> str:
    """The plugin architecture matching ``source_arch`` (``transformer_lm_wiki103`` ->
    ``abc_lm_wiki103``, ``roberta_base`` -> ``abc_roberta_base``) when registered, else the
    family's base architecture. Every dimension is the checkpoint's either way: the
    architecture only fills what a configuration lacks."""
    from fairseq.models import ARCH_MODEL_NAME_REGISTRY

    arch = str(source_arch or "")
    if ARCH_MODEL_NAME_REGISTRY.get(arch) == family.target_model:
        return arch
    for source in sorted(family.source_models, key=len, reverse=True):
        if arch == source or arch.startswith(source + "_"):
            candidate = family.target_model + arch[len(source):]
            if ARCH_MODEL_NAME_REGISTRY.get(candidate) == family.target_model:
                return candidate
            break
    return family.target_model
