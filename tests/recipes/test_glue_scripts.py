"""GLUE fine-tuning on several GPUs keeps each task's batch (per-GPU sentences x GPUs x
update-freq) and tells DDP about the unused LM head; STS-B reports Pearson and Spearman, MNLI
matched and mismatched, and the collector prints every GLUE result it finds."""

import shlex
import subprocess
import sys
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BATCH = {"MNLI": 32, "QNLI": 32, "QQP": 32, "SST-2": 32, "RTE": 16, "MRPC": 16, "CoLA": 16, "STS-B": 16}


def finetune(task, *flags, check=True):
    proc = subprocess.run(["bash", str(ROOT / "scripts/roberta/finetune_glue.sh"), task, "--checkpoint", "c.pt",
                           "--dry-run", *flags], cwd=ROOT, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def value(argv, flag):
    return argv[argv.index(flag) + 1]


@pytest.mark.parametrize("task", sorted(BATCH))
@pytest.mark.parametrize("gpus,max_sentences", [(1, None), (2, None), (4, None), (4, 2), (8, 1)])
def test_finetuning_keeps_the_task_batch_on_several_gpus(task, gpus, max_sentences):
    flags = ["--nproc-per-node", str(gpus)] + (["--max-sentences", str(max_sentences)] if max_sentences else [])
    argv = shlex.split(finetune(task, *flags).stdout)
    per_gpu, freq = int(value(argv, "--batch-size")), int(value(argv, "--update-freq"))
    assert per_gpu * gpus * freq == BATCH[task]
    assert per_gpu == (max_sentences or BATCH[task] // gpus)
    assert "--find-unused-parameters" in argv
    if gpus == 1:
        assert argv[0] == "fairseq-train"  # the training program of every launcher
    else:
        assert argv[:4] == ["torchrun", "--standalone", "--nproc_per_node", str(gpus)]


def test_the_task_batch_is_held_exactly_or_refused():
    """The launchers' one rule: batch / (GPUs x update_freq) sentences per GPU, at most
    --max-sentences; a layout that cannot hold the batch is refused unless --allow-batch-mismatch."""
    proc = finetune("RTE", "--nproc-per-node", "2", "--max-sentences", "3")
    argv = shlex.split(proc.stdout)
    assert (value(argv, "--batch-size"), value(argv, "--update-freq")) == ("2", "4")  # 2 x 2 x 4 = 16
    assert "= 16 sentences per update (the target)" in proc.stderr
    proc = finetune("RTE", "--nproc-per-node", "3", check=False)
    assert proc.returncode != 0 and "16 sentences per update cannot be split exactly over 3" in proc.stderr
    proc = finetune("RTE", "--nproc-per-node", "3", "--allow-batch-mismatch")
    argv = shlex.split(proc.stdout)
    assert (value(argv, "--batch-size"), value(argv, "--update-freq")) == ("6", "1")  # 3 x 6 x 1 = 18
    assert "WARNING: --allow-batch-mismatch" in proc.stderr and "not the target 16" in proc.stderr
    proc = finetune("RTE", "--max-sentences", "0", check=False)
    assert proc.returncode != 0 and "--max-sentences" in proc.stderr

def test_finetune_flags_parse_and_report_the_glue_metrics():
    from fairseq import options

    import abc_fairseq.models  # noqa: F401

    for task, expected in (("STS-B", {"report_pearson_and_spearman": True, "regression_target": True}),
                           ("MNLI", {"valid_subset": "valid,valid1"}), ("CoLA", {"report_mcc": True})):
        argv = shlex.split(finetune(task, "--nproc-per-node", "2", "--cpu").stdout)
        argv = argv[argv.index("fairseq-train") + 1:]
        args = vars(options.parse_args_and_arch(options.get_training_parser(), argv))
        assert args["find_unused_parameters"] is True and args["update_freq"] == [1], task
        assert {k: args[k] for k in expected} == expected, task


def load_collector():
    spec = spec_from_file_location("collect_glue", ROOT / "scripts" / "roberta" / "collect_glue.py")
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_log(root, model, task, lines):
    path = root / model / task / "train.log"
    path.parent.mkdir(parents=True)
    path.write_text("".join("2026-01-01 | INFO | valid | epoch %03d | valid on '%s' subset | %s | num_updates %d\n"
                            % (epoch, subset, fields, 10 * epoch) for epoch, subset, fields in lines))


def test_collector_reports_every_task_with_its_metrics(tmp_path):
    write_log(tmp_path, "abc_64", "MNLI", [
        (1, "valid", "loss 0.6 | accuracy 80.1"), (1, "valid1", "loss 0.6 | accuracy 79.0"),
        (2, "valid", "loss 0.5 | accuracy 82.4"), (2, "valid1", "loss 0.5 | accuracy 81.7"),
        (3, "valid", "loss 0.5 | accuracy 81.9"), (3, "valid1", "loss 0.5 | accuracy 83.0")])
    write_log(tmp_path, "abc_64", "STS-B", [(1, "valid", "loss 1.2 | pearson 85.5 | spearman 85.9"),
                                            (2, "valid", "loss 1.1 | pearson 88.2 | spearman 87.6"),
                                            (3, "valid", "loss 1.0 | pearson 87.0 | spearman 88.8")])
    write_log(tmp_path, "abc_64", "CoLA", [(1, "valid", "loss 0.5 | accuracy 80.0 | mcc 55.3")])
    write_log(tmp_path, "abc_64", "RTE", [(1, "valid", "loss 0.6 | accuracy 70.4")])
    write_log(tmp_path, "abc_64", "WNLI", [(1, "valid", "loss 0.7 | accuracy 56.3")])
    collect_glue = load_collector()
    results = collect_glue.collect(str(tmp_path))["abc_64"]
    # The best validation by the main metric, the other metrics of that same epoch.
    assert results["MNLI-m acc"] == 82.4 and results["MNLI-mm acc"] == 81.7 and results["MNLI"] == 82.4
    assert results["STS-B pearson"] == 88.2 and results["STS-B spearman"] == 87.6
    assert results["CoLA mcc"] == 55.3 and results["RTE acc"] == 70.4 and results["WNLI acc"] == 56.3
    out = subprocess.run([sys.executable, str(ROOT / "scripts/roberta/collect_glue.py"), "--root", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert ("| Model | n | MNLI-m acc | MNLI-mm acc | RTE acc | CoLA mcc | STS-B pearson | STS-B spearman "
            "| WNLI acc |") in out
    assert "| ABC_MLP | 64 | 82.4 | 81.7 | 70.4 | 55.3 | 88.2 | 87.6 | 56.3 |" in out
    assert "| ABC_MLP | 64 | 82.4 | - | - | - | - | - | - |" in out  # Table 4: MNLI only so far
