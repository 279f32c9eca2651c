"""Convert a pretrained fairseq softmax checkpoint into the plugin's model of the same family.

    python -m abc_fairseq.convert --input wiki103/model.pt --output abc.pt --decoder-self-attn gsa \\
        --decoder-self-memory 64
    python -m abc_fairseq.convert --input wmt/model.pt --output abc.pt --family mt \\
        --decoder-cross-attn abc --decoder-cross-memory 32 --decoder-self-attn abc --decoder-self-memory 8
    python -m abc_fairseq.convert --input roberta.base/model.pt --output abc.pt --encoder-memory 64

Families (--family; default: told by the checkpoint's architecture, else its parameter names):
  lm        transformer_lm -> abc_lm (table or adaptive input, adaptive softmax): --decoder-self-attn
  mt        transformer -> abc_transformer: --encoder-attn, --decoder-self-attn, --decoder-cross-attn
  roberta   roberta -> abc_roberta: --encoder-attn
The attention flags are fairseq-train's (abc_fairseq.models.abc_options: any registered strategy
the position's mode takes, GSA included, or softmax; the strategies' settings; --untie-phi); a
position left unset takes the target architecture's default (lm: abc 64; mt: encoder softmax,
decoder self abc 8, cross abc 32; roberta: abc 64).

Every pretrained tensor is kept under its name, bit for bit, after the renames fairseq itself
applies to old layouts (fused in_proj -> q/k/v_proj, layer_norms.N, RoBERTa's decoder.* and
emb_layer_norm). The control parameters the checkpoint lacks (W_phi, the Linformer matrix, GSA's
gate projection, ...) are initialised as a freshly built model initialises them (seeded by
--seed) and listed on stdout. The converted model is loaded back strictly before anything is
written, and the written file is read back before it takes the output's name. The output keeps
the input's layout (args or cfg) with the architecture set to the abc_* one and the attention
flags recorded (plus an 'abc_conversion' record); the optimizer state is dropped. Continue
training with scripts/lm/uptrain.sh or scripts/mt/uptrain.sh (fairseq-train --restore-file
abc.pt --reset-optimizer --reset-dataloader --reset-meters --reset-lr-scheduler, with the model
flags python -m abc_fairseq.convert.train_flags prints).

Refused, with a message naming the flag or file: a checkpoint of another family than --family,
a position the family lacks, a strategy or setting the checkpoint's shapes cannot take, a damaged,
truncated or foreign file, an output that is the input or already exists (--force replaces only an
earlier output of this converter). Only tensors, containers and argparse.Namespace are unpickled
(torch's weights-only loader); --trust-checkpoint allows arbitrary pickles for a file you trust.
"""

from .checkpoint_io import ConversionError
from .core import FAMILIES, Converted, convert

__all__ = ["FAMILIES", "ConversionError", "Converted", "convert", "main"]


def main(argv=None) -> int:
    from .cli import main as cli_main

    return cli_main(argv)
