"""Real multi-node training through the recipes, on this machine: two torchrun agents meet through
the launcher's own c10d rendezvous on 127.0.0.1 (--nnodes 2 --nproc-per-node 1, CPU, gloo).

The recipe runs as its .sbatch runs it inside a two-node SLURM job; only SLURM's own tools are
stand-ins (scontrol lists the job's nodes as 127.0.0.1 twice, srun starts the command once per
node, concurrently). Each run trains a shrunk model for a few updates with the paper's batch rule,
checkpoints and resumes; its per-update losses equal those of one node with two processes (same
seed, same batch, same batches per process). A run resumed on another process count keeps its
tokens per update, its learning-rate schedule and its place in the data (the plugin's
data_position): on one process it reads the batches the two-process run would have read."""

import os
import re
import shutil
import subprocess
import sys

import pytest
from fairseq_helpers import ROOT
from mt_helpers import reversal_translation_data

FAKE_SRUN = """#!/usr/bin/env bash
# srun for one machine: runs the command once per node, concurrently; their outputs follow in order.
nodes=1
while [ $# -gt 0 ]; do
    case "$1" in
        --nodes) nodes="$2"; shift 2 ;;
        --ntasks-per-node) shift 2 ;;
        *) break ;;
    esac
done
logs="$(mktemp -d)" pids=() status=0
for ((i = 0; i < nodes; i++)); do
    SLURM_NODEID=$i "$@" >"$logs/$i" 2>&1 &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for ((i = 0; i < nodes; i++)); do sed "s/^/node$i: /" "$logs/$i"; done
rm -r "$logs"
exit $status
"""

# (update, loss, wpb, lr) of every train_inner line (--log-interval 1), the first node's where
# several print them (node0 is rank 0: fairseq logs training on rank 0 only)
INNER = re.compile(r"train_inner \| epoch \d+:\s+\d+ / \d+ loss=([\d.]+),.*?wpb=(\d+),.*?"
                   r"num_updates=(\d+), lr=([\d.e-]+)")


def updates(log):
    return {int(u): (float(loss), int(wpb), float(lr)) for loss, wpb, u, lr in INNER.findall(log)}


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """The environment of a two-node SLURM job on this machine (stand-in srun and scontrol)."""
    bin_dir = tmp_path_factory.mktemp("slurm_bin")
    (bin_dir / "srun").write_text(FAKE_SRUN)
    (bin_dir / "scontrol").write_text("#!/bin/sh\nprintf '127.0.0.1\\n127.0.0.1\\n'\n")
    for tool in ("srun", "scontrol"):
        (bin_dir / tool).chmod(0o755)
    return {"SLURM_JOB_ID": "4242", "SLURM_JOB_NODELIST": "localhost[1-2]",
            "PATH": os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable), os.environ["PATH"]])}


def run(argv, env=None):
    env = dict(os.environ, PYTHONWARNINGS="ignore", **(env or {}))
    env.setdefault("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    proc = subprocess.run([str(a) for a in argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-6000:]
    return log


# Dropout draws its masks from one generator per process, seeded per update: on another process
# count the same batches get other masks. Without it the resumed run can equal the uninterrupted one.
NO_DROPOUT = ["--dropout", "0", "--attention-dropout", "0", "--activation-dropout", "0"]


def same_update(got, want):
    """(loss, tokens, lr) of one update: the loss to the log's 3 decimals (summation order differs),
    the tokens exactly, the learning rate to the log's 4 significant digits."""
    return abs(got[0] - want[0]) <= 2e-3 and got[1] == want[1] and got[2] == pytest.approx(want[2], rel=1e-3)


def launch_flags(layout, port):
    """The recipe's launch flags of one layout: '2x1' (two nodes of one process), '1x2', '1x1'."""
    nodes, per_node = layout.split("x")
    flags = ["--cpu", "--nproc-per-node", per_node]
    if nodes != "1":
        flags += ["--nnodes", nodes, "--rdzv-port", str(port)]
    return flags


def train_resume_compare(recipe, tmp_path, slurm, port):
    """Train 2 updates on two nodes, resume them to 4 on two nodes and on one process; compare each
    with one node of two processes trained straight to 4. RECIPE(save dir) gives the recipe's
    arguments and its fairseq-train flags. Returns the logs by run."""
    def train(save, layout, max_update):
        env = slurm if layout.startswith("2x") else None
        flags, fairseq_flags = recipe(save)
        return run([*flags, *launch_flags(layout, port), "--", *fairseq_flags, "--max-update", str(max_update)],
                   env=env)

    logs = {"1x2": train(tmp_path / "one_node", "1x2", 4), "2x1": train(tmp_path / "two_nodes", "2x1", 2)}
    shutil.copytree(tmp_path / "two_nodes", tmp_path / "one_process")
    logs["2x1 resumed"] = train(tmp_path / "two_nodes", "2x1", 4)
    logs["1x1 resumed"] = train(tmp_path / "one_process", "1x1", 4)

    reference = updates(logs["1x2"])
    assert sorted(reference) == [1, 2, 3, 4]
    # the second node's agent joined the rendezvous and its process became rank 1 of 2
    assert re.search(r"^node1: .*initialized host .* as rank 1$", logs["2x1"], flags=re.M), logs["2x1"][-3000:]
    two_nodes = {**updates(logs["2x1"]), **updates(logs["2x1 resumed"])}
    assert sorted(two_nodes) == [1, 2, 3, 4]
    for update in reference:
        assert same_update(two_nodes[update], reference[update]), (update, two_nodes[update], reference[update])
    resumed = updates(logs["1x1 resumed"])
    assert sorted(resumed) == [3, 4]
    for update in (3, 4):  # same tokens per update, learning rate and batches as the uninterrupted run
        assert same_update(resumed[update], reference[update]), (update, resumed[update], reference[update])
    assert "resumes on another layout" in logs["1x1 resumed"]
    return logs


@pytest.mark.slow
def test_lm_on_two_nodes_equals_one_node(default_corpus, tmp_path, slurm):
    tiny = ["--decoder-layers", "2", "--decoder-embed-dim", "32", "--decoder-ffn-embed-dim", "64",
            "--decoder-attention-heads", "2", "--decoder-self-memory", "8", "--adaptive-input-cutoff", "100,200",
            "--adaptive-softmax-cutoff", "100,200", "--no-epoch-checkpoints", "--log-interval", "1",
            "--num-workers", "0", "--lr", "0.05", "--warmup-updates", "2", *NO_DROPOUT,
            "--adaptive-softmax-dropout", "0"]

    def recipe(save):
        return ["bash", "scripts/lm/train_wiki103.sh", "--row", "abc_n64", "--data", default_corpus, "--save-dir", save,
                "--max-tokens", "512", "--batch-tokens", "2048", "--no-tensorboard"], tiny

    logs = train_resume_compare(recipe, tmp_path, slurm, port=29631)
    assert "2 process(es) x 512 tokens x update-freq 2 = 2048 tokens per update (the target)" in logs["1x2"]
    assert "1 process(es) x 512 tokens x update-freq 4 = 2048 tokens per update (the target)" in logs["1x1 resumed"]


@pytest.mark.slow
def test_translation_on_two_nodes_equals_one_node(tmp_path_factory, tmp_path, slurm):
    data = reversal_translation_data(tmp_path_factory.mktemp("reversal"))
    tiny = ["--encoder-layers", "1", "--decoder-layers", "1", "--no-epoch-checkpoints", "--log-interval", "1",
            "--num-workers", "0", *NO_DROPOUT]

    def recipe(save):
        return ["bash", "scripts/mt/train.sh", "--dataset", "tiny", "--data", data, "--save-dir", save,
                "--max-tokens", "512", "--total-tokens", "2048", "--warmup", "2"], tiny

    logs = train_resume_compare(recipe, tmp_path, slurm, port=29632)
    assert "2 process(es) x 512 tokens x update-freq 2 = 2048 tokens per update (the target)" in logs["1x2"]


def test_the_data_position_is_the_same_share_of_the_epoch():
    from abc_fairseq.data_position import epoch_share

    saved = {"epoch": 3, "iterations_in_epoch": 10, "num_shards": 4, "num_batches": 100, "version": 2}
    assert epoch_share(saved, 4, 100) is saved  # same layout: fairseq's own position
    assert epoch_share(saved, 1, 100)["iterations_in_epoch"] == 40  # 10 passes x 4 processes
    assert epoch_share(saved, 8, 100)["iterations_in_epoch"] == 5
    assert epoch_share(saved, 8, 50)["iterations_in_epoch"] == 2  # 20 of 50 batches on 8: 2.5, rounded down
    ended = epoch_share(dict(saved, iterations_in_epoch=25), 10, 100)  # all 100 batches taken: the epoch is done
    assert (ended["epoch"], ended["iterations_in_epoch"]) == (4, 0)
    legacy = {"epoch": 3, "iterations_in_epoch": 10}
    assert epoch_share(legacy, 1, 100) is legacy  # no layout saved: as fairseq loads it
