"""Uptraining a softmax translation model into ABC and GSA on the embedded Bible ES-EN corpus
(issue 36, the translation part of docs/uptraining): does converting a pretrained fairseq
``transformer`` and continuing it pay off against training the bounded-memory model from scratch?

    python -m experiments.bible_mt.uptrain --out results/uptrain_bible --jobs 2
    python -m experiments.bible_mt.uptrain --out results/uptrain_bible --stages summary \
        --summary-dir docs/uptraining

The setting is compare_bible's (variants.py: 3+3 layers, width 256, lr 1e-3 with 400 warm-up
updates, 4096 tokens per update, about 50 updates per epoch). For each seed of --seeds:

  source    fairseq's own ``transformer`` (the ``transformer`` variant) trained to P = --pretrain
            updates by compare_bible (OUT/runs/transformer[_seedS]), scored at P (BLEU on test,
            valid loss from its log)
  convert   its checkpoint at P converted by ``python -m abc_fairseq.convert`` (--seed S) to each
            target of --targets, a compare_bible variant whose attention flags the converter gets:
            abc_32_8 (ABC cross 32, causal 8) and gsa_causal_8 (softmax cross, GSA causal 8);
            scored before any update (BLEU, and valid loss by fairseq-validate, which also scores
            the source at P as a check that it reads the loss the training log reports)
  uptrain   each converted model continued U = --continue updates by scripts/mt/uptrain.sh
            (--lr, --warmup; its restore resets optimizer, schedule, meters and data position),
            an epoch checkpoint every ~50 updates, each scored (BLEU)
  continue  the source continued to P + U in its own folder (the inverse-sqrt schedule does not
            depend on the budget: this is the softmax model trained P + U updates), scored
  scratch   each target trained from scratch to P + U by compare_bible (OUT/runs/TARGET[_seedS]);
            or, with --scratch-summary, the same runs read from a saved compare_bible summary
  summary   SUMMARY_DIR/mt.{md,json,png}: valid loss and BLEU over the continued updates, per seed
            and their mean (experiments.bible_mt.uptrain_report)

BLEU: scripts/mt/evaluate.sh on the test split, beam 5, length penalty 0.6, SacreBLEU (as
compare_bible). Valid loss: label-smoothed cross entropy in bits (fairseq's).

Resuming: every stage skips what is done (a conversion whose file exists, a training whose log
reached its budget, a score already written); an interrupted training resumes from its last
checkpoint. A folder under OUT/uptrain that this script did not create (no conversion.json) is
refused, never written into. A source already trained past P cannot be converted at P (refused).
With --jobs 2 the seeds' chains (convert, uptrain, continue) run side by side.
"""

import argparse
import json
import shlex
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List

from benchmarks.environment import git_commit

from . import compare_bible as cb
from .training_curves import valid_curve
from .uptrain_layout import (
    OWNER_FILE,
    REPO,
    SOURCE,
    VALIDATED,
    attention_flags,
    conversion_dir,
    die,
    log,
    source_run,
)
from .variants import parse_seed_list, parse_stage_list, parse_variant_list

STAGES = ("source", "convert", "uptrain", "continue", "scratch", "summary")
DEFAULT_TARGETS = ("abc_32_8", "gsa_causal_8")
UPTRAIN_BATCH = ("--max-tokens", "4096", "--total-tokens", "4096")  # compare_bible's tokens per update
UPTRAIN_LOGGING = ("--num-workers", "0", "--no-progress-bar", "--log-interval", "10")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m experiments.bible_mt.uptrain", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path,
                   help="work folder: OUT/prep, OUT/runs/NAME and OUT/logs (compare_bible's), OUT/uptrain/NAME")
    p.add_argument("--data", type=Path, help="prepared Bible data (compare_bible's OUT/prep/bin); default OUT/prep/bin")
    p.add_argument("--seeds", default="1,2", help="comma-separated seeds (default %(default)s)")
    p.add_argument("--targets", default=",".join(DEFAULT_TARGETS),
                   help="compare_bible variants to convert to and to train from scratch (default %(default)s)")
    p.add_argument("--pretrain", type=int, default=400, help="P: the softmax source's updates (default %(default)s)")
    p.add_argument("--continue", dest="continued", type=int, default=200,
                   help="U: the continued updates of every model (default %(default)s)")
    p.add_argument("--lr", default="1e-3",
                   help="peak learning rate of the continued training (scripts/mt/uptrain.sh --lr; default "
                        "%(default)s, the source's own rate at P = 400, the end of its warm-up)")
    p.add_argument("--warmup", type=int, default=50,
                   help="warm-up updates of the continued training (default %(default)s)")
    p.add_argument("--stages", default=",".join(STAGES), help="comma-separated subset of " + ", ".join(STAGES))
    p.add_argument("--jobs", type=int, default=1, choices=(1, 2), help="seeds (trainings) run at once (default 1)")
    p.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS per process (default 1)")
    p.add_argument("--nice", type=int, default=10, help="niceness of the child processes (default 10)")
    p.add_argument("--summary-dir", type=Path, help="where mt.{json,md,png} go; default OUT/summary")
    p.add_argument("--scratch-summary", type=Path, action="append", default=[],
                   help="a saved compare_bible summary (compare_bible.json, e.g. docs/mt_quality's) whose run of a "
                        "target and seed, trained to P + U with the same setting, the summary reads where OUT holds "
                        "none that reached P + U (repeatable; the summary names the file)")
    p.add_argument("--dry-run", action="store_true", help="print the commands of the chains, run nothing")
    args = p.parse_args(argv)
    try:
        args.stages = parse_stage_list(args.stages, STAGES)
        args.seeds = parse_seed_list(args.seeds)
        args.targets = parse_variant_list(args.targets)
    except ValueError as err:
        p.error(str(err).replace("--variants", "--targets"))
    if SOURCE in args.targets:
        p.error("--targets: 'transformer' is the source, not a target")
    for flag, value in (("--pretrain", args.pretrain), ("--continue", args.continued), ("--threads", args.threads)):
        if value < 1:
            p.error(f"{flag} must be a positive number, got {value}")
    if args.warmup < 0:
        p.error(f"--warmup must be >= 0, got {args.warmup}")
    missing = [str(path) for path in args.scratch_summary if not path.is_file()]
    if missing:
        p.error(f"--scratch-summary: no such file: {', '.join(missing)}")
    args.out = args.out.resolve()
    args.data = (args.data or args.out / "prep" / "bin").resolve()
    args.summary_dir = (args.summary_dir or args.out / "summary").resolve()
    return args


# ------------------------------------------------------------------------------------ folders
def compare_bible_args(args, variants: List[str], seeds: List[int], updates: int, stages: str) -> List[str]:
    """compare_bible's command line for ``variants`` x ``seeds`` to ``updates`` in OUT."""
    words = ["--out", str(args.out), "--data", str(args.data), "--variants", ",".join(variants),
             "--seeds", ",".join(map(str, seeds)), "--max-update", str(updates), "--stages", stages,
             "--jobs", str(args.jobs), "--threads", str(args.threads), "--nice", str(args.nice)]
    return words + (["--dry-run"] if args.dry_run else [])


# ------------------------------------------------------------------------------------ commands
class Chain:
    """The steps of one seed after its source's training: convert, score, uptrain, continue."""

    def __init__(self, args, seed: int, flags: Dict[str, List[str]]):
        self.args, self.seed, self.flags = args, seed, flags
        self.source = source_run(seed)
        self.source_dir = cb.run_dir_of(self.source, args)
        self.source_log = cb.log_of(self.source, args)

    def run(self, cmd: List, log_file: Path = None) -> None:
        cb.run([str(c) for c in cmd], self.args, log_file)

    def bleu(self, save_dir: Path, checkpoint: Path, tag: str) -> None:
        """compare_bible's BLEU on test into SAVE_DIR/eval/TAG/result.json, unless there already."""
        if not (save_dir / "eval" / tag / "result.json").is_file():
            self.run(cb.bleu_command(self.args.data, save_dir, checkpoint, tag))

    def validate(self, checkpoint: Path, log_file: Path) -> None:
        """fairseq-validate on the valid split with the checkpoint's own criterion (label smoothing
        0.1) and the training's batching: the loss its training log would report. (fairseq-validate's
        default --required-batch-size-multiple 8 leaves out the last sentences that do not fill a
        multiple of 8: 504 of the 508 valid sentences here, and a different loss.)"""
        if log_file.is_file() and VALIDATED in log_file.read_text(encoding="utf-8", errors="replace"):
            return
        if not self.args.dry_run:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            log_file.unlink(missing_ok=True)  # an interrupted validation of ours
        self.run(["fairseq-validate", self.args.data, "--user-dir", REPO / "abc_fairseq", "--path", checkpoint,
                  "--task", "translation", "--valid-subset", "valid", "--max-tokens", "4096",
                  "--required-batch-size-multiple", "1", "--cpu",
                  "--num-workers", "0", "--log-format", "simple"], log_file)

    def convert(self) -> None:
        """Score the source at P, convert it to every target, score each before any update."""
        args, P = self.args, self.args.pretrain
        done = cb.trained_updates(self.source_log)
        pending = [t for t in args.targets if not (conversion_dir(args, t.name, self.seed) / "converted.pt").is_file()]
        if pending and done != P and not args.dry_run:
            die(f"{self.source.name}: its log reached {done} updates, not P = {P}: "
                + ("run the source stage first" if done < P else "a source trained past P cannot be converted at P "
                   "(choose another --out)"))
        for target in pending:
            folder = conversion_dir(args, target.name, self.seed)
            if folder.exists() and any(folder.iterdir()) and not (folder / OWNER_FILE).is_file():
                die(f"{folder} exists and was not created by this script (no {OWNER_FILE}); move it away")
        checkpoint = self.source_dir / "checkpoint_last.pt"
        if done == P or args.dry_run:  # scored while its checkpoint is the one at P
            self.bleu(self.source_dir, checkpoint, f"test_u{P}")
            self.validate(checkpoint, self.source_dir / "eval" / f"validate_u{P}.log")
        for target in pending:
            folder = conversion_dir(args, target.name, self.seed)
            cmd = [sys.executable, "-m", "abc_fairseq.convert", "--input", checkpoint, "--output",
                   folder / "converted.pt", "--family", "mt", *self.flags[target.name], "--seed", str(self.seed)]
            record = {"generator": "experiments.bible_mt.uptrain", "source": str(checkpoint), "source_updates": P,
                      "target": target.name, "seed": self.seed, "convert_command": [str(c) for c in cmd],
                      "lr": args.lr, "warmup": args.warmup, "continue": args.continued}
            if args.dry_run:
                print(shlex.join(record["convert_command"]))
                continue
            folder.mkdir(parents=True, exist_ok=True)
            (folder / OWNER_FILE).write_text(json.dumps(record, indent=1) + "\n")
            self.run(cmd, folder / "convert.log")
        for target in args.targets:
            folder = conversion_dir(args, target.name, self.seed)
            if (folder / "converted.pt").is_file():
                self.bleu(folder, folder / "converted.pt", "test_u0")
                self.validate(folder / "converted.pt", folder / "eval" / "validate_u0.log")

    def uptrain(self) -> None:
        """scripts/mt/uptrain.sh for U updates per target, then every epoch checkpoint scored."""
        args = self.args
        for target in args.targets:
            folder = conversion_dir(args, target.name, self.seed)
            if not (folder / "converted.pt").is_file() and not args.dry_run:
                log(f"{folder.name}: not converted yet, not continued")
                continue
            if cb.trained_updates(folder / "train.log") < args.continued:
                self.run(["bash", REPO / "scripts/mt/uptrain.sh", "--checkpoint", folder / "converted.pt",
                          "--data", args.data, "--save-dir", folder / "checkpoints", "--lr", args.lr,
                          "--warmup", str(args.warmup), "--max-update", str(args.continued), "--seed", str(self.seed),
                          *UPTRAIN_BATCH, "--cpu", "--no-tensorboard", "--", *UPTRAIN_LOGGING],
                         None if args.dry_run else folder / "train.log")
            if args.dry_run:
                continue
            for point in valid_curve((folder / "train.log").read_text()):
                self.bleu(folder, folder / "checkpoints" / f"checkpoint{point.epoch}.pt", f"test_u{point.updates}")

    def continue_source(self) -> None:
        """The source to P + U (only once every target is converted: its checkpoint at P is gone then)."""
        args, final = self.args, self.args.pretrain + self.args.continued
        missing = [t.name for t in args.targets
                   if not (conversion_dir(args, t.name, self.seed) / "converted.pt").is_file()]
        if missing and not args.dry_run:
            log(f"{self.source.name}: not continued before its conversion to {', '.join(missing)}")
            return
        cb.main(compare_bible_args(args, [SOURCE.name], [self.seed], final, "train"))
        if not args.dry_run:
            self.bleu(self.source_dir, self.source_dir / "checkpoint_last.pt", f"test_u{final}")


def note_start(args, stage: str) -> None:
    """Append the stage, the commit and the time to OUT/stages.jsonl (the summary names them)."""
    if args.dry_run:
        return
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"stage": stage, "seeds": args.seeds, "targets": [t.name for t in args.targets],
              "commit": git_commit() or "unknown", "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "threads": args.threads, "jobs": args.jobs}
    with open(args.out / "stages.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def run_chains(args, stages: List[str]) -> None:
    flags = {t.name: attention_flags(t, args) for t in args.targets}
    chains = [Chain(args, seed, flags) for seed in args.seeds]

    def one(chain: Chain) -> None:
        for stage, step in (("convert", chain.convert), ("uptrain", chain.uptrain),
                            ("continue", chain.continue_source)):
            if stage in stages:
                step()

    if args.jobs == 1 or args.dry_run:
        for chain in chains:
            one(chain)
        return
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for future in [pool.submit(one, chain) for chain in chains]:
            future.result()


def main(argv=None) -> None:
    args = parse_args(argv)
    for stage in args.stages:
        if stage != "summary":
            note_start(args, stage)
    if "source" in args.stages:
        cb.main(compare_bible_args(args, [SOURCE.name], args.seeds, args.pretrain, "prepare,train"))
    chain_stages = [s for s in args.stages if s in ("convert", "uptrain", "continue")]
    if chain_stages:
        run_chains(args, chain_stages)
    if "scratch" in args.stages:
        cb.main(compare_bible_args(args, [t.name for t in args.targets], args.seeds,
                                   args.pretrain + args.continued, "train,eval"))
    if "summary" in args.stages:
        from .uptrain_report import summarise

        summarise(args)


if __name__ == "__main__":
    main()
