"""``transformer_lm`` (and a softmax ``abc_lm``) -> ``abc_lm``: decoder self attention.

The vocabulary is read from the input embedding: a table ``decoder.embed_tokens.weight``
[V, C], or Baevski & Auli's adaptive input (the WikiText-103 models), whose bands
``decoder.embed_tokens.embeddings.{i}.0.weight`` together hold V rows. The adaptive softmax
(``decoder.adaptive_softmax.*``), tied or not, is rebuilt by the model from the same config.
"""

import re

from ..models.abc_options import DECODER_SELF
from .checkpoint_io import ConversionError
from .families import Family, TaskStub, made_up_dictionary

_ADAPTIVE_BAND = re.compile(r"^decoder\.embed_tokens\.embeddings\.(\d+)\.0\.weight$")


def vocabulary_size(state) -> int:
    """V of the input embedding (table or adaptive input); ConversionError when there is none."""
    if "decoder.embed_tokens.weight" in state:
        return state["decoder.embed_tokens.weight"].shape[0]
    bands = [tensor.shape[0] for key, tensor in state.items() if _ADAPTIVE_BAND.match(key)]
    if bands:
        return sum(bands)
    raise ConversionError("not a language model checkpoint: its model state has no decoder.embed_tokens "
                          "(neither a table decoder.embed_tokens.weight nor adaptive input bands "
                          "decoder.embed_tokens.embeddings.*; character embeddings are not converted)")


def _task(state, args):
    return TaskStub(made_up_dictionary(vocabulary_size(state)))


LM = Family("lm", "language model", ("transformer_lm", "abc_lm"), "abc_lm",
            {DECODER_SELF: ("abc", 64)}, _task)
