"""scripts/quickstart_report.py: --help, clear errors, the numbers read from quickstart logs,
and no file it did not write is replaced."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "quickstart_report.py"

TRAIN = """2026-01-01 | INFO | fairseq_cli.train | num. shared model params: 4,900,000 (num. trained: 4,900,000)
2026-01-01 | INFO | train_inner | epoch 001:     25 / 136 loss=9.1, ppl=550.2, wps=900.5, ups=0.4, num_updates=25
2026-01-01 | INFO | train | epoch 001 | loss 8.5 | ppl 362.1 | wps 1234.5 | ups 0.6 | num_updates 60
"""


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=REPO)


def fake_run(root: Path, names=("gsa", "abc", "softmax")):
    for i, name in enumerate(names):
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "train.log").write_text(TRAIN)
        (folder / "train_seconds").write_text(f"{100 + i}\n")
        (folder / "done").write_text("max_update=60 max_epoch=0\n")
        (folder / "train_args.txt").write_text(f"{REPO / 'data-bin' / 'corpus'}\n--arch\nabc_lm_small\n")
        for split, ppl in (("valid", 70.5), ("test", 60.25 + i), ("test_ctx", 61.0)):
            (folder / f"eval_{split}.log").write_text(
                f"| Evaluated 29,000 tokens in 3.2s (9062.50 tokens/s)\n| Loss (base 2): 5.9, Perplexity: {ppl}\n")


def test_help_and_errors(tmp_path):
    proc = run("--help")
    assert proc.returncode == 0 and "usage" in proc.stdout
    proc = run(tmp_path / "absent", "--threads", "2")
    assert proc.returncode != 0 and "run_dir" in proc.stderr
    fake_run(tmp_path / "run", names=("abc",))
    proc = run(tmp_path / "run", "--threads", "2", "--out", tmp_path / "out", "--models", "softmax", "abc", "gsa")
    assert proc.returncode != 0 and "no train.log for softmax, gsa" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_the_rows_default_to_the_models_the_run_trained(tmp_path):
    fake_run(tmp_path / "run", names=("abc", "softmax"))
    proc = run(tmp_path / "run", "--threads", "2", "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((tmp_path / "out" / "results.json").read_text())["rows"]
    assert [row["model"] for row in rows] == ["transformer_lm (softmax)", "abc_lm_small (ABC)"]


def test_reads_the_logs_and_keeps_foreign_files(tmp_path):
    fake_run(tmp_path / "run")
    out = tmp_path / "out"
    proc = run(tmp_path / "run", "--threads", "2", "--out", out)
    assert proc.returncode == 0, proc.stderr
    record = json.loads((out / "results.json").read_text())
    rows = {row["model"]: row for row in record["rows"]}
    gsa = rows["abc_lm_small (GSA)"]
    assert (gsa["params"], gsa["updates"], gsa["test_ppl"], gsa["train_tokens_per_s"]) == (4900000, 60, 60.25, 1234.5)
    assert (gsa["eval_tokens_per_s"], gsa["train_seconds"]) == (9062.5, 100)
    assert gsa["train_args"] == ["data-bin/corpus", "--arch", "abc_lm_small"]  # no machine's folders
    assert rows["transformer_lm (softmax)"]["test_ppl"] == 62.25
    assert record["threads"] == 2 and record["environment"]["torch"]
    assert (out / "results.png").stat().st_size > 0 and "| abc_lm_small (GSA) |" in (out / "results.md").read_text()
    assert run(tmp_path / "run", "--threads", "2", "--out", out).returncode == 0  # its own files: rewritten
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "results.md").write_text("mine")
    proc = run(tmp_path / "run", "--threads", "2", "--out", foreign)
    assert proc.returncode != 0 and "did not write" in proc.stderr and (foreign / "results.md").read_text() == "mine"
