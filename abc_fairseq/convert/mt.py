"""``transformer`` (and a softmax ``abc_transformer``) -> ``abc_transformer``: encoder self,
decoder self and cross attention, each chosen by its training flags.

The source and target vocabularies are read from ``encoder.embed_tokens.weight`` and
``decoder.embed_tokens.weight`` ([V, C] each); with ``--share-all-embeddings`` the two
dictionaries are one object, as fairseq's joined dictionary requires.
"""

from ..models.abc_options import DECODER_CROSS, DECODER_SELF, ENCODER_SELF
from .families import Family, TaskStub, first_key, made_up_dictionary


def _task(state, args):
    label = "translation model"
    source = first_key(state, ["encoder.embed_tokens.weight"], "encoder.embed_tokens.weight", label)
    target = first_key(state, ["decoder.embed_tokens.weight"], "decoder.embed_tokens.weight", label)
    source_dictionary = made_up_dictionary(source.shape[0])
    if getattr(args, "share_all_embeddings", False) and source.shape[0] == target.shape[0]:
        return TaskStub(source_dictionary, source_dictionary)
    return TaskStub(source_dictionary, made_up_dictionary(target.shape[0]))


# The defaults of the abc_transformer architecture: the paper's WMT14 model.
MT = Family("mt", "translation model", ("transformer", "abc_transformer"), "abc_transformer",
            {ENCODER_SELF: ("softmax", 32), DECODER_SELF: ("abc", 8), DECODER_CROSS: ("abc", 32)}, _task)
