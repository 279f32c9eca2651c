"""What ``experiments.bible_mt.uptrain`` and its report share: the source variant, the attention
flags handed to the converter, the record a conversion folder holds, the folders, and the
messages. (Its own module, so that the driver and the report import it and not each other.)"""

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

from . import compare_bible as cb
from .variants import VARIANTS, Run

REPO = cb.REPO
SOURCE = VARIANTS["transformer"]
# The attention flags a compare_bible variant's training sets, handed to the converter as they are.
ATTENTION_FLAGS = ("--encoder-attn", "--encoder-memory", "--decoder-self-attn", "--decoder-self-memory",
                   "--decoder-cross-attn", "--decoder-cross-memory")
OWNER_FILE = "conversion.json"
VALIDATED = "valid on 'valid' subset"  # fairseq-validate's (and fairseq-train's) line of a finished validation


def log(message: str) -> None:
    print(f"uptrain_bible: {message}", file=sys.stderr, flush=True)


def die(message: str) -> None:
    sys.exit(f"uptrain_bible: ERROR: {message}")


def source_run(seed: int) -> Run:
    return Run(SOURCE, seed)


def conversion_dir(args, target: str, seed: int) -> Path:
    """OUT/uptrain/TARGET_sS: converted.pt, convert.log, checkpoints/ (the recipe's save dir),
    train.log, eval/ (scores)."""
    return args.out / "uptrain" / f"{target}_s{seed}"


def attention_flags(target, args) -> List[str]:
    """The attention flags compare_bible's training of ``target`` passes to fairseq-train (the last
    value of a repeated flag, as argparse takes it), read from train.sh's dry run."""
    run = Run(target, 1)
    scratch = argparse.Namespace(data=args.data, out=args.out, max_update=1, extra_train_args="")
    words = subprocess.run(cb.train_command(run, scratch, dry_run=True), cwd=REPO, capture_output=True,
                           text=True, check=True, env=cb.child_env(1)).stdout.split()
    chosen: Dict[str, str] = {}
    for flag, value in zip(words, words[1:]):
        if flag in ATTENTION_FLAGS:
            chosen[flag] = value
    return [word for flag in ATTENTION_FLAGS if flag in chosen for word in (flag, chosen[flag])]


