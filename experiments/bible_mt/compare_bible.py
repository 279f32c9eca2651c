"""Softmax against ABC (and other bounded-memory attentions) on the embedded Bible ES-EN corpus:
train every variant with identical settings and budget, decode and score it, and summarise.

    python -m experiments.bible_mt.compare_bible --out results/compare_bible                      # softmax, abc_32_8
    python -m experiments.bible_mt.compare_bible --out results/compare_bible \
        --variants softmax,abc_cross_32,abc_causal_8
    python -m experiments.bible_mt.compare_bible --out results/compare_bible --stages summary \
        --summary-dir docs/mt_quality

Stages (``--stages``, default all, in this order):
  prepare  data_prep/mt/prepare_doc_corpus.sh on data_prep/bible_es_en (Moses + truecase, 2000
           shared BPE, sentence level) into OUT/prep, unless --data names prepared data
  train    scripts/mt/train.sh per variant and seed into OUT/runs/NAME (NAME_seedS for a seed S other
           than 1), its log in OUT/logs/NAME.train.log (see variants.py: 3+3 layers,
           width 256, 4 heads, lr 1e-3, 400 warm-up updates, 4096 tokens per update, validation
           every epoch; --save-interval-updates 100 is passed, but with ~50 updates per epoch
           fairseq writes none of them, as they fall on epoch ends: the phi stage reads
           checkpoint_last.pt)
  phi      phi slot usage (experiments.bible_mt.phi_usage) of the ABC variants: fresh initialisation, the
           interval checkpoints (those not on an epoch end) and checkpoint_last.pt
  eval     scripts/mt/evaluate.sh on the test split with checkpoint_last.pt, beam 5, length
           penalty 0.6, SacreBLEU
  summary  SUMMARY_DIR/compare_bible.{json,md,png}: BLEU, validation loss at fixed updates, the
           curves (validation loss against updates); with several seeds, also their mean

Resuming: every stage skips what is done. A run folder is reused only when the train command it
recorded equals this script's (the --max-update value aside: a larger budget continues the run,
the inverse-sqrt schedule does not depend on it); a folder this script did not create is an error,
never overwritten. Summary files are overwritten only when they were written by this script.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

from .report import EARLIER_GENERATORS, GENERATOR, REPORT_UPDATES, catch_up, markdown, seed_means
from .training_curves import ValidPoint, loss_at, plot_curves, train_wall_seconds, valid_curve
from .variants import (
    DEFAULT_VARIANTS,
    MODEL_ARGS,
    SCHEDULE,
    VARIANTS,
    Run,
    parse_seed_list,
    parse_stage_list,
    parse_variant_list,
)

REPO = Path(__file__).resolve().parents[2]

STAGES = ("prepare", "train", "phi", "eval", "summary")
LOG_ARGS = ("--num-workers", "0", "--no-progress-bar", "--log-interval", "10",
            "--save-interval-updates", "100", "--keep-interval-updates", "12", "--no-epoch-checkpoints")


def die(message: str) -> None:
    sys.exit(f"compare_bible: ERROR: {message}")


def log(message: str) -> None:
    print(f"compare_bible: {message}", file=sys.stderr, flush=True)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path, help="work folder: OUT/prep, OUT/runs/NAME")
    p.add_argument("--data", type=Path, help="prepared fairseq data (a recipe's DEST/bin); default OUT/prep/bin")
    p.add_argument("--variants", default=",".join(DEFAULT_VARIANTS),
                   help="comma-separated names (default %(default)s); known: " + ", ".join(VARIANTS))
    p.add_argument("--seeds", default="1", help="comma-separated training seeds (default %(default)s); seed 1 runs "
                   "in OUT/runs/NAME, seed S in OUT/runs/NAME_seedS")
    p.add_argument("--max-update", type=int, default=600, help="updates per run (default %(default)s)")
    p.add_argument("--stages", default=",".join(STAGES), help="comma-separated subset of " + ", ".join(STAGES))
    p.add_argument("--jobs", type=int, default=1, choices=(1, 2), help="trainings run at once (default 1)")
    p.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS per process (default 1)")
    p.add_argument("--nice", type=int, default=10, help="niceness of the child processes (default 10)")
    p.add_argument("--summary-dir", type=Path, help="where compare_bible.{json,md,png} go; default OUT/summary")
    p.add_argument("--extra-train-args", default="",
                   help="further fairseq-train arguments for every variant, space separated (tests: --max-tokens ...)")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    args = p.parse_args(argv)
    try:
        args.stages = parse_stage_list(args.stages, STAGES)
        args.variants = parse_variant_list(args.variants)
        args.seeds = parse_seed_list(args.seeds)
    except ValueError as err:
        p.error(str(err))
    if args.max_update < 1:
        p.error("--max-update must be a positive number of updates")
    if args.threads < 1:
        p.error("--threads must be >= 1")
    # Absolute paths: the children run in the repository root.
    args.out = args.out.resolve()
    args.data = (args.data or args.out / "prep" / "bin").resolve()
    args.summary_dir = (args.summary_dir or args.out / "summary").resolve()
    args.runs = [Run(variant, seed) for variant in args.variants for seed in args.seeds]
    return args


def run_dir_of(run: Run, args) -> Path:
    return args.out / "runs" / run.name


def log_of(run: Run, args) -> Path:
    """The training log, outside the run folder: train.sh claims only an empty (or its own) folder."""
    return args.out / "logs" / f"{run.name}.train.log"


def child_env(threads: int) -> Dict[str, str]:
    """This Python's tools first on PATH (train.sh and evaluate.sh find fairseq there)."""
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def niced(cmd: List[str], args) -> List[str]:
    return ["nice", "-n", str(args.nice)] + [str(c) for c in cmd]


# --------------------------------------------------------------------------------------- prepare
def prepare(args) -> None:
    if (args.data / "eval" / "prep.json").is_file():
        log(f"data ready in {args.data}")
        return
    if args.data != args.out / "prep" / "bin":
        die(f"--data {args.data} has no eval/prep.json; prepare it or leave --data out")
    cmd = ["bash", REPO / "data_prep/mt/prepare_doc_corpus.sh", "--raw", REPO / "data_prep/bible_es_en",
           "--dest", args.out / "prep", "--bpe-size", "2000", "--window", "1", "--workers", "1"]
    run(cmd, args)


def run(cmd, args, log_file: Optional[Path] = None) -> None:
    cmd = niced(cmd, args)
    if args.dry_run:
        print(" ".join(cmd))
        return
    if log_file is None:
        subprocess.run(cmd, cwd=REPO, env=child_env(args.threads), check=True)
        return
    with open(log_file, "a", encoding="utf-8") as out:
        subprocess.run(cmd, cwd=REPO, env=child_env(args.threads), check=True, stdout=out, stderr=subprocess.STDOUT)


# ----------------------------------------------------------------------------------------- train
def train_command(run: Run, args, dry_run: bool = False) -> List[str]:
    """train.sh's command; a variant with another W_phi initialisation trains through
    ``experiments.bible_mt.phi_init_train`` (train.sh's --train-module), its gain a flag of that module."""
    variant = run.variant
    cmd = ["bash", str(REPO / "scripts/mt/train.sh"), "--dataset", "tiny", "--data", str(args.data),
           "--save-dir", str(run_dir_of(run, args)), "--cpu", "--arch", "abc_transformer", *SCHEDULE,
           "--max-update", str(args.max_update), "--seed", str(run.seed), *variant.train_args]
    gain = []
    if variant.phi_init_gain != 1.0:
        cmd += ["--train-module", "experiments.bible_mt.phi_init_train"]
        gain = ["--phi-init-gain", f"{variant.phi_init_gain:g}"]
    if dry_run:
        cmd.append("--dry-run")
    return cmd + ["--", *MODEL_ARGS, *LOG_ARGS, *variant.fairseq_args, *gain, *args.extra_train_args.split()]


def _comparable(command: str) -> str:
    """A recorded train command with the budget blanked out and paths made repository-relative."""
    command = command.replace(str(REPO) + "/", "")
    return re.sub(r"--max-update \d+", "--max-update N", command.strip())


def check_run_dir(run: Run, args) -> None:
    """A run folder is ours when its recorded command is the one we would run (budget aside)."""
    run_dir = run_dir_of(run, args)
    if not run_dir.exists() or not any(run_dir.iterdir()):
        return
    recorded = run_dir / "train_command.txt"
    if not recorded.is_file():
        die(f"{run_dir} exists and was not created by this script (no train_command.txt); move it away")
    wanted = subprocess.run(train_command(run, args, dry_run=True), cwd=REPO, env=child_env(args.threads),
                            capture_output=True, text=True, check=True).stdout
    if _comparable(recorded.read_text()) != _comparable(wanted):
        die(f"{run_dir} holds a run with other settings ({recorded}); choose another --out")


def trained_updates(log_file: Path) -> int:
    curve = valid_curve(log_file.read_text(encoding="utf-8", errors="replace")) if log_file.is_file() else []
    return curve[-1].updates if curve else 0


def train(args) -> None:
    todo = []
    for job in args.runs:  # not "run": that is the function above
        check_run_dir(job, args)
        done = trained_updates(log_of(job, args))
        if done >= args.max_update:
            log(f"{job.name}: trained ({done} updates)")
            continue
        todo.append(job)
    if args.dry_run:
        for job in todo:
            print(" ".join(niced(train_command(job, args), args)))
        return
    procs = []
    for job in todo:
        log_file = log_of(job, args)
        log_file.parent.mkdir(parents=True, exist_ok=True)
        log(f"{job.name}: training to {args.max_update} updates (log {log_file})")
        with open(log_file, "a", encoding="utf-8") as out:
            procs.append((job, subprocess.Popen(niced(train_command(job, args), args), cwd=REPO,
                                                env=child_env(args.threads), stdout=out,
                                                stderr=subprocess.STDOUT)))
        if len(procs) >= args.jobs:
            _wait(procs.pop(0))
    for item in procs:
        _wait(item)


def _wait(item) -> None:
    job, proc = item
    if proc.wait() != 0:
        die(f"{job.name}: training failed (exit {proc.returncode}); see logs/{job.name}.train.log under --out")


# ----------------------------------------------------------------------------------- phi and eval
def phi_stats(args) -> None:
    for job in args.runs:
        run_dir = run_dir_of(job, args)
        # Interval checkpoints falling on an epoch end are not written by fairseq: checkpoint_last too.
        checkpoints = sorted(run_dir.glob("checkpoint_*_*.pt")) + sorted(run_dir.glob("checkpoint_last.pt"))
        output = run_dir / "phi_usage.json"
        if not job.variant.uses_phi() or not checkpoints:
            continue
        if output.is_file() and output.stat().st_mtime > max(c.stat().st_mtime for c in checkpoints):
            log(f"{job.name}: phi usage up to date")
            continue
        cmd = [sys.executable, "-m", "experiments.bible_mt.phi_usage", "--data", args.data, "--output", output,
               "--fresh", *checkpoints]
        run(cmd, args)


def bleu_command(data: Path, save_dir: Path, checkpoint: Path, tag: str) -> List:
    """scripts/mt/evaluate.sh on the test split (beam 5, length penalty 0.6, SacreBLEU) into
    SAVE_DIR/eval/TAG/result.json."""
    return ["bash", REPO / "scripts/mt/evaluate.sh", "--data", data, "--save-dir", save_dir, "--split", "test",
            "--checkpoint", checkpoint, "--cpu", "--beam", "5", "--lenpen", "0.6", "--tag", tag]


def evaluate(args) -> None:
    for job in args.runs:  # not "run": that is the function below
        run_dir = run_dir_of(job, args)
        if not (run_dir / "checkpoint_last.pt").is_file():
            log(f"{job.name}: no checkpoint_last.pt, not evaluated")
            continue
        run(bleu_command(args.data, run_dir, run_dir / "checkpoint_last.pt",
                         f"test_u{trained_updates(log_of(job, args))}"), args)


# -------------------------------------------------------------------------------------- summary
def collect(args) -> Dict[str, dict]:
    rows = {}
    for job in args.runs:
        run_dir, log_file, variant = run_dir_of(job, args), log_of(job, args), job.variant
        if not log_file.is_file():
            continue
        text = log_file.read_text(encoding="utf-8", errors="replace")
        curve = valid_curve(text)
        updates = curve[-1].updates if curve else 0
        bleu_at = {}  # every evaluated budget (a run continued to more updates keeps its earlier scores)
        for result_file in run_dir.glob("eval/test_u*/result.json"):
            bleu_at[int(result_file.parent.name[len("test_u"):])] = json.loads(result_file.read_text())
        result = bleu_at.get(updates, {})
        phi_file = run_dir / "phi_usage.json"
        rows[job.name] = {
            "variant": variant.name,
            "seed": job.seed,
            "description": variant.description,
            "train_args": list(variant.train_args) + list(variant.fairseq_args),
            "updates": updates,
            "train_wall_s": train_wall_seconds(text),  # fairseq's, on a shared machine: not a benchmark
            "bleu": result.get("bleu"),
            "bleu_signature": result.get("signature"),
            "bleu_at": {str(u): bleu_at[u].get("bleu") for u in sorted(bleu_at)},
            "valid_loss_at": {str(u): loss_at(curve, u) for u in REPORT_UPDATES if loss_at(curve, u) is not None},
            "curve": [p._asdict() for p in curve],
            "phi_usage": json.loads(phi_file.read_text()) if phi_file.is_file() else None,
        }
    return rows


def _ours(path: Path) -> bool:
    if not path.exists():
        return True
    try:
        return json.loads(path.read_text()).get("generator") in (GENERATOR, *EARLIER_GENERATORS)
    except (ValueError, AttributeError):
        return False


def summarise(args) -> None:
    rows = collect(args)
    if not rows:
        die(f"no training logs under {args.out / 'logs'}: run the train stage first")
    target = args.summary_dir
    json_path, md_path, png_path = (target / f"compare_bible.{ext}" for ext in ("json", "md", "png"))
    if not _ours(json_path) or (not json_path.exists() and (md_path.exists() or png_path.exists())):
        die(f"{target} holds compare_bible.* files this script did not write; choose another --summary-dir")
    summary = {"generator": GENERATOR, "settings": {"model": list(MODEL_ARGS), "schedule": list(SCHEDULE),
                                                     "budget": args.max_update}, "models": rows}
    summary["catch_up"] = catch_up(rows)
    summary["seed_means"] = seed_means(rows)
    if args.dry_run:
        print(markdown(rows, summary))
        return
    target.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(summary, indent=1) + "\n")
    md_path.write_text(markdown(rows, summary))
    try:
        plot_curves(str(png_path), {n: [ValidPoint(**p) for p in r["curve"]] for n, r in rows.items()},
                    "Bible ES-EN, 3+3 layers x 256: validation loss against updates")
    except ImportError:
        log("matplotlib is not installed: no PNG (pip install matplotlib, or rerun --stages summary with a "
            "Python that has it)")
    print(md_path.read_text())


def main(argv=None) -> None:
    args = parse_args(argv)
    for stage, step in (("prepare", prepare), ("train", train), ("phi", phi_stats), ("eval", evaluate),
                        ("summary", summarise)):
        if stage in args.stages:
            step(args)


if __name__ == "__main__":
    main()
