"""Checkpoints are loaded safely and a damaged one is named with a way out:

- fairseq-train resuming from a ``checkpoint_last.pt`` truncated on disk (as by a kill during
  fairseq's copy) stops with an error naming it and the newest intact checkpoint, with the
  ``--restore-file`` to pass (a real tiny training run, about 30 s);
- ``scripts/mt/average_checkpoints.py`` reads weights-only with the plugin's allowlist;
- ``convert_roberta`` advises ``--trust-checkpoint`` only for a real checkpoint holding refused
  objects, never for a file that is no checkpoint at all.
"""

import argparse
import fractions
import os
import random
import subprocess
import sys

import pytest
import torch
from test_fairseq_cli import LM_MODEL, LM_TRAIN, fairseq, num_updates, write_lines

from abc_fairseq.checkpoint_compat import CheckpointLoadError, load_checkpoint_file
from abc_fairseq.checkpoint_integrity import (
    DamagedCheckpointError,
    guard_checkpoint_loading,
    is_damaged,
    newest_intact_checkpoint,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _truncate(path, keep=0.5):
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def _save(path, mtime, **state):
    torch.save({"model": {"w": torch.ones(2)}, **state}, path)
    os.utime(path, (mtime, mtime))


# -------------------------------------------------------------------------------- damage detection
def test_damage_is_detected_and_the_newest_intact_checkpoint_is_named(tmp_path):
    _save(tmp_path / "checkpoint1.pt", 1000)
    _save(tmp_path / "checkpoint2.pt", 2000)
    _save(tmp_path / "checkpoint_best.pt", 3000)
    _save(tmp_path / "checkpoint_last.pt", 4000)
    _truncate(tmp_path / "checkpoint_best.pt")  # newer than checkpoint2.pt, but damaged
    _truncate(tmp_path / "checkpoint_last.pt", keep=0.9)
    (tmp_path / "notes.pt").write_bytes(b"")  # not a checkpoint*.pt: never proposed
    assert is_damaged(str(tmp_path / "checkpoint_last.pt")) and is_damaged(str(tmp_path / "notes.pt"))
    assert not is_damaged(str(tmp_path / "checkpoint2.pt"))
    assert newest_intact_checkpoint(str(tmp_path / "checkpoint_last.pt")) == str(tmp_path / "checkpoint2.pt")

    assert guard_checkpoint_loading()
    from fairseq import checkpoint_utils

    with pytest.raises(DamagedCheckpointError) as error:
        checkpoint_utils.load_checkpoint_to_cpu(str(tmp_path / "checkpoint_last.pt"))
    message = str(error.value)
    assert str(tmp_path / "checkpoint_last.pt") in message
    assert f"--restore-file {tmp_path / 'checkpoint2.pt'}" in message
    assert (tmp_path / "checkpoint_last.pt").exists()  # left as it is
    # Other failures are fairseq's own.
    with pytest.raises(FileNotFoundError):
        checkpoint_utils.load_checkpoint_to_cpu(str(tmp_path / "missing.pt"))
    for name in ("checkpoint1.pt", "checkpoint2.pt"):
        (tmp_path / name).unlink()
    with pytest.raises(DamagedCheckpointError, match="No intact checkpoint"):
        checkpoint_utils.load_checkpoint_to_cpu(str(tmp_path / "checkpoint_last.pt"))


@pytest.fixture(scope="module")
def lm_data(tmp_path_factory):
    path = tmp_path_factory.mktemp("resume")
    rng = random.Random(1)
    words = [f"w{i}" for i in range(30)]
    for split, n in (("train", 120), ("valid", 10)):
        write_lines(path / f"{split}.txt",
                    [" ".join(rng.choice(words) for _ in range(rng.randint(5, 12))) for _ in range(n)])
    fairseq("preprocess", "--only-source", "--trainpref", path / "train.txt", "--validpref",
            path / "valid.txt", "--destdir", path / "bin", "--workers", "1")
    return path


def test_training_refuses_a_truncated_checkpoint_last_and_resumes_from_the_named_one(lm_data):
    save_dir = lm_data / "checkpoints"
    train = ["train", lm_data / "bin", "--user-dir", "abc_fairseq", *LM_MODEL, *LM_TRAIN, "--cpu",
             "--save-dir", save_dir, "--save-interval-updates", "1", "--no-epoch-checkpoints",
             "--disable-validation"]
    fairseq(*train, "--max-update", "2")
    intact = save_dir / "checkpoint_1_2.pt"
    assert num_updates(intact) == 2 and num_updates(save_dir / "checkpoint_last.pt") == 2
    _truncate(save_dir / "checkpoint_last.pt")  # killed while fairseq copied it
    code, log = fairseq(*train, "--max-update", "3", check=False)
    assert code != 0
    assert "DamagedCheckpointError" in log and f"{save_dir / 'checkpoint_last.pt'} is truncated" in log
    assert f"--restore-file {intact}" in log
    assert (save_dir / "checkpoint_last.pt").exists()  # left for the user to look at
    # The named checkpoint is a full resume point (fairseq's --restore-file then loads it as is).
    from fairseq import checkpoint_utils

    state = checkpoint_utils.load_checkpoint_to_cpu(str(intact))
    assert state["extra_state"]["train_iterator"]["epoch"] == 1 and "last_optimizer_state" in state


# ---------------------------------------------------------------------------- average_checkpoints
def _average(tmp_path, *inputs):
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "mt", "average_checkpoints.py"),
                           "--inputs", *map(str, inputs), "--output", str(tmp_path / "avg.pt")],
                          capture_output=True, text=True, timeout=300)


def test_average_checkpoints_loads_weights_only_with_the_plugins_allowlist(tmp_path):
    args = argparse.Namespace(arch="transformer", dropout=0.1)  # argparse-registered models keep args
    for i in (1, 2):
        torch.save({"model": {"w": torch.full((2,), float(i))}, "args": args}, tmp_path / f"c{i}.pt")
    proc = _average(tmp_path, tmp_path / "c1.pt", tmp_path / "c2.pt")
    assert proc.returncode == 0, proc.stderr
    averaged = load_checkpoint_file(str(tmp_path / "avg.pt"))
    assert torch.equal(averaged["model"]["w"], torch.full((2,), 1.5))
    assert averaged["args"].arch == "transformer"

    # A pickle naming a global outside the allowlist is refused, not executed.
    torch.save({"model": {"w": torch.ones(2)}, "extra": fractions.Fraction(1, 3)}, tmp_path / "odd.pt")
    proc = _average(tmp_path, tmp_path / "c1.pt", tmp_path / "odd.pt")
    assert proc.returncode != 0 and "odd.pt holds Python objects outside the allowlist" in proc.stderr
    assert "fractions.Fraction" in proc.stderr
    # The same loader (in process: each run of the script imports fairseq) names the other faults.
    (tmp_path / "text.pt").write_text("not a checkpoint\n")
    with pytest.raises(CheckpointLoadError, match="is not a torch checkpoint"):
        load_checkpoint_file(str(tmp_path / "text.pt"))
    _truncate(tmp_path / "c2.pt")
    with pytest.raises(CheckpointLoadError, match="c2.pt is truncated"):
        load_checkpoint_file(str(tmp_path / "c2.pt"))


# -------------------------------------------------------------------------------- convert_roberta
@pytest.mark.parametrize("content", [b"hello, this is a README\n", b'{"model": 1}',
                                     bytes(random.Random(0).randrange(256) for _ in range(4000)), b""],
                         ids=["text", "json", "random", "empty"])
def test_converter_does_not_advise_trusting_what_is_no_checkpoint(tmp_path, capsys, content):
    from abc_fairseq.convert_roberta import main

    (tmp_path / "in.pt").write_bytes(content)
    assert main(["--input", str(tmp_path / "in.pt"), "--output", str(tmp_path / "o.pt")]) == 1
    err = capsys.readouterr().err
    assert "--trust-checkpoint" not in err and "weights_only" not in err, err
    assert ("is not a torch checkpoint" in err) or ("is truncated" in err), err


def test_converter_advises_trust_only_for_refused_objects_and_names_truncation(tmp_path, capsys):
    from abc_fairseq.convert_roberta import main

    torch.save({"model": {}, "extra": fractions.Fraction(1, 3)}, tmp_path / "odd.pt")
    assert main(["--input", str(tmp_path / "odd.pt"), "--output", str(tmp_path / "o.pt")]) == 1
    assert "re-run with --trust-checkpoint" in capsys.readouterr().err
    torch.save({"model": {"w": torch.ones(100)}}, tmp_path / "model.pt")
    _truncate(tmp_path / "model.pt")
    assert main(["--input", str(tmp_path / "model.pt"), "--output", str(tmp_path / "o.pt")]) == 1
    err = capsys.readouterr().err
    assert "model.pt is truncated" in err and "--trust-checkpoint" not in err
