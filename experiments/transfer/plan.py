"""The ordered steps of the transfer evidence and their commands.

Per seed, cheapest and most informative first: the softmax source to P + 100 (its checkpoint at P
is the source, the later ones the source continued); each variant converted from the source at P,
scored before any update, transferred where the variant says so (and scored again), continued
for 100 updates and scored at each point of the curve; then ABC-64 and GSA-64 from scratch to
P + K + 100, scored at equal updates and at equal tokens. Steps are ``experiments.uptraining``'s
(``Step``, ``Checkpoint``, run by its ``Executor``); only test perplexity is read.
"""

import os
from typing import List, Sequence

from experiments.uptraining import settings as U
from experiments.uptraining.plan import CODE, Checkpoint, Step, data_step

from . import settings as S

TRANSFERRED = "transferred.pt"  # a transferred variant's starting checkpoint
LONG_TRANSFERRED = f"transferred_{S.LONG_TRANSFER_UPDATES}.pt"  # the longer transfer's output


class TransferPlan:
    """Builds the steps under ``root`` (runs/, data-bin/)."""

    def __init__(self, root: str, seeds: Sequence[int]):
        self.root = os.path.abspath(root)
        self.data = os.path.join(self.root, "data-bin")
        self.seeds = list(seeds)

    def run_dir(self, name: str) -> str:
        return os.path.join(self.root, "runs", name)

    def train_step(self, model: str, seed: int, updates: int) -> Step:
        """fairseq-train from scratch with the quickstart's arguments. Checkpoints (and fairseq's
        validation) every 25 updates from P on only (--validate-after-updates gates both; the
        epoch ends still save checkpoint_last.pt, from which an interrupted run resumes)."""
        name = S.scratch_name(model, seed)
        folder = self.run_dir(name)
        args = (["fairseq-train", self.data, "--user-dir", f"{CODE}/abc_fairseq"] + U.QUICKSTART_TRAIN
                + ["--seed", str(seed)] + U.QUICKSTART_RUNTIME + U.MODEL_FLAGS[model]
                + ["--max-update", str(updates), "--max-epoch", "0", "--save-dir", os.path.join(folder, "checkpoints"),
                   "--save-interval-updates", str(U.EVAL_EVERY), "--keep-interval-updates", "-1",
                   "--validate-after-updates", str(S.PRETRAIN_UPDATES)])
        return Step("train", f"train {name}", name, model, seed, args, "budget",
                    budget=f"max_update={updates}", log=os.path.join(folder, "train.log"), updates=updates)

    def source(self, seed: int) -> Checkpoint:
        return Checkpoint(self.run_dir(S.scratch_name("softmax", seed)), S.PRETRAIN_UPDATES)

    def convert_step(self, variant: str, seed: int) -> Step:
        """python -m abc_fairseq.convert of the source at P (new parameters seeded by the seed)."""
        name = S.converted_name(variant, seed)
        folder = self.run_dir(name)
        output = os.path.join(folder, "converted.pt")
        args = (["python", "-m", "abc_fairseq.convert", "--input", self.source(seed), "--output", output]
                + S.VARIANTS[variant]["flags"] + ["--seed", str(seed)])
        return Step("convert", f"convert {name}", name, S.variant_model(variant), seed, args, "file",
                    product=output, log=os.path.join(folder, "convert.log"), needs=[self.source(seed)])

    def transfer_step(self, variant: str, seed: int, updates: int = S.TRANSFER_UPDATES) -> Step:
        """python -m abc_fairseq.transfer of the converted checkpoint: ``updates`` updates on the
        training data, only the parameters the conversion added trained. The longer transfer
        resumes the same run state (--save-dir) and writes its own output."""
        name = S.converted_name(variant, seed)
        folder = self.run_dir(name)
        converted = Checkpoint(folder, 0)
        longer = updates != S.TRANSFER_UPDATES
        output = os.path.join(folder, LONG_TRANSFERRED if longer else TRANSFERRED)
        args = ["python", "-m", "abc_fairseq.transfer", "--input", converted, "--output", output,
                "--save-dir", os.path.join(folder, "transfer"), "--data", self.data,
                "--max-updates", str(updates), "--lr", S.TRANSFER_LR,
                "--max-tokens", str(S.TRANSFER_MAX_TOKENS), "--seed", str(seed), "--cpu"]
        return Step("transfer", f"{'long' if longer else ''}transfer {name}", name, S.variant_model(variant), seed,
                    args, "file", product=output, updates=updates,
                    log=os.path.join(folder, S.transfer_log(updates)),
                    needs=[Checkpoint(folder, 0, TRANSFERRED)] if longer else [converted])

    def start(self, variant: str, seed: int) -> Checkpoint:
        """Where a variant's continued updates start: the transferred or the converted checkpoint."""
        folder = self.run_dir(S.converted_name(variant, seed))
        return Checkpoint(folder, 0, TRANSFERRED if S.VARIANTS[variant]["transfer"] else "converted.pt")

    def uptrain_step(self, variant: str, seed: int) -> Step:
        """scripts/lm/uptrain.sh for the continued updates, as the uptraining evidence runs it."""
        name = S.converted_name(variant, seed)
        folder = self.run_dir(name)
        start = self.start(variant, seed)
        args = (["bash", f"{CODE}/scripts/lm/uptrain.sh", "--checkpoint", start, "--data", self.data,
                 "--save-dir", os.path.join(folder, "checkpoints"), "--lr", U.UPTRAIN_LR,
                 "--warmup", str(U.UPTRAIN_WARMUP), "--max-update", str(S.CONTINUE_UPDATES), "--seed", str(seed)]
                + U.UPTRAIN_RECIPE + ["--"] + U.UPTRAIN_EXTRA)
        return Step("uptrain", f"uptrain {name}", name, S.variant_model(variant), seed, args, "budget",
                    budget=f"max_update={S.CONTINUE_UPDATES}", log=os.path.join(folder, "train.log"),
                    updates=S.CONTINUE_UPDATES, needs=[start])

    def eval_step(self, run: str, model: str, seed: int, checkpoint: Checkpoint, label: str) -> Step:
        """fairseq-eval-lm of one checkpoint on test with the quickstart's evaluation arguments."""
        log = os.path.join(self.run_dir(run), "eval", f"{label}_test.log")
        args = (["fairseq-eval-lm", self.data, "--user-dir", f"{CODE}/abc_fairseq", "--path", checkpoint]
                + U.QUICKSTART_EVAL + ["--gen-subset", "test"])
        return Step("eval", f"eval {run} @{label} test", run, model, seed, args, "ppl", product=log, log=log,
                    updates=checkpoint.updates, split="test", needs=[checkpoint])

    def run_evals(self, run: str, model: str, seed: int, updates: Sequence[int]) -> List[Step]:
        folder = self.run_dir(run)
        return [self.eval_step(run, model, seed, Checkpoint(folder, u), f"u{u}") for u in updates]

    def variant_steps(self, variant: str, seed: int) -> List[Step]:
        name, model = S.converted_name(variant, seed), S.variant_model(variant)
        folder = self.run_dir(name)
        out = [self.convert_step(variant, seed),
               self.eval_step(name, model, seed, Checkpoint(folder, 0), "converted")]
        if S.VARIANTS[variant]["transfer"]:
            out += [self.transfer_step(variant, seed),
                    self.eval_step(name, model, seed, Checkpoint(folder, 0, TRANSFERRED), "transferred")]
        out.append(self.uptrain_step(variant, seed))
        return out + self.run_evals(name, model, seed, [k for k in S.CURVE if k])

    def steps(self) -> List[Step]:
        out = [data_step(self.data)]
        for seed in self.seeds:
            softmax = S.scratch_name("softmax", seed)
            out.append(self.train_step("softmax", seed, S.PRETRAIN_UPDATES + S.CONTINUE_UPDATES))
            out += self.run_evals(softmax, "softmax", seed, S.source_curve())
            for variant in S.VARIANTS:
                out += self.variant_steps(variant, seed)
            for model in S.SCRATCH:
                out.append(self.train_step(model, seed, S.SCRATCH_UPDATES))
                out += self.run_evals(S.scratch_name(model, seed), model, seed, S.scratch_curve())
        out += self.long_transfer_steps()
        return out

    def long_transfer_steps(self) -> List[Step]:
        """Last: each transfer resumed to LONG_TRANSFER_UPDATES and scored before any LM update."""
        out = []
        for seed in self.seeds:
            for variant, spec in S.VARIANTS.items():
                if spec["transfer"]:
                    name, model = S.converted_name(variant, seed), S.variant_model(variant)
                    out += [self.transfer_step(variant, seed, S.LONG_TRANSFER_UPDATES),
                            self.eval_step(name, model, seed, Checkpoint(self.run_dir(name), 0, LONG_TRANSFERRED),
                                           f"transferred_{S.LONG_TRANSFER_UPDATES}")]
        return out
