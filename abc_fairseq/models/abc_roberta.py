"""``abc_roberta``: fairseq's RoBERTa whose encoder self attention is bounded-memory attention.

The model is fairseq's ``roberta`` (same embeddings, layers, LM head, classification heads and
parameter names); only the self attention of the sentence encoder changes, chosen on the
command line:

- ``--encoder-attn abc --encoder-memory N``: ABC_MLP (Peng et al.) with N slots, one W_phi
  (``encoder.sentence_encoder.self_attn_phi``, ``embed_dim -> heads x N``) shared by all layers;
- any other registered strategy (``linformer``, ``abc-relu``, ``window``, ...) the same way;
- ``--encoder-attn softmax``: fairseq's RoBERTa, parameter for parameter.

Architectures (values given on the command line win):

- ``abc_roberta`` / ``abc_roberta_base``: RoBERTa-base (12 layers, dim 768, 12 heads, FFN 3072,
  dropout 0.1), ABC with 64 slots (the paper also uses 128).
- ``abc_roberta_large``: RoBERTa-large (24 layers, dim 1024, 16 heads, FFN 4096), ABC 64.
- ``abc_roberta_tiny``: 2 layers, dim 64, 4 heads, FFN 128, ABC 16, for tests and CI.

Warm start from a pretrained (softmax) RoBERTa checkpoint: ``upgrade_state_dict_named`` adds the
control parameters the checkpoint lacks (W_phi, and the parameters of other strategies) with
their fresh initialisation, the way ``RobertaModel`` adds missing classification heads, so that
fairseq's strict loading (``--restore-file roberta.base/model.pt``) succeeds. Every pretrained
tensor is loaded unchanged under its name; a checkpoint missing any other parameter, or with
other shapes, is refused with an error naming the keys (see ``abc_fairseq.convert_roberta``).
"""

import logging
from typing import Dict, List

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.roberta import RobertaModel
from fairseq.models.roberta.model import RobertaEncoder, roberta_large_architecture
from fairseq.models.roberta.model import base_architecture as roberta_base_architecture
from fairseq.modules.transformer_sentence_encoder import init_bert_params
from fairseq.utils import safe_getattr, safe_hasattr

from ..modules import log_phi_parameter_overhead
from ..strategies import ControlModule
from .abc_encoder import ABCTransformerEncoder
from .abc_options import ENCODER_SELF, add_abc_args, set_abc_defaults
from .build_helpers import NoHubModels, as_namespace

logger = logging.getLogger(__name__)

# A parameter every RoBERTa checkpoint has (after fairseq's renames): the test for "RoBERTa-shaped".
EMBED_KEY = "encoder.sentence_encoder.embed_tokens.weight"


class RobertaCheckpointError(ValueError):
    """A state dict that cannot be loaded into ``abc_roberta`` (not RoBERTa, or other dimensions)."""


class ABCRobertaEncoder(RobertaEncoder):
    """RoBERTa's encoder (embeddings, sentence encoder, LM head) whose sentence encoder is
    ``ABCTransformerEncoder`` (``encoder.sentence_encoder.self_attn_phi`` holds W_phi for ABC)."""

    def build_encoder(self, args, dictionary, embed_tokens):
        encoder = ABCTransformerEncoder(args, dictionary, embed_tokens)
        encoder.apply(init_bert_params)
        return encoder


def split_in_proj(state_dict: Dict[str, torch.Tensor], prefix: str = "") -> List[str]:
    """Split old fairseq's fused ``self_attn.in_proj_{weight,bias}`` ([3C, C] / [3C]) into
    ``q_proj``, ``k_proj``, ``v_proj`` in place, as fairseq's MultiheadAttention does when it
    loads such a checkpoint (ABC attention keeps fairseq's q/k/v names). Returns the fused keys."""
    fused = [k for k in state_dict if k.startswith(prefix) and k.endswith(("self_attn.in_proj_weight",
                                                                          "self_attn.in_proj_bias"))]
    for key in fused:
        tensor = state_dict.pop(key)
        base, kind = key.rsplit(".in_proj_", 1)
        for name, part in zip(("q_proj", "k_proj", "v_proj"), tensor.chunk(3, dim=0)):
            state_dict[f"{base}.{name}.{kind}"] = part.clone()
    return fused


@register_model("abc_roberta")
class ABCRobertaModel(NoHubModels, RobertaModel):
    """fairseq's ``roberta`` with bounded-memory encoder self attention (see the module doc).

    ``forward(src_tokens [B, T], features_only=False, classification_head_name=None)`` as
    RobertaModel: LM logits [B, T, V] (or [M, V] for ``masked_tokens``), features [B, T, C], or
    classification logits [B, classes].
    """

    @staticmethod
    def add_args(parser):
        RobertaModel.add_args(parser)
        add_abc_args(parser, (ENCODER_SELF,))

    @classmethod
    def build_model(cls, args, task):
        args = as_namespace(args)
        abc_roberta_base(args)  # fills what an older or hand-made config lacks
        if not safe_hasattr(args, "max_positions"):
            if not safe_hasattr(args, "tokens_per_sample"):
                args.tokens_per_sample = task.max_positions()
            args.max_positions = args.tokens_per_sample
        model = cls(args, ABCRobertaEncoder(args, task.source_dictionary))
        log_phi_parameter_overhead(model)
        return model

    def control_state_dict(self, prefix: str = "") -> Dict[str, torch.Tensor]:
        """The bounded-memory control tensors of this model (W_phi, strategy parameters), by
        state-dict name: what a softmax RoBERTa checkpoint lacks."""
        control = {}
        for name, module in self.named_modules():
            if isinstance(module, ControlModule):
                for key, tensor in module.state_dict(prefix=f"{prefix}{name}.").items():
                    control[key] = tensor
        return control

    def upgrade_state_dict_named(self, state_dict, name):
        prefix = name + "." if name != "" else ""
        split_in_proj(state_dict, prefix)
        super().upgrade_state_dict_named(state_dict, name)  # decoder->encoder renames, heads
        if prefix + EMBED_KEY not in state_dict:
            raise RobertaCheckpointError(
                f"not a RoBERTa checkpoint: it has no {prefix + EMBED_KEY} (nor the older "
                f"decoder.sentence_encoder.* names); abc_roberta warm-starts only from fairseq "
                f"RoBERTa checkpoints (e.g. roberta.base/model.pt)")
        added = []
        for key, tensor in self.control_state_dict(prefix).items():
            if key not in state_dict:
                state_dict[key] = tensor.detach().clone()
                added.append(key)
        own = {prefix + k: v for k, v in self.state_dict().items()}
        missing = sorted(k for k in own if k not in state_dict)
        mismatched = sorted(f"{k}: checkpoint {tuple(state_dict[k].shape)}, model {tuple(v.shape)}"
                            for k, v in own.items() if k in state_dict and state_dict[k].shape != v.shape)
        if missing or mismatched:
            details = "; ".join(([f"missing {', '.join(missing[:8])}" + (" ..." if len(missing) > 8 else "")]
                                 if missing else []) + mismatched[:8])
            raise RobertaCheckpointError(
                f"checkpoint does not match this abc_roberta model ({details}); the --arch and "
                f"dimension flags must be those of the checkpoint (abc_roberta_base for "
                f"roberta.base, abc_roberta_large for roberta.large)")
        if added:
            logger.info("added %d bounded-memory control tensors missing from the checkpoint "
                        "(freshly initialised): %s", len(added), ", ".join(added))
        self._added_control_keys = added

    @property
    def added_control_keys(self) -> List[str]:
        """State-dict names of the control tensors the last upgrade added (empty if none)."""
        return list(getattr(self, "_added_control_keys", []))


def _abc_defaults(args, memory: int) -> None:
    set_abc_defaults(args, ENCODER_SELF, "abc", memory)


@register_model_architecture("abc_roberta", "abc_roberta")
def abc_roberta_base(args):
    """RoBERTa-base (12 layers, 768, 12 heads, FFN 3072, dropout 0.1) with ABC-64 self attention."""
    _abc_defaults(args, 64)
    roberta_base_architecture(args)


@register_model_architecture("abc_roberta", "abc_roberta_base")
def abc_roberta_base_architecture(args):
    abc_roberta_base(args)


@register_model_architecture("abc_roberta", "abc_roberta_large")
def abc_roberta_large(args):
    """RoBERTa-large (24 layers, 1024, 16 heads, FFN 4096) with ABC-64 self attention."""
    _abc_defaults(args, 64)
    roberta_large_architecture(args)


@register_model_architecture("abc_roberta", "abc_roberta_tiny")
def abc_roberta_tiny(args):
    """2 layers, dim 64, 4 heads, FFN 128, ABC-16: for tests and CI."""
    args.encoder_layers = safe_getattr(args, "encoder_layers", 2)
    args.encoder_embed_dim = safe_getattr(args, "encoder_embed_dim", 64)
    args.encoder_ffn_embed_dim = safe_getattr(args, "encoder_ffn_embed_dim", 128)
    args.encoder_attention_heads = safe_getattr(args, "encoder_attention_heads", 4)
    _abc_defaults(args, 16)
    roberta_base_architecture(args)
