"""The WikiText-103 recipe end to end on a miniature: a local mirror holding a WikiText-shaped
wikitext-103-v1.zip (generated here), data_prep/wikitext/prepare.sh (checksum, stages, rerun),
scripts/lm/train_wiki103.sh on a shrunk abc_lm_wiki103 (two CPU processes under torchrun, then a
resumed single-process run), scripts/lm/evaluate_wiki103.sh at contexts 0 and 32, and
scripts/lm/collect_lm_results.py into Table 2's layout."""

import hashlib
import os
import random
import re
import subprocess
import sys
import zipfile

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lm"))
import collect_lm_results  # noqa: E402

pytest.importorskip("data_prep.lib.fetch", reason="the download helper data_prep/lib is not in this checkout")

ARCHIVE = "wikitext-103-v1.zip"
# Shrink the preset (16 x 1024) to something a CPU trains in seconds; the model class, adaptive
# input/softmax with tied weights and the attention choice stay those of the preset.
TINY = ["--decoder-layers", "2", "--decoder-embed-dim", "32", "--decoder-ffn-embed-dim", "64",
        "--decoder-attention-heads", "2", "--decoder-self-memory", "8",
        "--adaptive-input-cutoff", "100,200", "--adaptive-softmax-cutoff", "100,200",
        "--no-epoch-checkpoints", "--log-interval", "1", "--num-workers", "0"]


def run(*cmd, check=True):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # the venv's tools
    env.pop("ABC_DATA_MIRROR", None)
    proc = subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    log = proc.stdout + proc.stderr
    if check and proc.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s" % (" ".join(map(str, cmd[:3])), proc.returncode, log[-4000:]))
    return log if check else (proc.returncode, log)


def wiki_lines(rng, n_lines, vocab):
    """WikiText-103's shape: ' = Title = ' headings, blank lines, space-separated tokens, <unk>."""
    lines = []
    for i in range(n_lines):
        if i % 25 == 0:
            lines += [" ", " = Article %d = " % i, " "]
        else:
            words = [rng.choice(vocab) if rng.random() > 0.02 else "<unk>" for _ in range(rng.randint(8, 40))]
            lines.append(" " + " ".join(words) + " ")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    rng = random.Random(0)
    vocab = ["w%d" % i for i in range(400)] + [",", ".", "the", "@-@", "@,@"]
    directory = tmp_path_factory.mktemp("mirror")
    with zipfile.ZipFile(directory / ARCHIVE, "w", zipfile.ZIP_DEFLATED) as zf:
        for split, n in (("train", 300), ("valid", 60), ("test", 60)):
            zf.writestr("wikitext-103/wiki.%s.tokens" % split, wiki_lines(rng, n, vocab))
    digest = hashlib.sha256((directory / ARCHIVE).read_bytes()).hexdigest()
    return directory, digest


@pytest.fixture(scope="module")
def prepared(mirror, tmp_path_factory):
    directory, digest = mirror
    dest = tmp_path_factory.mktemp("wikitext-103")
    log = run("bash", "data_prep/wikitext/prepare.sh", "--dest", dest, "--mirror", directory,
              "--sha256", digest, "--workers", "1")
    assert "stage bin: done" in log
    return dest


def test_prepare_layout_and_vocabulary(prepared):
    for split in ("train", "valid", "test"):
        assert (prepared / "bin" / ("%s.bin" % split)).is_file()
        assert (prepared / "raw" / ("wiki.%s.tokens" % split)).is_file()
    # The word-level vocabulary is every type of the train split (no threshold).
    # (<unk> is one of fairseq's special symbols, not listed; madeupword* pad the size to 8k.)
    train_types = set((prepared / "raw" / "wiki.train.tokens").read_text().split()) - {"<unk>"}
    dict_types = {line.split()[0] for line in (prepared / "bin" / "dict.txt").read_text().splitlines()}
    assert {t for t in dict_types if not t.startswith("madeupword")} == train_types


def test_prepare_rerun_skips_finished_stages(prepared, mirror):
    directory, digest = mirror
    before = (prepared / "bin" / "train.bin").stat().st_mtime_ns
    log = run("bash", "data_prep/wikitext/prepare.sh", "--dest", prepared, "--mirror", directory,
              "--sha256", digest)
    assert "stage raw: up to date" in log and "stage bin: up to date" in log
    assert (prepared / "bin" / "train.bin").stat().st_mtime_ns == before
    assert not list(prepared.glob(".*.tmp.*"))


def test_prepare_rejects_a_wrong_checksum(mirror, tmp_path):
    directory, _ = mirror
    code, log = run("bash", "data_prep/wikitext/prepare.sh", "--dest", tmp_path / "d", "--mirror", directory,
                    check=False)  # the published sha256 of the real archive: the miniature must fail it
    assert code != 0 and "sha256 mismatch" in log and ARCHIVE in log
    assert not (tmp_path / "d" / "bin").exists()


def test_scripts_explain_bad_arguments(tmp_path):
    for script in ("scripts/lm/train_wiki103.sh", "scripts/lm/evaluate_wiki103.sh", "data_prep/wikitext/prepare.sh"):
        assert "Options:" in run("bash", script, "--help")
        code, log = run("bash", script, "--bogus", check=False)
        assert code != 0 and "--bogus" in log
    code, log = run("bash", "scripts/lm/train_wiki103.sh", "--row", "nope", check=False)
    assert code != 0 and "abc_n64" in log  # lists the rows
    # 3 processes cannot hold the 64 segments of the paper's batch: refused, with the counts that can
    code, log = run("bash", "scripts/lm/train_wiki103.sh", "--row", "abc_n64", "--nproc-per-node", "3", "--dry-run",
                    "--data", tmp_path, check=False)
    assert code != 0 and "cannot be split exactly over 3 process(es)" in log and "1, 2, 4, 8, 16, 32, 64" in log
    code, log = run("bash", "scripts/lm/train_wiki103.sh", "--row", "abc_n64", "--max-tokens", "256", "--dry-run",
                    check=False)
    assert code != 0 and "--max-tokens" in log and "multiples of 512" in log  # less than one segment


def test_update_freq_keeps_the_paper_batch(prepared):
    def update_freq(*flags):
        line = run("bash", "scripts/lm/train_wiki103.sh", "--row", "abc_n64", "--data", prepared / "bin",
                   "--dry-run", *flags)
        return int(re.search(r"--update-freq (\d+)", line).group(1))
    assert update_freq("--nproc-per-node", "1") == 4       # 1 x 8192 x 4 = 64 x 512
    assert update_freq("--nproc-per-node", "8", "--max-tokens", "2048") == 2
    assert update_freq("--nproc-per-node", "2", "--max-tokens", "1024") == 16
    assert update_freq("--cpu", "--nproc-per-node", "2", "--max-tokens", "512", "--batch-tokens", "2048") == 2
    assert update_freq("--gpus", "2", "--max-tokens", "1024") == 16  # deprecated alias of --nproc-per-node
    code, log = run("bash", "scripts/lm/train_wiki103.sh", "--row", "abc_n64", "--data", prepared / "bin",
                    "--dry-run", "--nproc-per-node", "4", "--nnodes", "2", "--max-tokens", "4096", check=False)
    # outside SLURM a dry run of several nodes shows the job's id and first node as placeholders and
    # names the sbatch command to submit, as for MT and RoBERTa (a real run is refused with it)
    assert code == 0 and "sbatch --nodes 2 --ntasks-per-node 1 --gpus-per-node 4 scripts/lm/train_wiki103.sbatch" in log
    assert "--rdzv_endpoint FIRST_NODE:29500" in log and "--update-freq 1 " in log


def num_updates(checkpoint):
    return torch.load(checkpoint, map_location="cpu", weights_only=False)["optimizer_history"][-1]["num_updates"]


def test_train_evaluate_collect(prepared, tmp_path):
    data, save = prepared / "bin", tmp_path / "ckpt"
    common = ["bash", "scripts/lm/train_wiki103.sh", "--row", "abc_n64", "--data", data, "--save-dir", save,
              "--cpu", "--max-tokens", "512", "--batch-tokens", "2048"]
    log = run(*common, "--nproc-per-node", "2", "--", *TINY, "--max-update", "2")
    assert "update-freq 2" in log and "ABCMultiheadAttention" in log
    assert num_updates(save / "checkpoint_last.pt") == 2
    assert list((save / "tensorboard").iterdir())
    # Rerunning resumes from checkpoint_last.pt.
    log = run(*common, "--", *TINY, "--max-update", "3")
    assert "resuming from" in log and num_updates(save / "checkpoint_last.pt") == 3

    results = tmp_path / "results"
    evaluate = ["bash", "scripts/lm/evaluate_wiki103.sh", "--row", "abc_n64", "--data", data, "--cpu",
                "--checkpoint", save / "checkpoint_last.pt", "--out", results / "abc_n64", "--contexts", "0 32"]
    run(*evaluate)
    logs = sorted(p.name for p in (results / "abc_n64").iterdir())
    assert logs == ["test_ctx0.log", "test_ctx32.log", "valid_ctx0.log", "valid_ctx32.log"]
    assert "up to date" in run(*evaluate)  # a rerun keeps finished evaluations

    table = run(sys.executable, "scripts/lm/collect_lm_results.py", "--results", results, "--out",
                tmp_path / "table.md")
    assert "| Model | n | Dev. ctx 0 | Dev. ctx 32 | Test ctx 0 | Test ctx 32 |" in table
    row = next(line for line in table.splitlines() if line.startswith("| ABC_MLP | 64 |"))
    values = [float(v) for v in row.strip("|").split("|")[2:]]
    assert len(values) == 4 and all(v > 1 for v in values)
    assert (tmp_path / "table.md").read_text() == table


def test_collect_layout(tmp_path):
    """Synthetic logs of two settings: Table 2a and 2b, rows in the paper's order, gaps as '-'."""
    def log(row, split, context, ppl):
        (tmp_path / row).mkdir(exist_ok=True)
        (tmp_path / row / ("%s_ctx%d.log" % (split, context))).write_text(
            "INFO:fairseq_cli.eval_lm:Loss (base 2): 4.0, Perplexity: %s\n" % ppl)
    log("abc_n64", "valid", 0, "20.40")
    log("abc_n64", "test", 480, "19.50")
    log("base", "valid", 0, "19.8")
    log("abc_n64_32l", "test", 256, "19.1")
    table = collect_lm_results.collect(str(tmp_path), with_paper=True)
    lines = table.splitlines()
    a = lines.index(next(l for l in lines if l.startswith("### Table 2a")))
    assert lines[a + 2] == "| Model | n | Dev. ctx 0 | Dev. ctx 480 | Test ctx 0 | Test ctx 480 |"
    assert lines[a + 4] == "| BASE | - | 19.80 / 19.8 | - / 18.4 | - / 20.5 | - / 19.0 |"
    assert lines[a + 5] == "| ABC_MLP | 64 | 20.40 / 20.4 | - / 18.9 | - / 21.1 | 19.50 / 19.5 |"
    assert "| ABC_MLP | 64 | - / 18.6 | 19.10 / 19.1 |" in table
    with pytest.raises(SystemExit):
        collect_lm_results.collect(str(tmp_path / "nothing"))


def test_multi_node_launch_inside_slurm(prepared, tmp_path):
    """Inside an allocation the script starts one torchrun per node with srun, meeting at the
    first node of the job (scontrol is faked here)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "scontrol").write_text("#!/bin/sh\nprintf 'node17\\nnode18\\n'\n")
    (fake / "scontrol").chmod(0o755)
    env = dict(os.environ, SLURM_JOB_ID="4242", SLURM_JOB_NODELIST="node[17-18]",
               PATH=str(fake) + os.pathsep + os.environ.get("PATH", ""))
    line = subprocess.run(["bash", "scripts/lm/train_wiki103.sh", "--row", "abc_n64", "--data", str(prepared / "bin"),
                           "--nproc-per-node", "4", "--nnodes", "2", "--max-tokens", "2048", "--dry-run"],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    assert line.startswith("srun --nodes 2 --ntasks-per-node 1 torchrun --nnodes 2 --nproc_per_node 4")
    assert "--rdzv_endpoint node17:29500" in line and "--rdzv_id 4242" in line
    assert "--update-freq 2" in line  # 2 nodes x 4 GPUs x 2048 tokens x 2 = 64 x 512
