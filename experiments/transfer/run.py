"""Plan and run the attention-transfer evidence (issue 46 item 3).

    python -m experiments.transfer.run --root /path/to/runs --code /path/to/clean/worktree
    python -m experiments.transfer.run --root /path/to/runs --dry-run

For each seed of --seeds: softmax (transformer_lm) trained from scratch to P + 100 = 1,300 updates
(the quickstart's model, data and optimiser; checkpoints every 25 from P = 1,200); its checkpoint
at P converted (python -m abc_fairseq.convert --seed SEED) to ABC-64 and GSA-64, each with and
without attention transfer (python -m abc_fairseq.transfer, K = 100 updates of 2,048 tokens), and
to a window of 64 plus 4 sinks (no training); every variant continued for 100 updates by
scripts/lm/uptrain.sh (checkpoints every 25); ABC-64 and GSA-64 trained from scratch to
P + K + 100 = 1,400. Test perplexity by fairseq-eval-lm at 0, 25, 50 and 100 continued updates,
and for the from-scratch runs at the same total updates and at the same total tokens.

Resumable as experiments.uptraining.run is (its executor runs the steps): a finished step is
skipped, an interrupted training resumes from its checkpoint_last.pt, an interrupted transfer from
its run state. --root must be absent, empty or an earlier output of this driver (its ``.run``
mark). Two drivers may share a --root when their --seeds differ (run the data step first, e.g.
with --only data).
"""

import argparse
import sys

from experiments.uptraining import owner
from experiments.uptraining.execute import Executor, drive, only
from experiments.uptraining.run import REPO, _deadline, _seeds

from .plan import TransferPlan

OWNER = "experiments.transfer transfer-evidence"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m experiments.transfer.run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", required=True,
                   help="the output folder (data-bin/, runs/NAME/, steps.jsonl); absent, empty or this driver's")
    p.add_argument("--code", default=REPO,
                   help="the worktree whose scripts and abc_fairseq run every step (default: this repository); a "
                        "clean worktree at a commit makes every record name that commit")
    p.add_argument("--seeds", type=_seeds, default=[1, 2], help="seeds, comma-separated (default: 1,2)")
    p.add_argument("--threads", type=int, default=1,
                   help="OMP_NUM_THREADS (and MKL/OpenBLAS) of every step (default %(default)s)")
    p.add_argument("--deadline", type=_deadline,
                   help="ISO date and time (UTC unless it names a zone): a running step is stopped then and no "
                        "step starts after it")
    p.add_argument("--only", default="",
                   help="run only the steps whose name contains one of these comma-separated words")
    p.add_argument("--dry-run", action="store_true", help="print the plan's commands and run nothing")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if args.threads < 1:
        print(f"experiments.transfer.run: --threads must be at least 1, got {args.threads}", file=sys.stderr)
        return 2
    try:
        owner.check(args.root, OWNER)
    except owner.ForeignFolder as err:
        print(f"experiments.transfer.run: {err}", file=sys.stderr)
        return 2
    plan = TransferPlan(args.root, args.seeds)
    executor = Executor(plan.root, args.code, threads=args.threads, deadline=args.deadline)
    return drive(executor, only(plan.steps(), args.only), args.dry_run, lambda: owner.claim(args.root, OWNER))

if __name__ == "__main__":
    sys.exit(main())
