"""Convert a pretrained fairseq RoBERTa checkpoint into an ``abc_roberta`` checkpoint: the
converter of every family (``python -m abc_fairseq.convert``) with ``--family roberta``.

    python -m abc_fairseq.convert_roberta --input roberta.base/model.pt --output abc_model.pt \\
        --encoder-attn abc --encoder-memory 64

Every pretrained tensor is kept under its name and bit for bit (after the renames fairseq's own
RoBERTa loader applies to old checkpoints: ``decoder.*`` -> ``encoder.*``, ``emb_layer_norm`` ->
``layernorm_embedding``, fused ``in_proj`` -> ``q/k/v_proj``); the control parameters the
checkpoint lacks (W_phi, ``encoder.sentence_encoder.self_attn_phi.weight``: [heads * n, dim],
and those of other strategies) are added, seeded by ``--seed``, and listed. Continue with
``fairseq-train --user-dir abc_fairseq --restore-file abc_model.pt --reset-optimizer
--reset-dataloader --reset-meters`` (or pass the original ``model.pt`` to ``--restore-file`` with
``--arch abc_roberta_base``: the model adds W_phi while loading). See ``python -m
abc_fairseq.convert --help`` for the refusals and the other families.
"""

import sys
from typing import List, Optional

from .convert import ConversionError, Converted
from .convert.cli import main as _main

__all__ = ["ConversionError", "convert", "main"]


def convert(state: dict, encoder_attn: str = "abc", encoder_memory: Optional[int] = 64, seed: int = 1,
            extra_model_args: Optional[dict] = None):
    """Convert a loaded RoBERTa checkpoint ``state`` in memory: ``(new_state, model, added)``."""
    from .convert import convert as convert_any

    flags = dict(extra_model_args or {}, encoder_attn=encoder_attn, encoder_memory=encoder_memory)
    converted: Converted = convert_any(state, "roberta", flags, seed)
    return converted.state, converted.model, converted.added


def main(argv: Optional[List[str]] = None) -> int:
    return _main(argv, family="roberta", prog="python -m abc_fairseq.convert_roberta")


if __name__ == "__main__":
    sys.exit(main())
