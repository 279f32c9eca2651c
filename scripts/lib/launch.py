#!/usr/bin/env python3
"""The one launcher of the training recipes (scripts/lm, scripts/mt, scripts/roberta).

A recipe hands over its fairseq-train arguments and its batch; this prints the one command line
that runs them (shell-quoted, on stdout; the batch arithmetic on stderr). The recipe's bash
(scripts/lib/launcher.sh) prints it for --dry-run, or claims and locks the save dir and runs it.

  python3 scripts/lib/launch.py [options] -- DATA ARGS... [-- EXTRA...]

DATA and ARGS are the recipe's fairseq-train arguments, EXTRA the user's (they come last, so they
override). Only the standard library is used: a dry run needs no torch, no fairseq, no GPU.

Processes: --nproc-per-node N per node, default: with --cpu 1, else the GPUs in
CUDA_VISIBLE_DEVICES when it is set, else the lines 'GPU ...' of nvidia-smi -L (a dry run that
finds none shows 1). processes = nnodes x nproc-per-node.

Batch (one rule for every recipe): an update holds exactly --target units (tokens or sentences),
  per_process = target / (processes x update_freq)
with update_freq the smallest integer that makes per_process a whole number of --quantum units, at
most --per-process (the recipe's maximum per process and pass; default the target) and at least
--min-per-process (what one process must hold: the longest example, a whole segment). Where the
maximum divides target / processes this is per_process = min(maximum, target / processes). Where no
update_freq splits the target exactly, the launch is refused with the flags to change, unless
--allow-batch-mismatch: then per_process = min(maximum, target / processes rounded up to the
quantum), update_freq = ceil(target / (processes x per_process)), and a warning gives the batch
trained. The flags --max-tokens (tokens) or --batch-size (sentences) and --update-freq go right
after DATA. A run resumed on another process count keeps its batch by the same rule, its
learning-rate schedule (counted in updates) and its place in the data (the plugin's
abc_fairseq/data_position.py maps the saved position to the new layout).

Launch shape:
  1 process     PROGRAM ARGS --distributed-world-size 1 (fairseq's default is every visible GPU)
  1 node        torchrun --standalone --nproc_per_node G --no-python sh -c RANKED PROGRAM ARGS
  N nodes       srun --nodes N --ntasks-per-node 1 torchrun --nnodes N --nproc_per_node G
                --rdzv_backend c10d --rdzv_id JOB --rdzv_endpoint FIRST_NODE:PORT
                --no-python sh -c RANKED PROGRAM ARGS
PROGRAM is fairseq-train (or python -m MODULE with --train-module); RANKED hands torchrun's RANK
and LOCAL_RANK to fairseq (--distributed-rank, --device-id), which also gets
--distributed-world-size, --distributed-init-method env:// and --distributed-no-spawn (with
--cpu also --distributed-backend gloo --ddp-backend legacy_ddp, as fairseq 0.12 needs on CPU).
Several nodes (GPU nodes, or CPU nodes with --cpu: gloo) run inside a SLURM allocation (the
recipe's .sbatch): JOB is SLURM_JOB_ID, FIRST_NODE the allocation's first host; outside one, a
dry run shows the placeholders JOB_ID and FIRST_NODE and a real run is refused with the sbatch
command.
"""

import argparse
import os
import shlex
import subprocess
import sys

RANKED = 'exec "$0" "$@" --distributed-rank "$RANK" --device-id "$LOCAL_RANK"'
BATCH_FLAGS = {"tokens": "--max-tokens", "sentences": "--batch-size"}


def positive(text):
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("expects a positive integer, got %r" % text)
    return value


def note(message):
    print("launch: %s" % message, file=sys.stderr)


def fail(message):
    print("launch: ERROR: %s" % message, file=sys.stderr)
    sys.exit(1)


def count_gpus(environ=os.environ):
    """GPUs of this node: CUDA_VISIBLE_DEVICES when set (what torch would see), else nvidia-smi -L."""
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip() and not d.strip().startswith("-")])
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(line.startswith("GPU") for line in listing.splitlines())


def processes_per_node(args):
    """--nproc-per-node, or the default of the module docstring."""
    if args.nproc_per_node:
        return args.nproc_per_node
    if args.cpu:
        return 1
    gpus = count_gpus()
    if gpus:
        return gpus
    if args.dry_run:
        note("dry run: no GPU found, showing one process per node (--nproc-per-node N sets it)")
        return 1
    fail("no GPU found (CUDA_VISIBLE_DEVICES, nvidia-smi); give --nproc-per-node N, or --cpu for a CPU run")


class Batch:
    """What one process holds per pass and how many passes an update takes (the module docstring's rule)."""

    def __init__(self, unit, target, maximum=None, quantum=1, minimum=1):
        self.unit, self.target, self.quantum = unit, target, quantum
        self.maximum = maximum or target
        self.minimum = max(minimum, quantum)

    def exact(self, processes):
        """(per_process, update_freq) holding exactly the target on PROCESSES, or None."""
        update_freq = max(1, -(-self.target // (processes * self.maximum)))
        while processes * update_freq * self.minimum <= self.target:
            if self.target % (processes * update_freq) == 0:
                per_process = self.target // (processes * update_freq)
                if per_process % self.quantum == 0 and per_process <= self.maximum:
                    return per_process, update_freq
            update_freq += 1
        return None

    def nearest(self, processes):
        """(per_process, update_freq) of --allow-batch-mismatch: at least the target, rounded up."""
        share = -(-self.target // processes)
        per_process = min(self.maximum, max(self.minimum, -(-share // self.quantum) * self.quantum))
        return per_process, -(-self.target // (processes * per_process))

    def exact_process_counts(self, limit=256):
        """The process counts up to LIMIT on which the target splits exactly (for the refusal)."""
        return [p for p in range(1, limit + 1) if self.exact(p)]


def plan_batch(args, processes):
    """(per_process, update_freq) by the one rule; refused where the target cannot be held exactly."""
    rule = Batch(args.unit, args.target, args.per_process, args.quantum, args.min_per_process)
    plan = rule.exact(processes)
    if plan is None:
        per_process, update_freq = rule.nearest(processes)
        reached = processes * per_process * update_freq
        if not args.allow_batch_mismatch:
            shape = "at most %d %s per process (%s)" % (rule.maximum, args.unit, args.per_process_flag)
            if rule.quantum > 1:
                shape += ", in multiples of %d" % rule.quantum
            if rule.minimum > rule.quantum:
                shape += ", at least %d" % rule.minimum
            flags = [args.per_process_flag] + ([args.target_flag] if args.target_flag else [])
            fail("%d %s per update cannot be split exactly over %d process(es) in whole passes of %s. Change the "
                 "process count (--nproc-per-node x --nnodes; these hold it: %s) or %s, or pass "
                 "--allow-batch-mismatch to train with %d %s per update instead (another experiment: the learning "
                 "rate and schedule stay the recipe's)"
                 % (args.target, args.unit, processes, shape, ", ".join(map(str, rule.exact_process_counts())),
                    " or ".join(flags), reached, args.unit))
        print("launch: WARNING: --allow-batch-mismatch: %d process(es) x %d %s x update-freq %d = %d %s per "
              "update, not the target %d (%+.1f%%)" % (processes, per_process, args.unit, update_freq, reached,
                                                        args.unit, args.target, 100.0 * (reached / args.target - 1)),
              file=sys.stderr)
        return per_process, update_freq
    per_process, update_freq = plan
    note("%d process(es) x %d %s x update-freq %d = %d %s per update (the target)"
         % (processes, per_process, args.unit, update_freq, args.target, args.unit))
    return per_process, update_freq


def rendezvous(args, gpus):
    """(job id, first node) of the SLURM allocation, or placeholders for a dry run outside one."""
    job, nodelist = os.environ.get("SLURM_JOB_ID"), os.environ.get("SLURM_JOB_NODELIST")
    per_node = "" if args.cpu else " --gpus-per-node %d" % gpus
    submit = "sbatch --nodes %d --ntasks-per-node 1%s %s %s" % (args.nnodes, per_node, args.sbatch,
                                                               args.recipe_argv.strip())
    if not (job and nodelist):
        if not args.dry_run:
            fail("--nnodes %d needs a SLURM allocation (one torchrun per node, started by srun); submit: %s"
                 % (args.nnodes, submit))
        note("dry run outside a SLURM allocation: JOB_ID and FIRST_NODE stand for the job's id and first "
             "node; submit: %s" % submit)
        return "JOB_ID", "FIRST_NODE"
    try:
        hosts = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as error:
        fail("cannot list the allocation's nodes with scontrol (%s)" % error)
    return job, hosts[0]


def command(args, fairseq_args, extra):
    """The full command line (a list of words)."""
    gpus = processes_per_node(args)
    processes = args.nnodes * gpus
    per_process, update_freq = plan_batch(args, processes)
    program = ["python", "-m", args.train_module] if args.train_module else ["fairseq-train"]
    train = [fairseq_args[0], BATCH_FLAGS[args.unit], str(per_process), "--update-freq", str(update_freq),
             *fairseq_args[1:]]
    if args.cpu:
        train.append("--cpu")
    if processes == 1:  # fairseq's own default is every visible GPU: one process means one
        return program + train + ["--distributed-world-size", "1"] + extra
    train += ["--distributed-world-size", str(processes), "--distributed-init-method", "env://",
              "--distributed-no-spawn"]
    if args.cpu:  # fairseq 0.12 on CPU processes: gloo and the legacy DDP
        train += ["--distributed-backend", "gloo", "--ddp-backend", "legacy_ddp"]
    ranked = ["--no-python", "sh", "-c", RANKED, *program, *train, *extra]
    if args.nnodes == 1:
        return ["torchrun", "--standalone", "--nproc_per_node", str(gpus), *ranked]
    job, host = rendezvous(args, gpus)
    return ["srun", "--nodes", str(args.nnodes), "--ntasks-per-node", "1",
            "torchrun", "--nnodes", str(args.nnodes), "--nproc_per_node", str(gpus), "--rdzv_backend", "c10d",
            "--rdzv_id", job, "--rdzv_endpoint", "%s:%d" % (host, args.rdzv_port), *ranked]


def parser():
    p = argparse.ArgumentParser(prog="launch.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nnodes", type=positive, default=1, help="nodes (default 1)")
    p.add_argument("--nproc-per-node", type=positive, help="processes per node (default: see above)")
    p.add_argument("--cpu", action="store_true", help="train on CPU (gloo when several processes)")
    p.add_argument("--unit", choices=sorted(BATCH_FLAGS), required=True, help="what the batch counts")
    p.add_argument("--target", type=positive, required=True, help="units per update to reach")
    p.add_argument("--per-process", type=positive,
                   help="the most units per process and pass (default: the target)")
    p.add_argument("--quantum", type=positive, default=1,
                   help="units per process come in multiples of this (e.g. the LM's 512-token segment; default 1)")
    p.add_argument("--min-per-process", type=positive, default=1,
                   help="the fewest units one process may hold (e.g. the longest training example; default 1)")
    p.add_argument("--allow-batch-mismatch", action="store_true",
                   help="train with the nearest batch when the target cannot be split exactly (a warning says which)")
    p.add_argument("--per-process-flag", default="--per-process",
                   help="the recipe's flag of the per-process maximum (named in messages)")
    p.add_argument("--target-flag", default="",
                   help="the recipe's flag of the target, if it has one (named in messages)")
    p.add_argument("--train-module", help="run python -m MODULE instead of fairseq-train")
    p.add_argument("--rdzv-port", type=positive, default=29500, help="the rendezvous port (default 29500)")
    p.add_argument("--sbatch", default="the recipe's .sbatch", help="the recipe's .sbatch (named in messages)")
    p.add_argument("--recipe-argv", default="", help="the recipe's arguments, shell-quoted (named in messages)")
    p.add_argument("--dry-run", action="store_true", help="placeholders instead of errors where nothing runs")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        if any(a in ("-h", "--help") for a in argv):
            parser().parse_args(argv)
        parser().error("the recipe's fairseq arguments go after '--'")
    cut = argv.index("--")
    args = parser().parse_args(argv[:cut])
    rest = argv[cut + 1:]
    fairseq_args, extra = (rest[:rest.index("--")], rest[rest.index("--") + 1:]) if "--" in rest else (rest, [])
    if not fairseq_args:
        parser().error("no fairseq arguments after '--' (DATA first)")
    print(shlex.join(command(args, fairseq_args, extra)))


if __name__ == "__main__":
    main()
