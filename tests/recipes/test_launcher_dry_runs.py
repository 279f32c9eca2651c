"""Every launcher of scripts/lm, scripts/mt and scripts/roberta shares one set of flag names
(--nnodes, --nproc-per-node, --dry-run), and its --dry-run prints a fairseq command that fairseq's
own parser accepts, with the values the launcher promises. No data is needed for a dry run."""

import subprocess

import pytest
from fairseq_helpers import ROOT, parse_command

LM = ["bash", "scripts/lm/train_wiki103.sh", "--row", "abc_n64"]
MT = ["bash", "scripts/mt/train.sh", "--dataset", "wmt14", "--data", "data-bin/wmt14_en_de/bin",
      "--save-dir", "ckpt/wmt14_abc"]
MLM = ["bash", "scripts/roberta/pretrain_mlm.sh", "--data", "data-bin/mlm/bin", "--restore", "roberta.base/model.pt"]
GLUE = ["bash", "scripts/roberta/finetune_glue.sh", "RTE", "--checkpoint", "ckpt.pt"]


def dry_run(*argv):
    proc = subprocess.run([*argv, "--dry-run"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()


@pytest.mark.parametrize("launcher,expected", [
    (LM + ["--nproc-per-node", "4"], {"update_freq": [1], "arch": "abc_lm_wiki103", "tokens_per_sample": 512}),
    (LM + ["--cpu", "--nproc-per-node", "2", "--max-tokens", "512", "--batch-tokens", "2048"],
     {"update_freq": [2], "distributed_world_size": 2, "cpu": True}),
    (MT + ["--nproc-per-node", "4"], {"update_freq": [2], "decoder_cross_memory": 32, "decoder_self_memory": 8}),
    (MT + ["--cpu", "--nproc-per-node", "2"], {"update_freq": [4], "distributed_world_size": 2, "cpu": True}),
    (MT + ["--nproc-per-node", "4", "--nnodes", "2", "--node-rank", "1", "--master-addr", "node0"],
     {"update_freq": [1], "distributed_world_size": 8}),
    (MLM + ["--nproc-per-node", "8", "--nnodes", "2"], {"update_freq": [8], "encoder_memory": 64}),
    (MLM + ["--cpu", "--nproc-per-node", "1"], {"update_freq": [128], "cpu": True}),
    (GLUE + ["--nproc-per-node", "2", "--nnodes", "1"], {"update_freq": [1], "batch_size": 8}),
])
def test_dry_run_prints_a_command_fairseq_parses(launcher, expected):
    [line] = dry_run(*launcher)
    tool, args = parse_command(line)
    assert tool == "train"
    assert {key: getattr(args, key) for key in expected} == expected


def test_evaluation_dry_runs_parse_with_their_tools():
    lines = dry_run("bash", "scripts/lm/evaluate_wiki103.sh", "--row", "abc_n64", "--cpu")
    assert len(lines) == 4  # valid and test, contexts 0 and 480
    for line, (split, context) in zip(lines, [(s, c) for s in ("valid", "test") for c in (0, 480)]):
        tool, args = parse_command(line)
        assert tool == "eval_lm" and args.gen_subset == split and args.context_window == context
        assert args.tokens_per_sample == 512
    average, generate = dry_run("bash", "scripts/mt/evaluate.sh", "--data", "data-bin/wmt14_en_de/bin",
                                "--save-dir", "ckpt/wmt14_abc")
    assert "average_checkpoints.py" in average and "--last-epochs 5" in average
    tool, args = parse_command(generate)
    assert tool == "generate" and args.beam == 5 and args.lenpen == 0.6 and args.path.endswith("average_last5.pt")


@pytest.mark.parametrize("launcher,old,new", [
    (LM, ["--gpus", "4", "--nodes", "1"], ["--nproc-per-node", "4", "--nnodes", "1"]),
    (LM + ["--cpu"], ["--cpu-procs", "2"], ["--nproc-per-node", "2"]),
    (MT, ["--gpus", "4"], ["--nproc-per-node", "4"]),
    (MT + ["--cpu"], ["--nproc", "2"], ["--nproc-per-node", "2"]),
    (MLM, ["--gpus", "4", "--nodes", "2"], ["--nproc-per-node", "4", "--nnodes", "2"]),
    (GLUE, ["--gpus", "2"], ["--nproc-per-node", "2"]),
])
def test_old_names_are_deprecated_aliases(launcher, old, new):
    proc = subprocess.run([*launcher, *old, "--dry-run"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0 and "deprecated alias" in proc.stderr
    assert proc.stdout.strip().splitlines() == dry_run(*launcher, *new)


def test_several_nodes_outside_slurm_name_the_sbatch_to_submit(tmp_path):
    env = {"PATH": "/usr/bin:/bin"}
    (tmp_path / "dict.txt").write_text("w 1\n")  # the LM launcher checks its data first
    lm = LM + ["--data", str(tmp_path), "--nproc-per-node", "4", "--nnodes", "2", "--max-tokens", "4096"]
    for argv, sbatch in ((lm, "scripts/lm/train_wiki103.sbatch"),
                         (MLM + ["--nproc-per-node", "4", "--nnodes", "2"], "scripts/roberta/pretrain_mlm.sbatch")):
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        assert proc.returncode != 0 and "--nnodes 2" in proc.stderr and sbatch in proc.stderr
