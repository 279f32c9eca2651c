"""Print the fairseq-train flags that rebuild a checkpoint's model, one argument per line.

    python -m abc_fairseq.convert.train_flags abc.pt [--save-dir DIR]

fairseq-train builds the model from its command line, not from ``--restore-file``; the uptraining
recipes (scripts/lm/uptrain.sh, scripts/mt/uptrain.sh) pass these flags so that the model they
build is the checkpoint's: ``--arch``, every model option the checkpoint records (those of the
model's own parser: dimensions, embeddings, adaptive input / softmax, the attention flags), and
the task values that size it (lm: --tokens-per-sample; mt: languages and maximum positions).
Only plugin models (abc_lm, abc_transformer, abc_roberta: a converted checkpoint) are read.

With --save-dir, the flags that start or resume an uptraining run there follow: when DIR holds
checkpoint_last.pt the run resumes from it (its model flags, no --restore-file: fairseq restores
an explicit --restore-file on every start, which would restart the run); else the checkpoint is
restored with --reset-optimizer --reset-dataloader --reset-meters --reset-lr-scheduler (the
weights only: updates count from 0).
"""

import argparse
import os
import sys
from typing import List, Optional

from .checkpoint_io import ConversionError, load_checkpoint, model_args, task_value
from .core import FAMILIES
from .families import architecture

# The task values that size a model, per family (the model's own parser does not hold them).
TASK_KEYS = {"lm": ("tokens_per_sample",),
             "mt": ("source_lang", "target_lang", "max_source_positions", "max_target_positions"),
             "roberta": ()}


def _flag(action: argparse.Action) -> str:
    return max(action.option_strings, key=len)


def _text(value) -> str:
    if isinstance(value, bool):  # a bool an architecture stored in a numeric option (base_shuffle)
        return str(int(value))
    return str(getattr(value, "value", value))  # ChoiceEnum members -> their string


def model_flags(state: dict) -> List[str]:
    """The arguments (``--arch ARCH --flag value ...``) that rebuild ``state``'s model."""
    from fairseq.models import ARCH_MODEL_NAME_REGISTRY, ARCH_MODEL_REGISTRY

    import abc_fairseq.models  # noqa: F401 (registers the models)

    args = model_args(state)
    arch = architecture(args)
    family = next((f for f in FAMILIES.values() if ARCH_MODEL_NAME_REGISTRY.get(arch) == f.target_model), None)
    if family is None:
        raise ConversionError(f"its architecture {arch!r} is no abc_fairseq model: convert it first "
                              f"(python -m abc_fairseq.convert)")
    parser = argparse.ArgumentParser(add_help=False)
    ARCH_MODEL_REGISTRY[arch].add_args(parser)
    words = ["--arch", arch]
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        if not action.option_strings or value is None:
            continue
        if isinstance(action, argparse._StoreTrueAction):
            words += [_flag(action)] if value else []
        elif isinstance(action, argparse._StoreFalseAction):
            words += [] if value else [_flag(action)]
        elif action.nargs != 0:
            words += [_flag(action), _text(value)]
    for key in TASK_KEYS[family.name]:
        value = getattr(args, key, None)
        value = task_value(state, key) if value is None else value
        flag = "--" + key.replace("_", "-")
        if value is not None and flag not in words:  # argparse models hold some of them already
            words += [flag, _text(value)]
    return words


RESETS = ["--reset-optimizer", "--reset-dataloader", "--reset-meters", "--reset-lr-scheduler"]


def run_flags(checkpoint: str, save_dir: Optional[str], trust: bool = False) -> List[str]:
    """The model flags and, with ``save_dir``, the restore flags of an uptraining run."""
    last = os.path.join(save_dir, "checkpoint_last.pt") if save_dir else None
    if last is not None and os.path.isfile(last):
        return model_flags(load_checkpoint(last, trust, flag="--save-dir"))
    words = model_flags(load_checkpoint(checkpoint, trust, flag="checkpoint"))
    if save_dir is None:
        return words
    return words + ["--restore-file", os.path.abspath(checkpoint), *RESETS]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m abc_fairseq.convert.train_flags", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="a converted checkpoint (or any abc_* checkpoint)")
    parser.add_argument("--save-dir", metavar="DIR", help="the uptraining run's folder: add the flags that "
                        "restore the checkpoint there, or resume the run it holds (checkpoint_last.pt)")
    parser.add_argument("--trust-checkpoint", action="store_true",
                        help="unpickle arbitrary objects (only for files you trust)")
    args = parser.parse_args(argv)
    try:
        words = run_flags(args.checkpoint, args.save_dir, args.trust_checkpoint)
    except ConversionError as e:
        print(f"train_flags: error: {e}", file=sys.stderr)
        return 1
    print("\n".join(words))
    return 0


if __name__ == "__main__":
    sys.exit(main())
