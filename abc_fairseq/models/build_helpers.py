"""What the model builders share: no hub downloads, fairseq's wrapping of a layer, args as a Namespace."""

import argparse

from fairseq.distributed import fsdp_wrap
from fairseq.modules.checkpoint_activations import checkpoint_wrapper
from omegaconf import DictConfig, OmegaConf


class NoHubModels:
    """Mixed in before a fairseq model: its parent's hub downloads are softmax models, not ABC ones
    (RoBERTa's can be converted: ``abc_fairseq.convert_roberta``)."""

    @classmethod
    def hub_models(cls):
        return {}


def wrap_layer(layer, cfg):
    """Activation checkpointing and FSDP wrapping, as fairseq applies them to its own layers."""
    checkpoint = cfg.checkpoint_activations
    if checkpoint:
        layer = checkpoint_wrapper(layer, offload_to_cpu=cfg.offload_activations)
    # A checkpointed layer is always wrapped, whatever its size (fairseq's rule).
    return fsdp_wrap(layer, min_num_params=0 if checkpoint else cfg.min_params_to_wrap)


def as_namespace(args):
    """fairseq hands argparse models an ``argparse.Namespace``; configs built elsewhere (hydra)
    may arrive as a ``DictConfig``, whose unknown keys ``TransformerConfig.from_namespace`` would
    drop. A Namespace keeps them: they become attributes of the ``TransformerConfig`` that the
    encoder and decoder receive as ``self.args``."""
    if isinstance(args, DictConfig):
        return argparse.Namespace(**OmegaConf.to_container(args, resolve=True))
    return args
