"""``roberta`` (and a softmax ``abc_roberta``) -> ``abc_roberta``: encoder self attention.

The 2019 layout of the published roberta.base / roberta.large (``decoder.sentence_encoder.*``,
``emb_layer_norm``, fused ``in_proj``) is renamed by the model's own upgrade
(``ABCRobertaModel.upgrade_state_dict_named``), as fairseq does when it loads such a file.
"""

from ..models.abc_options import ENCODER_SELF
from .families import Family, TaskStub, first_key, made_up_dictionary

EMBED_KEYS = ("encoder.sentence_encoder.embed_tokens.weight", "decoder.sentence_encoder.embed_tokens.weight")


def _task(state, args):
    embed = first_key(state, EMBED_KEYS, "encoder.sentence_encoder.embed_tokens.weight "
                      "(nor decoder.sentence_encoder.*)", "RoBERTa")
    max_positions = getattr(args, "max_positions", None) or getattr(args, "tokens_per_sample", None) or 512
    return TaskStub(made_up_dictionary(embed.shape[0]), max_positions=max_positions)


ROBERTA = Family("roberta", "RoBERTa", ("roberta", "abc_roberta"), "abc_roberta", {ENCODER_SELF: ("abc", 64)}, _task)
