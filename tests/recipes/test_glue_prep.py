"""GLUE and MLM-corpus preparation against a tiny local mirror (no network): a toy GPT-2 BPE
(every byte symbol plus a few merges) and miniature GLUE archives in the real files' layouts."""

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if not (ROOT / "data_prep" / "lib" / "fetch.py").exists():  # the shared download helper
    pytest.skip("data_prep/lib/fetch.py is not available", allow_module_level=True)

from data_prep.glue.prepare import TASKS, download, read_examples, write_text_splits  # noqa: E402


def run(*cmd, check=True, env_extra=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", **(env_extra or {}))
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(list(map(str, cmd)), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd[:3]} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return proc


def _zip(path, folder, files):
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(f"{folder}/{name}", text)


def _tsv(header, rows):
    return "\n".join(["\t".join(header)] + ["\t".join(r) for r in rows]) + "\n"


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    from fairseq.data.encoders.gpt2_bpe_utils import bytes_to_unicode

    path = tmp_path_factory.mktemp("mirror")
    b2u = bytes_to_unicode()
    merges = [("t", "h"), ("th", "e"), ("\u0120", "the")]
    vocab = [b2u[b] for b in range(256)] + ["".join(m) for m in merges]
    (path / "encoder.json").write_text(json.dumps({s: i for i, s in enumerate(vocab)}))
    (path / "vocab.bpe").write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    (path / "dict.txt").write_text("".join(f"{i} {1000 - i}\n" for i in range(len(vocab))))
    sst = [(f"the movie number {i} was the {'good' if i % 2 else 'bad'}", str(i % 2)) for i in range(12)]
    _zip(path / "SST-2.zip", "SST-2", {"train.tsv": _tsv(["sentence", "label"], sst),
                                       "dev.tsv": _tsv(["sentence", "label"], sst[:4]),
                                       "test.tsv": _tsv(["index", "sentence"], [("0", "x")])})
    header = ["index", "promptID", "pairID", "genre", "sentence1_binary_parse", "sentence2_binary_parse",
              "sentence1_parse", "sentence2_parse", "sentence1", "sentence2"]
    labels = ["entailment", "neutral", "contradiction"]
    train = [[str(i), "p", "q", "g", "-", "-", "-", "-", f"premise {i}", f"hypothesis {i}", labels[i % 3]]
             for i in range(9)]
    dev_header = header + [f"label{j}" for j in range(1, 6)] + ["gold_label"]
    dev = [[str(i), "p", "q", "g", "-", "-", "-", "-", f"dev premise {i}", f"dev hyp {i}"] + ["x"] * 5
           + [labels[i % 3]] for i in range(6)]
    _zip(path / "MNLI.zip", "MNLI", {"train.tsv": _tsv(header + ["gold_label"], train),
                                     "dev_matched.tsv": _tsv(dev_header, dev),
                                     "dev_mismatched.tsv": _tsv(dev_header, dev[:3])})
    sts_header = ["index", "genre", "filename", "year", "old_index", "source1", "source2", "sentence1",
                  "sentence2", "score"]
    sts = [[str(i), "g", "f", "y", "o", "s", "s", f"a man {i}", f"the man {i}", f"{i % 6}.000"] for i in range(8)]
    _zip(path / "STS-B.zip", "STS-B", {"train.tsv": _tsv(sts_header, sts), "dev.tsv": _tsv(sts_header, sts[:3])})
    cola = "\n".join(f"src\t{i % 2}\t*\tsentence {i} here ." for i in range(5)) + "\n"
    _zip(path / "CoLA.zip", "CoLA", {"train.tsv": cola, "dev.tsv": cola})
    qqp_header = ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"]
    qqp = [[str(i), "1", "2", f"how {i}?", f"why {i}?", str(i % 2)] for i in range(4)] + [["9", "1", "2", "broken"]]
    _zip(path / "QQP-clean.zip", "QQP", {"train.tsv": _tsv(qqp_header, qqp), "dev.tsv": _tsv(qqp_header, qqp)})
    mrpc_header = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
    mrpc = [[str(i % 2), f"{i}", f"{100 + i}", f"first {i}", f"second {i}"] for i in range(6)]
    (path / "msr_paraphrase_train.txt").write_text(_tsv(mrpc_header, mrpc))
    (path / "msr_paraphrase_test.txt").write_text(_tsv(mrpc_header, mrpc[:1]))
    (path / "mrpc_dev_ids.tsv").write_text("1\t101\n3\t103\n")
    # The miniatures are not the published archives: their own checksums override the pinned ones
    # (the BPE files have no pinned checksum: they are recorded on first use, like the real ones).
    (path / "SHA256SUMS").write_text("".join(
        f"{hashlib.sha256(f.read_bytes()).hexdigest()}  {f.name}\n" for f in sorted(path.iterdir())
        if f.suffix in (".zip", ".tsv", ".txt") and f.name != "dict.txt"))
    return path


@pytest.fixture(scope="module")
def glue(mirror, tmp_path_factory):
    dest = tmp_path_factory.mktemp("glue")
    proc = run("bash", "data_prep/glue/prepare.sh", "--dest", dest, "--tasks", "SST-2", "MNLI",
               "--mirror", mirror, "--workers", "1", "--checksum-file", mirror / "SHA256SUMS")
    return dest, proc


def test_sentence_prediction_layout(glue):
    dest, proc = glue
    for task, inputs in (("SST-2", 1), ("MNLI", 2)):
        root = dest / f"{task}-bin"
        for i in range(inputs):
            assert (root / f"input{i}" / "dict.txt").exists()
            assert (root / f"input{i}" / "train.bin").exists() and (root / f"input{i}" / "valid.bin").exists()
        assert not (root / "input1").exists() or inputs == 2
    assert (dest / "MNLI-bin" / "input0" / "valid1.bin").exists()  # dev mismatched
    labels = (dest / "MNLI-bin" / "label" / "dict.txt").read_text().splitlines()
    assert sorted(l.split()[0] for l in labels if not l.startswith("madeupword")) == \
        ["contradiction", "entailment", "neutral"]
    assert (dest / "MNLI" / "valid.input0").read_text().splitlines()[0] == "dev premise 0"
    # RoBERTa's BPE ids, merges applied ("the" -> 257, " the" -> 258)
    encoded = (dest / "SST-2" / "train.input0.bpe").read_text().splitlines()[0].split()
    assert encoded[0] == "257" and "258" in encoded
    assert "SST-2\t" in proc.stdout and "sha256" in proc.stderr


def test_rerun_skips_and_checksums_are_enforced(glue, mirror, tmp_path):
    dest, _ = glue
    again = run("bash", "data_prep/glue/prepare.sh", "--dest", dest, "--tasks", "SST-2", "--mirror", mirror,
                "--checksum-file", mirror / "SHA256SUMS")
    assert "already prepared" in again.stderr
    # a BPE file that changed since its sha256 was recorded is refused
    bad_mirror = tmp_path / "bad"
    bad_mirror.mkdir()
    for name in ("encoder.json", "vocab.bpe", "dict.txt"):
        (bad_mirror / name).write_bytes((mirror / name).read_bytes())
    (bad_mirror / "dict.txt").write_text("0 1\n")
    os.makedirs(tmp_path / "g" / "gpt2_bpe")
    for name in ("encoder.json", "vocab.bpe", "dict.txt"):
        (tmp_path / "g" / "gpt2_bpe" / f"{name}.sha256").write_text(
            (dest / "gpt2_bpe" / f"{name}.sha256").read_text())
    failed = run("bash", "data_prep/glue/prepare.sh", "--dest", tmp_path / "g", "--tasks", "SST-2", "--mirror",
                 bad_mirror, "--checksum-file", mirror / "SHA256SUMS", check=False)
    assert failed.returncode == 1 and "mismatch" in failed.stderr


def test_text_extraction_of_other_layouts(mirror, tmp_path):
    """CoLA (no header), QQP (a malformed row), MRPC (built from the paraphrase files + dev ids),
    STS-B (regression: score / 5)."""
    os.environ.pop("ABC_DATA_MIRROR", None)
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("CoLA", "QQP", "MRPC", "STS-B"):
        folder = download(name, str(raw), str(mirror), [str(mirror / "SHA256SUMS")])
        write_text_splits(name, folder, str(tmp_path / name))
    assert (tmp_path / "CoLA" / "train.label").read_text().split() == ["0", "1", "0", "1", "0"]
    assert (tmp_path / "CoLA" / "train.input0").read_text().splitlines()[1] == "sentence 1 here ."
    examples, skipped = read_examples(str(raw / "QQP" / "train.tsv"), TASKS["QQP"])
    assert len(examples) == 4 and skipped == 1
    assert (tmp_path / "MRPC" / "valid.input0").read_text().splitlines() == ["first 1", "first 3"]
    assert len((tmp_path / "MRPC" / "train.label").read_text().splitlines()) == 4
    assert (tmp_path / "STS-B" / "train.label").read_text().splitlines()[:3] == ["0.0", "0.2", "0.4"]


def test_unknown_task_and_help():
    proc = run("bash", "data_prep/glue/prepare.sh", "--dest", "x", "--tasks", "SST2", check=False)
    assert proc.returncode == 2 and "--tasks" in proc.stderr and "SST-2" in proc.stderr
    assert "sentence_prediction" in run("bash", "data_prep/glue/prepare.sh", "--help").stdout


def test_mlm_corpus_shards_with_roberta_dictionary(mirror, tmp_path):
    text = tmp_path / "a.txt"
    text.write_text("the cat sat on the mat\nthe dog\n\nanother doc\nwith two lines\n\nthird doc\n")
    valid = tmp_path / "v.txt"
    valid.write_text("the valid line\n")
    dest = tmp_path / "mlm"
    proc = run("bash", "data_prep/mlm/prepare.sh", "--train", text, "--valid", valid, "--dest", dest,
               "--shards", "2", "--workers", "1", "--mirror", mirror)
    assert proc.stdout.strip() == f"{dest}/shard0:{dest}/shard1"
    for k in range(2):
        assert (dest / f"shard{k}" / "train.bin").exists() and (dest / f"shard{k}" / "valid.bin").exists()
        assert (dest / f"shard{k}" / "dict.txt").read_text() == (mirror / "dict.txt").read_text()
    shards = [(dest / "shards" / f"train.bpe.shard{k}").read_text() for k in range(2)]
    docs = [doc for text in shards for doc in text.split("\n\n") if doc.strip()]
    assert len(docs) == 3 and all(text.endswith("\n\n") for text in shards)  # documents kept whole
    first = next(doc for doc in docs if len(doc.splitlines()) == 2 and doc.split()[:2] == ["257", "32"])
    assert first.splitlines()[1].split()[0] == "257"  # "the cat sat ..." / "the dog": BPE ids
    built = (dest / "shard1" / "train.bin").stat().st_mtime_ns
    again = run("bash", "data_prep/mlm/prepare.sh", "--train", text, "--valid", valid, "--dest", dest,
                "--shards", "2", "--workers", "1", "--mirror", mirror)
    assert "stage shard 1: up to date" in again.stderr
    assert (dest / "shard1" / "train.bin").stat().st_mtime_ns == built
    bad = run("bash", "data_prep/mlm/prepare.sh", "--train", tmp_path / "nope.txt", "--valid", valid,
              "--dest", dest, check=False)
    assert bad.returncode == 1 and "nope.txt" in bad.stderr


def test_recipe_end_to_end_pretrain_finetune_collect(glue, mirror, tmp_path):
    """mlm/prepare.sh -> pretrain_mlm.sh (tiny, CPU, from scratch) -> finetune_glue.sh SST-2 ->
    collect_glue.py: the scripts run as documented (the toy BPE dictionary is shared by both)."""
    dest, _ = glue
    text = tmp_path / "a.txt"
    text.write_text("".join(f"the line {i} of the text\n" for i in range(400)))
    corpus = run("bash", "data_prep/mlm/prepare.sh", "--train", text, "--valid", text, "--dest",
                 tmp_path / "mlm", "--shards", "1", "--workers", "1", "--mirror", mirror).stdout.strip()
    tiny = ["--arch", "abc_roberta_tiny", "--memory", "4", "--cpu"]
    pretrained = tmp_path / "mlm_ckpt"
    run("bash", "scripts/roberta/pretrain_mlm.sh", "--data", corpus, *tiny, "--batch-seqs", "8", "--max-sentences",
        "8", "--total-updates", "2", "--warmup-updates", "1", "--save-dir", pretrained, "--", "--num-workers", "0",
        "--no-epoch-checkpoints")
    assert (pretrained / "checkpoint_last.pt").exists() and (pretrained / "tensorboard").is_dir()
    assert "num_updates 2" in (pretrained / "train.log").read_text()
    root = tmp_path / "glue_runs"
    run("bash", "scripts/roberta/finetune_glue.sh", "SST-2", "--checkpoint", pretrained / "checkpoint_last.pt",
        "--data-root", dest, "--save-dir", root / "abc_4" / "SST-2", *tiny, "--", "--max-update", "2",
        "--max-epoch", "1", "--num-workers", "0")
    table = run(sys.executable, "scripts/roberta/collect_glue.py", "--root", root, "--paper").stdout
    row = next(line for line in table.splitlines() if line.startswith("| ABC_MLP | 4 |"))
    assert row.split("|")[3].strip() == "-" and row.split("|")[6].strip() != "-"  # MNLI missing, SST-2 found
    assert "| ABC_MLP (paper) | 128 | 87.1 | 92.6 | 91.8 | 94.4 | 91.5 |" in table


def test_collect_glue_table4_layout(tmp_path):
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("collect_glue", ROOT / "scripts" / "roberta" / "collect_glue.py")
    collect_glue = module_from_spec(spec)
    spec.loader.exec_module(collect_glue)
    accs = {"abc_64": (85.0, 91.0, 90.0, 93.0), "softmax_64": (87.0, 92.0, 91.0, 94.0)}
    for model, values in accs.items():
        for task, acc in zip(collect_glue.TABLE4_TASKS, values):
            log = tmp_path / model / task / "train.log"
            log.parent.mkdir(parents=True)
            log.write_text(
                f"x | INFO | valid | epoch 001 | valid on 'valid' subset | loss 0.5 | accuracy {acc - 1} "
                "| num_updates 9\n"
                f"x | INFO | valid | epoch 002 | valid on 'valid' subset | loss 0.4 | accuracy {acc} | num_updates 18\n"
                "x | INFO | valid | epoch 002 | valid on 'valid1' subset | loss 0.4 | accuracy 99.9 "
                "| num_updates 18\n")
    encode = tmp_path / "encode.json"
    encode.write_text(json.dumps({"results": [
        {"method": "softmax", "speed_vs_softmax": 1.0, "memory_vs_softmax": 1.0},
        {"method": "abc-64", "speed_vs_softmax": 1.5, "memory_vs_softmax": 0.5}]}))
    out = run(sys.executable, "scripts/roberta/collect_glue.py", "--root", tmp_path, "--encode-json", encode).stdout
    lines = out.splitlines()
    assert "| Model | n | MNLI | QNLI | QQP | SST-2 | Avg. | Speed | Mem. |" in lines
    assert lines.index("| RoBERTa-Ours | - | 87.0 | 92.0 | 91.0 | 94.0 | 91.0 | 1.0x | 1.0x |") < \
        lines.index("| ABC_MLP | 64 | 85.0 | 91.0 | 90.0 | 93.0 | 89.8 | 1.5x | 0.5x |")


def test_recipe_scripts_dry_run_and_errors():
    cmd = run("bash", "scripts/roberta/pretrain_mlm.sh", "--data", "a:b", "--restore", "model.pt",
              "--nproc-per-node", "4", "--nnodes", "2", "--dry-run").stdout
    # several nodes: srun + torchrun with a c10d rendezvous, the launch of every recipe (scripts/lib/launch.py)
    assert cmd.startswith("srun --nodes 2 --ntasks-per-node 1 torchrun --nnodes 2 --nproc_per_node 4 "
                          "--rdzv_backend c10d")
    assert "--update-freq 16" in cmd and "--batch-size 16" in cmd  # 16 x 8 x 16 = 2048 sequences
    assert "--restore-file model.pt --reset-optimizer --reset-dataloader --reset-meters" in cmd
    assert "--tensorboard-logdir" in cmd and "--encoder-attn abc --encoder-memory 64" in cmd
    one = run("bash", "scripts/roberta/pretrain_mlm.sh", "--data", "a", "--nproc-per-node", "1", "--dry-run").stdout
    assert one.startswith("fairseq-train ") and "--update-freq 128" in one
    for task, lr, bsz, total, warmup in (("MNLI", "1e-5", 32, 123873, 7432), ("RTE", "2e-5", 16, 2036, 122)):
        ft = run("bash", "scripts/roberta/finetune_glue.sh", task, "--checkpoint", "c.pt", "--dry-run").stdout
        assert f"--lr {lr} --total-num-update {total} --warmup-updates {warmup}" in ft
        assert f"--batch-size {bsz} --update-freq 1 " in ft  # the launcher's batch flags, after the data
    bad = run("bash", "scripts/roberta/finetune_glue.sh", "SST2", "--checkpoint", "c.pt", check=False)
    assert bad.returncode == 1 and "SST-2" in bad.stderr
    bad = run("bash", "scripts/roberta/pretrain_mlm.sh", "--data", "a", "--memory", "0", check=False)
    assert bad.returncode == 1 and "--memory" in bad.stderr


def test_hydra_configs_match_the_scripts():
    """configs/glue/TASK.yaml carry the same per-task values as finetune_glue.sh; configs/mlm the
    paper's memory sizes and RoBERTa-base's batch (16 x 8 GPUs x 16 = 2048 sequences)."""
    import yaml

    for path in sorted((ROOT / "configs" / "glue").glob("*.yaml")):
        cfg = yaml.safe_load(path.read_text())
        task = path.stem
        cmd = run("bash", "scripts/roberta/finetune_glue.sh", task, "--checkpoint", "c.pt", "--dry-run").stdout
        lr = cfg["optimization"]["lr"][0]
        assert f"--lr {lr:.0e}".replace("e-0", "e-") in cmd, task
        assert f"--total-num-update {cfg['lr_scheduler']['total_num_update']} " in cmd, task
        assert f"--warmup-updates {cfg['lr_scheduler']['warmup_updates']} " in cmd, task
        assert f"--batch-size {cfg['dataset']['batch_size']} " in cmd, task
        assert f"--num-classes {cfg['task']['num_classes']} " in cmd, task
        assert cfg["model"]["_name"] == "abc_roberta_base" and cfg["task"]["data"].endswith(f"{task}-bin")
    memories = set()
    for path in sorted((ROOT / "configs" / "mlm").glob("*.yaml")):
        cfg = yaml.safe_load(path.read_text())
        assert cfg["dataset"]["batch_size"] * 8 * cfg["optimization"]["update_freq"][0] == 2048
        assert cfg["checkpoint"]["restore_file"] == "roberta.base/model.pt" and cfg["checkpoint"]["reset_optimizer"]
        assert cfg["task"]["tokens_per_sample"] == 512 and cfg["model"]["dropout"] == 0.1
        memories.add((cfg["model"]["encoder_attn"], cfg["model"]["encoder_memory"]))
    assert {("abc", 64), ("abc", 128), ("linformer", 64), ("linformer", 128)} <= memories


def test_an_earlier_data_mark_is_read_as_the_one_mark(tmp_path):
    """A folder a data recipe marked before the one mark existed is still its own: resumed, the
    mark renamed to .run (the Python twin, dest.py, reads it the same way)."""
    from data_prep.lib.dest import claim_dest
    dest = tmp_path / "glue"
    dest.mkdir()
    (dest / ".data_prep_owner").write_text("glue/prepare\n")
    assert claim_dest(str(dest), "glue/prepare", []) == str(dest)
    assert sorted(os.listdir(dest)) == [".run"] and (dest / ".run").read_text() == "glue/prepare\n"
