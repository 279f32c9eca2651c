"""The ordered steps of the evidence and their commands.

A step is one command: build the data, train a model from scratch, convert the softmax source,
continue a converted model (``scripts/lm/uptrain.sh``), or score one checkpoint on one split
(``fairseq-eval-lm``). Commands hold two kinds of placeholder resolved when the step runs: ``CODE``
(the worktree whose code runs the step) and ``Checkpoint`` (a run's checkpoint at an update count,
whose file name carries the epoch fairseq was in).

The order puts the cheap and most informative steps first, so that a deadline loses the least:
softmax seeds, the conversions (converted ABC, then converted GSA), the softmax curve's points
between P and P + U (cheap evaluations, the conversions' comparison), ABC from scratch, GSA from
scratch, the extra seeds (to P only; softmax and GSA, the pair of GSA's quality claim, before
ABC). Each run's evaluations follow its training.
"""

import glob
import os
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Union

from . import settings as S

CODE = "{code}"  # the worktree running the step


@dataclass(frozen=True)
class Checkpoint:
    """A run's checkpoint at ``updates`` (0: the run's starting checkpoint ``start``, before any
    update: the converted checkpoint, or the output of attention transfer)."""

    run_dir: str
    updates: int
    start: str = "converted.pt"

    def pattern(self) -> str:
        if self.updates == 0:
            return os.path.join(self.run_dir, self.start)
        return os.path.join(self.run_dir, "checkpoints", f"checkpoint*_{self.updates}.pt")

    def resolve(self) -> Optional[str]:
        """The file, or None while it does not exist. fairseq names a mid-epoch save
        checkpoint{epoch}_{updates}.pt; the final update's state is also checkpoint_last.pt."""
        found = sorted(glob.glob(self.pattern()))
        return found[0] if found else None

    def __str__(self) -> str:
        return self.pattern()


Arg = Union[str, Checkpoint]


@dataclass
class Step:
    """One command of the plan. ``run`` names the run folder it belongs to, ``model`` the attention
    (softmax, abc, gsa) whose code it exercises, ``done_when`` how its completion is recognised:
    'budget' (the run's ``done`` file holds ``budget``), 'file' (``product`` exists) or 'ppl' (the
    log ``product`` holds a perplexity)."""

    kind: str
    name: str
    run: str
    model: str
    seed: int
    args: List[Arg]
    done_when: str
    product: str = ""
    budget: str = ""
    log: str = ""
    updates: int = 0
    split: str = ""
    needs: List[Checkpoint] = field(default_factory=list)

    def command(self, code: str) -> List[str]:
        """The command with CODE and every checkpoint resolved (unresolved ones shown as patterns)."""
        words = []
        for arg in self.args:
            if isinstance(arg, Checkpoint):
                words.append(arg.resolve() or str(arg))
            else:
                words.append(arg.replace(CODE, code))
        return words


def data_step(data: str) -> Step:
    """The embedded corpus prepared into ``data`` (data_prep/default_corpus/prepare.sh)."""
    return Step("data", "data", "data", "", 0, ["bash", f"{CODE}/data_prep/default_corpus/prepare.sh", data],
                "file", product=os.path.join(data, ".prepared_sha256"))


class Plan:
    """Builds the steps under ``root`` (runs/, data-bin/)."""

    def __init__(self, root: str, seeds: Sequence[int], extra_seeds: Sequence[int] = (),
                 lr: str = S.UPTRAIN_LR, warmup: int = S.UPTRAIN_WARMUP):
        self.root = os.path.abspath(root)
        self.data = os.path.join(self.root, "data-bin")
        self.seeds, self.extra_seeds = list(seeds), list(extra_seeds)
        self.lr, self.warmup = lr, warmup
        self.final = S.PRETRAIN_UPDATES + S.CONTINUE_UPDATES

    def run_dir(self, name: str) -> str:
        return os.path.join(self.root, "runs", name)

    # --- single steps -------------------------------------------------------------------------
    def train_step(self, model: str, seed: int, updates: int) -> Step:
        """fairseq-train from scratch with the quickstart's arguments; checkpoints every 25 updates
        for softmax trained beyond P (its curve to P + U), else every 100 (P and P + U; fairseq
        validates at every save)."""
        name = S.scratch_name(model, seed)
        folder = self.run_dir(name)
        every = S.EVAL_EVERY if model == "softmax" and updates > S.PRETRAIN_UPDATES else 100
        args = (["fairseq-train", self.data, "--user-dir", f"{CODE}/abc_fairseq"] + S.QUICKSTART_TRAIN
                + ["--seed", str(seed)] + S.QUICKSTART_RUNTIME + S.MODEL_FLAGS[model]
                + ["--max-update", str(updates), "--max-epoch", "0", "--save-dir", os.path.join(folder, "checkpoints"),
                   "--save-interval-updates", str(every), "--keep-interval-updates", "-1"])
        return Step("train", f"train {name}", name, model, seed, args, "budget",
                    budget=f"max_update={updates}", log=os.path.join(folder, "train.log"), updates=updates)

    def convert_step(self, model: str, seed: int) -> Step:
        """python -m abc_fairseq.convert of the softmax source's checkpoint at P (the control
        parameters seeded by the run's seed)."""
        name = S.converted_name(model, seed)
        folder = self.run_dir(name)
        source = Checkpoint(self.run_dir(S.scratch_name("softmax", seed)), S.PRETRAIN_UPDATES)
        output = os.path.join(folder, "converted.pt")
        args = ["python", "-m", "abc_fairseq.convert", "--input", source, "--output", output,
                "--decoder-self-attn", model, "--decoder-self-memory", str(S.MEMORY), "--seed", str(seed)]
        return Step("convert", f"convert {name}", name, model, seed, args, "file", product=output,
                    log=os.path.join(folder, "convert.log"), needs=[source])

    def uptrain_step(self, model: str, seed: int) -> Step:
        """scripts/lm/uptrain.sh on the converted checkpoint for U updates (it restores with every
        --reset-* on the first start and resumes its own save dir afterwards)."""
        name = S.converted_name(model, seed)
        folder = self.run_dir(name)
        converted = Checkpoint(folder, 0)
        args = (["bash", f"{CODE}/scripts/lm/uptrain.sh", "--checkpoint", converted, "--data", self.data,
                 "--save-dir", os.path.join(folder, "checkpoints"), "--lr", self.lr, "--warmup", str(self.warmup),
                 "--max-update", str(S.CONTINUE_UPDATES), "--seed", str(seed)] + S.UPTRAIN_RECIPE
                + ["--"] + S.UPTRAIN_EXTRA)
        return Step("uptrain", f"uptrain {name}", name, model, seed, args, "budget",
                    budget=f"max_update={S.CONTINUE_UPDATES}", log=os.path.join(folder, "train.log"),
                    updates=S.CONTINUE_UPDATES, needs=[converted])

    def eval_step(self, run: str, model: str, seed: int, updates: int, split: str) -> Step:
        """fairseq-eval-lm of the run's checkpoint at ``updates`` on ``split``, with the quickstart's
        evaluation arguments."""
        folder = self.run_dir(run)
        checkpoint = Checkpoint(folder, updates)
        log = os.path.join(folder, "eval", f"u{updates}_{split}.log")
        args = (["fairseq-eval-lm", self.data, "--user-dir", f"{CODE}/abc_fairseq", "--path", checkpoint]
                + S.QUICKSTART_EVAL + ["--gen-subset", split])
        return Step("eval", f"eval {run} @{updates} {split}", run, model, seed, args, "ppl", product=log, log=log,
                    updates=updates, split=split, needs=[checkpoint])

    def evals(self, run: str, model: str, seed: int, updates: Sequence[int]) -> List[Step]:
        return [self.eval_step(run, model, seed, u, split) for u in updates for split in ("valid", "test")]

    # --- the whole plan -----------------------------------------------------------------------
    def steps(self) -> List[Step]:
        P, F = S.PRETRAIN_UPDATES, self.final
        out = [data_step(self.data)]
        for seed in self.seeds:
            out.append(self.train_step("softmax", seed, F))
            out += self.evals(S.scratch_name("softmax", seed), "softmax", seed, [P, F])
        for model in S.CONVERTED:
            for seed in self.seeds:
                run = S.converted_name(model, seed)
                out += [self.convert_step(model, seed)] + self.evals(run, model, seed, [0])
                out.append(self.uptrain_step(model, seed))
                out += self.evals(run, model, seed, range(S.EVAL_EVERY, S.CONTINUE_UPDATES + 1, S.EVAL_EVERY))
        for seed in self.seeds:
            middle = [u for u in S.softmax_curve_updates(F) if u not in (P, F)]
            out += self.evals(S.scratch_name("softmax", seed), "softmax", seed, middle)
        for model in S.CONVERTED:
            for seed in self.seeds:
                out.append(self.train_step(model, seed, F))
                out += self.evals(S.scratch_name(model, seed), model, seed, [P, F])
        for seed in self.extra_seeds:
            for model in S.EXTRA_SEED_ORDER:
                out.append(self.train_step(model, seed, P))
                out += self.evals(S.scratch_name(model, seed), model, seed, [P])
        return out
