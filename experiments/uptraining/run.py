"""Plan and run the uptraining evidence (issue 36 item 3) and the seeds of issue 37 item 3.

    python -m experiments.uptraining.run --root /path/to/runs --code /path/to/clean/worktree
    python -m experiments.uptraining.run --root /path/to/runs --dry-run

For each seed of --seeds: softmax (transformer_lm) trained from scratch to P + U = 400 updates
(checkpoints every 25), its checkpoint at P = 300 converted to ABC-64 and to GSA-64
(python -m abc_fairseq.convert --seed SEED) and each continued for U = 100 updates by
scripts/lm/uptrain.sh (checkpoints every 25), and ABC-64 and GSA-64 trained from scratch to 400.
For each seed of --extra-seeds: softmax, ABC-64 and GSA-64 from scratch to 300 only. Every
checkpoint that a comparison reads is scored by fairseq-eval-lm on valid and test. The model, data
and optimiser are the quickstart's (experiments/uptraining/settings.py).

Resumable: a finished step is skipped (a training whose folder's ``done`` holds its budget, a
converted checkpoint that exists, an evaluation log that holds a perplexity); an interrupted
training resumes from its checkpoint_last.pt (fairseq-train, or scripts/lm/uptrain.sh for the
converted runs). --root must be absent, empty or an earlier output of this driver (its ``.run``
mark): anything else is refused. Steps run one at a time, in the order of plan.py (cheap and most
informative first), and a step whose input checkpoint is missing is left for a later start.
"""

import argparse
import datetime as dt
import os
import sys

from . import owner
from . import settings as S
from .execute import Executor, drive, only
from .plan import Plan

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _deadline(text: str) -> dt.datetime:
    """An ISO date and time, read as UTC when it names no zone."""
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO date and time: {text!r} (e.g. 2026-11-27T11:45)")
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def _seeds(text: str):
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"a comma-separated list of integers, got {text!r}")
    if any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"seeds are non-negative integers, got {text!r}")
    return seeds


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m experiments.uptraining.run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", required=True,
                   help="the output folder (data-bin/, runs/NAME/, steps.jsonl); absent, empty or this driver's")
    p.add_argument("--code", default=REPO,
                   help="the worktree whose scripts and abc_fairseq run every step (default: this repository, "
                        "%(default)s); a clean worktree at a commit makes every record name that commit")
    p.add_argument("--seeds", type=_seeds, default=[1, 2],
                   help="seeds of the full comparison, comma-separated (default: 1,2)")
    p.add_argument("--extra-seeds", type=_seeds, default=[3],
                   help="seeds trained from scratch to P only (softmax, ABC, GSA), comma-separated; '' for none "
                        "(default: 3)")
    p.add_argument("--lr", default=S.UPTRAIN_LR,
                   help="peak learning rate of the continued training (scripts/lm/uptrain.sh --lr; "
                        "default %(default)s)")
    p.add_argument("--warmup", type=int, default=S.UPTRAIN_WARMUP,
                   help="warm-up updates of the continued training (scripts/lm/uptrain.sh --warmup; "
                        "default %(default)s)")
    p.add_argument("--threads", type=int, default=1,
                   help="OMP_NUM_THREADS (and MKL/OpenBLAS) of every step (default %(default)s)")
    p.add_argument("--deadline", type=_deadline,
                   help="ISO date and time (UTC unless it names a zone): a running step is stopped then (a "
                        "training resumes from its last checkpoint on the next start) and no step starts after it")
    p.add_argument("--gsa-code", default="",
                   help="the worktree of the GSA runs (from scratch and converted), e.g. a checkout at a later "
                        "commit of GSA's op (default: --code); the run folder records which")
    p.add_argument("--only", default="",
                   help="run only the steps whose name contains one of these comma-separated words "
                        "(e.g. 'softmax_s1,conv_abc')")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan's commands (per step a '# NAME [STATE] in WORKTREE' line, then the "
                        "command) and run nothing")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    root = os.path.abspath(args.root)
    try:
        owner.check(root)
    except owner.ForeignFolder as err:
        print(f"experiments.uptraining.run: {err}", file=sys.stderr)
        return 2
    plan = Plan(root, args.seeds, args.extra_seeds, lr=args.lr, warmup=args.warmup)
    executor = Executor(root, args.code, threads=args.threads, deadline=args.deadline,
                        gsa_code=args.gsa_code)
    return drive(executor, only(plan.steps(), args.only), args.dry_run, lambda: owner.claim(root))

if __name__ == "__main__":
    sys.exit(main())
