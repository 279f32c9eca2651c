"""The converter's command line: ``python -m abc_fairseq.convert`` (and ``abc_fairseq.convert_roberta``)."""

import argparse
import logging
import os
import sys
from typing import List, Optional

from .checkpoint_io import CONVERSION_KEY, ConversionError, check_output, load_checkpoint, write_checkpoint
from .core import FAMILIES, convert


def build_parser(prog: str = "python -m abc_fairseq.convert", family: Optional[str] = None):
    """The flags: files, --family (unless fixed), the training flags of attention, the seed."""
    from .. import convert as package
    from ..models.abc_options import POSITIONS, add_abc_args

    parser = argparse.ArgumentParser(prog=prog, description=package.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", required=True, metavar="MODEL_PT",
                        help="the pretrained fairseq checkpoint (transformer_lm, transformer or roberta)")
    parser.add_argument("--output", required=True, metavar="ABC_PT",
                        help="the converted checkpoint to write (never an existing file, never the input)")
    if family is None:
        parser.add_argument("--family", choices=sorted(FAMILIES),
                            help="lm (transformer_lm -> abc_lm), mt (transformer -> abc_transformer) or roberta "
                                 "(roberta -> abc_roberta); default: told by the checkpoint")
    add_abc_args(parser, POSITIONS)  # the training flags, parsed and checked as fairseq-train does
    parser.add_argument("--seed", type=int, default=1, help="seed of the new control parameters' initialisation")
    parser.add_argument("--trust-checkpoint", action="store_true",
                        help="unpickle arbitrary objects (only for files you trust)")
    parser.add_argument("--force", action="store_true",
                        help="replace --output when it is an earlier output of this converter (nothing else)")
    return parser


def describe(converted, chosen_flags: str, source_state: dict, input_path: str, output: str) -> str:
    """What the conversion did, for stdout: the family, the attention, kept and added tensors."""
    new_model, old_model, added = converted.state["model"], source_state["model"], converted.added
    kept = len(new_model) - len(added)
    same_names = kept == len(old_model) and all(k in new_model for k in old_model)
    renamed = "" if same_names else f" (the checkpoint's {len(old_model)} entries, under fairseq's current names)"
    lines = [f"converted {input_path} -> {output}: {converted.family.label}, arch "
             f"{converted.state[CONVERSION_KEY]['arch']}, {chosen_flags}",
             f"kept {kept} pretrained tensors with their values unchanged{renamed}; "
             f"added {len(added)} new control tensors:"]
    for key in added:
        tensor = new_model[key]
        std = f", std {tensor.float().std():.4f}" if tensor.numel() > 1 else ""
        lines.append(f"  {key} {tuple(tensor.shape)} ({tensor.numel()} parameters{std})")
    return "\n".join(lines)


def attention_flags(converted) -> str:
    """The attention of every position as training flags (``--decoder-self-attn gsa ...``)."""
    chosen = converted.state[CONVERSION_KEY]["attention"]
    words = []
    for position in converted.family.positions:
        words += [position.attn_flag, str(chosen[position.attn_key])]
        if chosen[position.attn_key] != "softmax":
            words += [position.memory_flag, str(chosen[position.memory_key])]
    return " ".join(words)


def main(argv: Optional[List[str]] = None, family: Optional[str] = None,
         prog: str = "python -m abc_fairseq.convert") -> int:
    parser = build_parser(prog, family)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    name = prog.split()[-1].rsplit(".", 1)[-1]
    try:
        check_output(args.input, args.output, args.force)
        state = load_checkpoint(args.input, args.trust_checkpoint)
        if not isinstance(state, dict) or not isinstance(state.get("model"), dict):
            raise ConversionError(f"--input {args.input} is not a fairseq checkpoint: it holds no 'model' state dict")
        converted = convert(state, family or args.family, vars(args), args.seed, os.path.abspath(args.input))
        write_checkpoint(converted.state, args.output)
    except ConversionError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 1
    print(describe(converted, attention_flags(converted), state, args.input, args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
