"""Every launcher of scripts/lm, scripts/mt and scripts/roberta shares one set of flag names
(--nnodes, --nproc-per-node, --dry-run), and its --dry-run prints a fairseq command that fairseq's
own parser accepts, with the values the launcher promises. No data is needed for a dry run.
The launch itself is scripts/lib/launch.py's for every recipe: one launch shape, one batch rule
(the target held exactly, or refused), one GPU count, one multi-node path (srun + torchrun, c10d
rendezvous; the recipes' .sbatch files run under a faked SLURM job here)."""

import importlib.util
import os
import shlex
import subprocess
import textwrap
from pathlib import Path

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
    (MT + ["--nproc-per-node", "4", "--nnodes", "2"], {"update_freq": [1], "distributed_world_size": 8}),
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
    env = {"PATH": "/usr/bin:/bin"}  # no venv: the launcher needs none to refuse
    for argv, sbatch in ((LM, "scripts/lm/train_wiki103.sbatch"), (MLM, "scripts/roberta/pretrain_mlm.sbatch"),
                         (GLUE, "scripts/roberta/finetune_glue.sbatch")):
        proc = subprocess.run(argv + ["--nproc-per-node", "4", "--nnodes", "2"], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        assert proc.returncode != 0 and "--nnodes 2" in proc.stderr
        assert "sbatch --nodes 2 --ntasks-per-node 1 --gpus-per-node 4 %s" % sbatch in proc.stderr


# --- one launcher: scripts/lib/launch.py ------------------------------------------------------------

ROOT_PATH = Path(ROOT)
RECIPES = {"lm": LM, "mt": MT, "mlm": MLM, "glue": GLUE}
SBATCH = {"lm": "scripts/lm/train_wiki103.sbatch", "mt": "scripts/mt/train.sbatch",
          "mlm": "scripts/roberta/pretrain_mlm.sbatch", "glue": "scripts/roberta/finetune_glue.sbatch"}
RANKED = ["--no-python", "sh", "-c", 'exec "$0" "$@" --distributed-rank "$RANK" --device-id "$LOCAL_RANK"',
          "fairseq-train"]
# The uptraining recipes launch alike (a dry run without the converted checkpoint shows the family's
# base architecture; tests/recipes/test_uptrain.py reads a real one).
RECIPES.update({
    "lm-uptrain": ["bash", "scripts/lm/uptrain.sh", "--checkpoint", "abc.pt", "--data", "data-bin/wikitext-103/bin",
                   "--save-dir", "ckpt/lm_uptrain"],
    "mt-uptrain": ["bash", "scripts/mt/uptrain.sh", "--checkpoint", "abc.pt", "--data", "data-bin/wmt14_en_de/bin",
                   "--save-dir", "ckpt/mt_uptrain"],
})
SBATCH.update({"lm-uptrain": "scripts/lm/uptrain.sbatch", "mt-uptrain": "scripts/mt/uptrain.sbatch"})


def launch_shape(line):
    """The words of a printed command up to the training program (fairseq-train) included."""
    words = shlex.split(line)
    return words[:words.index("fairseq-train") + 1]


def dry_run_env(recipe, *flags, env=None):
    proc = subprocess.run([*RECIPES[recipe], *flags, "--dry-run"], cwd=ROOT, capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_every_recipe_launches_two_nodes_of_four_gpus_alike(recipe):
    """The done-when check of the one launcher: on 2 nodes x 4 GPUs every training recipe prints
    srun + torchrun with a c10d rendezvous, then the same ranked fairseq-train; outside an
    allocation the job id and first node are placeholders and the sbatch to submit is named."""
    proc = dry_run_env(recipe, "--nnodes", "2", "--nproc-per-node", "4")
    [line] = proc.stdout.splitlines()
    assert launch_shape(line) == [
        "srun", "--nodes", "2", "--ntasks-per-node", "1", "torchrun", "--nnodes", "2", "--nproc_per_node", "4",
        "--rdzv_backend", "c10d", "--rdzv_id", "JOB_ID", "--rdzv_endpoint", "FIRST_NODE:29500", *RANKED]
    assert "sbatch --nodes 2 --ntasks-per-node 1 --gpus-per-node 4 %s" % SBATCH[recipe] in proc.stderr
    tool, args = parse_command(line)
    assert tool == "train" and args.distributed_world_size == 8 and args.distributed_no_spawn


@pytest.mark.parametrize("recipe", sorted(RECIPES))
@pytest.mark.parametrize("flags,shape", [
    (["--nproc-per-node", "1"], ["fairseq-train"]),
    (["--nproc-per-node", "4"], ["torchrun", "--standalone", "--nproc_per_node", "4", *RANKED]),
    (["--cpu", "--nproc-per-node", "2"], ["torchrun", "--standalone", "--nproc_per_node", "2", *RANKED]),
])
def test_one_node_launch_shape_is_every_recipes(recipe, flags, shape):
    line = dry_run_env(recipe, *flags).stdout.strip()
    assert launch_shape(line) == shape
    args = parse_command(line)[1]
    if "--cpu" in flags:
        assert args.cpu and args.distributed_backend == "gloo" and args.ddp_backend == "legacy_ddp"


# (recipe, flags, per process, update freq): an update holds exactly the target, per process at most
# the recipe's maximum, update_freq the smallest that allows it.
@pytest.mark.parametrize("recipe,flags,per,update_freq", [
    ("lm", ["--nproc-per-node", "1"], 8192, 4),
    ("lm", ["--nproc-per-node", "8"], 4096, 1),
    ("lm", ["--nproc-per-node", "8", "--nnodes", "4"], 1024, 1),
    ("lm", ["--nproc-per-node", "2", "--max-tokens", "3000"], 2048, 8),  # whole 512-token segments
    ("lm", ["--nproc-per-node", "8", "--max-tokens", "1024", "--batch-tokens", "16384"], 1024, 2),
    ("mt", ["--nproc-per-node", "8"], 4096, 1),
    ("mt", ["--nproc-per-node", "8", "--nnodes", "4"], 1024, 1),
    ("mt", ["--nproc-per-node", "1", "--max-tokens", "5000"], 4096, 8),
    ("mlm", ["--nproc-per-node", "8", "--nnodes", "16"], 16, 1),
    ("mlm", ["--nproc-per-node", "3", "--max-sentences", "10", "--batch-seqs", "120"], 10, 4),
    ("glue", ["--nproc-per-node", "8"], 2, 1),
    ("glue", ["--nproc-per-node", "2", "--max-sentences", "3"], 2, 4),
])
def test_one_batch_rule_holds_the_target_exactly(recipe, flags, per, update_freq):
    proc = dry_run_env(recipe, *flags)
    args = parse_command(proc.stdout.strip())[1]
    assert (args.max_tokens if recipe in ("lm", "mt") else args.batch_size) == per
    assert args.update_freq == [update_freq]
    unit = "tokens" if recipe in ("lm", "mt") else "sentences"
    assert "x update-freq %d = %d %s per update (the target)" % (
        update_freq, args.distributed_world_size * per * update_freq, unit) in proc.stderr


# (recipe, flags, the flags a refusal names, the batch --allow-batch-mismatch trains)
@pytest.mark.parametrize("recipe,flags,named,nearest", [
    ("lm", ["--nproc-per-node", "3"], ["--max-tokens", "--batch-tokens", "1, 2, 4, 8, 16, 32, 64"], 49152),
    ("lm", ["--nproc-per-node", "8", "--nnodes", "16"], ["--max-tokens", "--batch-tokens"], 65536),
    ("lm", ["--nproc-per-node", "1", "--max-tokens", "256"], ["multiples of 512"], None),
    ("mt", ["--nproc-per-node", "3"], ["--max-tokens", "--total-tokens", "at least 256"], 36864),
    ("mlm", ["--nproc-per-node", "3"], ["--max-sentences", "--batch-seqs"], 2064),
    ("glue", ["--nproc-per-node", "8", "--nnodes", "4"], ["--max-sentences", "1, 2, 4, 8, 16"], 32),
])
def test_a_batch_that_cannot_be_held_is_refused_unless_allowed(recipe, flags, named, nearest):
    proc = subprocess.run([*RECIPES[recipe], *flags, "--dry-run"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1 and not proc.stdout
    assert "cannot be split exactly" in proc.stderr and "--allow-batch-mismatch" in proc.stderr
    assert all(flag in proc.stderr for flag in named), proc.stderr
    if nearest is None:
        return
    proc = dry_run_env(recipe, *flags, "--allow-batch-mismatch")
    args = parse_command(proc.stdout.strip())[1]
    per = args.max_tokens if recipe in ("lm", "mt") else args.batch_size
    assert args.distributed_world_size * per * args.update_freq[0] == nearest
    assert "WARNING: --allow-batch-mismatch" in proc.stderr and "= %d " % nearest in proc.stderr


def _launch_module():
    spec = importlib.util.spec_from_file_location("launch", ROOT_PATH / "scripts" / "lib" / "launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("target,maximum,quantum,minimum", [
    (32768, 8192, 512, 512), (16384, 4096, 1, 1024), (2048, 16, 1, 1), (16, 16, 1, 1), (10240, 1024, 512, 512),
    (32768, 3000, 1, 256), (96, 7, 1, 1),
])
def test_the_rule_is_exact_minimal_and_refuses_only_the_impossible(target, maximum, quantum, minimum):
    """Against a brute force over every update_freq: the rule finds the smallest update_freq that holds
    the target exactly within the bounds, and refuses exactly when there is none."""
    rule = _launch_module().Batch("tokens", target, maximum, quantum, minimum)
    for processes in range(1, 70):
        exact = [(target // (processes * f), f) for f in range(1, target + 1)
                 if target % (processes * f) == 0 and target // (processes * f) <= maximum
                 and target // (processes * f) % quantum == 0 and target // (processes * f) >= max(minimum, quantum)]
        assert rule.exact(processes) == (exact[0] if exact else None), processes


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_gpus_are_counted_one_way(recipe):
    """Without --nproc-per-node: the GPUs of CUDA_VISIBLE_DEVICES (else nvidia-smi -L)."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="0,1,2,3")
    line = dry_run_env(recipe, env=env).stdout.strip()
    assert launch_shape(line)[:4] == ["torchrun", "--standalone", "--nproc_per_node", "4"]


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_sbatch_runs_the_recipe_on_every_node_of_the_job(recipe, tmp_path):
    """Inside a (faked) two-node SLURM job the recipe's .sbatch runs the recipe once with the
    allocation's nodes; srun + torchrun meet at the job's first node."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "scontrol").write_text("#!/bin/sh\nprintf 'node17\\nnode18\\n'\n")
    (fake / "scontrol").chmod(0o755)
    env = dict(os.environ, SLURM_JOB_ID="4242", SLURM_JOB_NODELIST="node[17-18]", SLURM_JOB_NUM_NODES="2",
               SLURM_SUBMIT_DIR=str(ROOT), PATH=str(fake) + os.pathsep + os.environ.get("PATH", ""))
    spool = tmp_path / "job.sbatch"  # sbatch runs a copy of the file, from the folder it was submitted in
    spool.write_text((ROOT_PATH / SBATCH[recipe]).read_text())
    argv = RECIPES[recipe][2:]  # the recipe's arguments, without "bash SCRIPT"
    proc = subprocess.run(["bash", str(spool), *argv, "--nproc-per-node", "4", "--dry-run"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert launch_shape(proc.stdout.strip()) == [
        "srun", "--nodes", "2", "--ntasks-per-node", "1", "torchrun", "--nnodes", "2", "--nproc_per_node", "4",
        "--rdzv_backend", "c10d", "--rdzv_id", "4242", "--rdzv_endpoint", "node17:29500", *RANKED]
    assert "sbatch" not in proc.stderr  # inside the job: nothing to submit


def test_sbatch_outside_slurm_says_how_to_submit():
    proc = subprocess.run(["bash", "scripts/mt/train.sbatch", "--dataset", "tiny"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode != 0 and "sbatch" in proc.stderr and "scripts/mt/train.sh" in proc.stderr


def test_launcher_states_its_rules_and_names_bad_flags():
    launch = ["python3", "scripts/lib/launch.py"]
    usage = subprocess.run([*launch, "--help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "per_process = target / (processes x update_freq)" in usage and "c10d" in usage
    assert "--allow-batch-mismatch" in usage
    proc = subprocess.run([*launch, "--unit", "tokens", "--target", "0", "--", "data"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "--target" in proc.stderr
    proc = subprocess.run([*launch, "--unit", "tokens", "--target", "8", "--quantum", "3", "--nproc-per-node", "1",
                           "--", "data"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1 and "multiples of 3" in proc.stderr


def test_a_new_recipe_is_a_thin_wrapper(tmp_path):
    """A further recipe (an uptraining one, say) is its flags and its fairseq arguments: the shared
    flags, the batch rule, the launch and the save dir's claim come from scripts/lib/launcher.sh."""
    recipe = tmp_path / "uptrain.sh"
    recipe.write_text(textwrap.dedent("""\
        #!/usr/bin/env bash
        # Uptrain a checkpoint (a recipe of this test).
        set -euo pipefail
        . "$LAUNCHER"
        restore="" extra=()
        flags=("${LAUNCH_FLAGS[@]}" "--restore restore a file" "-- extra fairseq flags go after --")
        parse_flags flags "$@"
        plan_launch tokens 32768 4096 scripts/lm/uptrain.sbatch data-bin/x --restore-file "$restore" \\
            --task language_modeling --arch transformer_lm -- "${extra[@]}"
        claim_launch "$SAVE" lm-uptrain "restore=$restore"
        exec_launch
        """))
    env = dict(os.environ, LAUNCHER=str(ROOT_PATH / "scripts/lib/launcher.sh"), SAVE=str(tmp_path / "save"))
    proc = subprocess.run(["bash", str(recipe), "--restore", "a.pt", "--nnodes", "2", "--nproc-per-node", "4",
                           "--dry-run", "--", "--max-update", "9"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert launch_shape(proc.stdout)[:13] == ["srun", "--nodes", "2", "--ntasks-per-node", "1", "torchrun", "--nnodes",
                                             "2", "--nproc_per_node", "4", "--rdzv_backend", "c10d", "--rdzv_id"]
    args = parse_command(proc.stdout.strip())[1]
    assert args.restore_file == "a.pt" and args.update_freq == [1] and args.max_update == 9
    assert "scripts/lm/uptrain.sbatch --restore a.pt --nnodes 2 --nproc-per-node 4 -- --max-update 9" in proc.stderr
    assert not (tmp_path / "save").exists()  # a dry run claims nothing
