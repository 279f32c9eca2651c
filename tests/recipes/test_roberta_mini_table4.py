"""The Table 4 miniature (scripts/roberta/mini_table4.sh) end to end at toy size: six finite
accuracies and perplexities are parsed, conversion keeps every pretrained tensor and adds only
W_phi, the transfer stage trains W_phi alone (tests/cli/test_transfer.py: that it lowers the MSE), a second run resumes
without retraining, and the script refuses what is not its own. Also
the embedded Rotten Tomatoes set: checksums as its README records, labels, disjoint splits."""

import hashlib
import importlib.util
import json
import math
import re
import subprocess
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.slow  # the toy pipeline: five stages of fairseq training (about a minute)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/roberta/mini_table4.sh"
RT = ROOT / "data_prep/rotten_tomatoes"
MODELS = ("softmax", "abc_converted", "abc_continued", "abc_scratch", "abc_transferred", "abc_transferred_continued")
PHI = "encoder.sentence_encoder.self_attn_phi.weight"
TOY = ["--tiny", "--threads", "1"]


def run(*args, check=True, timeout=900):
    proc = subprocess.run(["bash", str(SCRIPT), *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    if check:
        assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def load_rt_module():
    spec = importlib.util.spec_from_file_location("rt_to_corpus", RT / "rt_to_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mini_table4") / "run"
    proc = run("--out", out, *TOY)
    return out, proc


def test_embedded_set_matches_its_readme_checksums():
    recorded = re.findall(r"^([0-9a-f]{64})  (\S+)$", (RT / "README.md").read_text(), re.M)
    assert sorted(name for _, name in recorded) == ["plots.txt", "test.tsv", "train.tsv", "valid.tsv"]
    for digest, name in recorded:
        assert hashlib.sha256((RT / name).read_bytes()).hexdigest() == digest, name


def test_embedded_splits_are_labelled_and_disjoint():
    texts = {}
    for split in ("train", "valid", "test"):
        lines = (RT / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
        labels, snippets = zip(*(line.split("\t") for line in lines))
        assert set(labels) == {"fresh", "rotten"}
        assert all(s.strip() == s and s for s in snippets)
        texts[split] = set(snippets)
        assert len(texts[split]) == len(lines)  # duplicates were removed before the split
    assert not texts["train"] & texts["valid"] and not texts["train"] & texts["test"]
    assert not texts["valid"] & texts["test"]
    assert len(texts["valid"]) == len(texts["test"]) == sum(map(len, texts.values())) // 10
    plots = set((RT / "plots.txt").read_text(encoding="utf-8").splitlines())
    assert not plots & set().union(*texts.values())


@pytest.mark.parametrize("raw,tokens", [
    ("It's a must-see -- really!", "It 's a must @-@ see -- really !"),
    ("The actors don't (quite) sell it, alas.", "The actors do n't ( quite ) sell it , alas ."),
    ("\u201cFun\u201d\u2014and the kids\u2019 pick.", '" Fun " -- and the kids \' pick .'),
])
def test_snippet_tokenisation(raw, tokens):
    assert load_rt_module().tokenize(raw) == tokens


def test_split_is_fixed_by_its_seed_and_covers_every_item():
    rt = load_rt_module()
    items = [("fresh", str(i)) for i in range(105)]
    first, second = rt.split(items), rt.split(list(items))
    assert first == second
    assert [len(first[s]) for s in ("train", "valid", "test")] == [85, 10, 10]
    assert sorted(sum(first.values(), [])) == sorted(items)
    assert rt.split(items, seed=2) != first


def test_help_and_bad_flags(tmp_path):
    help_text = run("--help").stdout
    assert "--pretrain-updates" in help_text and "Stages" in help_text and "--transfer-updates" in help_text
    for args, named in ((["--dim", "x"], "--dim"), (["--bogus"], "--bogus"), (["--mlm-lr", "fast"], "--mlm-lr"),
                        (["--dim", "30", "--heads", "4"], "--heads"), (["--memory"], "--memory"),
                        (["--transfer-updates", "x"], "--transfer-updates"),
                        (["--transfer-lr", "fast"], "--transfer-lr")):
        proc = run("--out", tmp_path / "never", *args, check=False)
        assert proc.returncode != 0 and named in proc.stderr, (args, proc.stderr)
    assert not (tmp_path / "never").exists()


def test_refuses_a_folder_it_did_not_create(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    proc = run("--out", tmp_path, *TOY, check=False)
    assert proc.returncode != 0 and "not empty" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_six_models_report_finite_accuracies_and_perplexities(toy_run):
    out, proc = toy_run
    result = json.loads((out / "results.json").read_text())
    assert list(result["models"]) == list(MODELS)
    for name, row in result["models"].items():
        for key in ("dev_accuracy", "test_accuracy"):
            assert math.isfinite(row[key]) and 0 <= row[key] <= 100, (name, key, row)
        assert math.isfinite(row["mlm_valid_ppl"]) and row["mlm_valid_ppl"] > 1, (name, row)
    assert result["machine"]["threads"] == 1 and result["machine"]["torch"] == torch.__version__
    table = (out / "results.md").read_text()
    assert table.count("| ABC ") == 5 and "| softmax" in table and "Attention transfer: 4 updates" in table
    assert (out / "results.png").stat().st_size > 0
    assert "results:" in proc.stderr


def test_conversion_keeps_every_pretrained_tensor(toy_run):
    out, _ = toy_run
    softmax = torch.load(out / "softmax/checkpoint_last.pt", map_location="cpu", weights_only=False)["model"]
    converted = torch.load(out / "abc_converted/model.pt", map_location="cpu", weights_only=False)["model"]
    assert set(converted) - set(softmax) == {PHI}
    for key, tensor in softmax.items():
        assert torch.equal(converted[key], tensor), key
    assert converted[PHI].shape == (2 * 4, 32)  # --tiny: 2 heads x 4 slots, dim 32
    continued = torch.load(out / "abc_continued/checkpoint_last.pt", map_location="cpu", weights_only=False)["model"]
    assert not torch.equal(continued[PHI], converted[PHI])  # continued MLM trained it
    report = json.loads((out / "results.json").read_text())["conversion"]
    assert report["identical"] == report["softmax_tensors"] == len(softmax) and report["added"] == [PHI]


def test_transfer_stage_trains_phi_alone_and_lowers_the_attention_error(toy_run):
    out, _ = toy_run
    converted = torch.load(out / "abc_converted/model.pt", map_location="cpu", weights_only=False)["model"]
    saved = torch.load(out / "abc_transferred/model.pt", map_location="cpu", weights_only=False)
    transferred, record = saved["model"], saved["abc_transfer"]
    assert set(transferred) == set(converted) and record["updates"] == 4 and record["trained"] == [PHI]
    for key, tensor in converted.items():
        assert torch.equal(transferred[key], tensor) != (key == PHI), key
    log = (out / "abc_transferred/transfer.log").read_text()
    mses = [float(m) for m in re.findall(r"\| mse ([\d.e+-]+) \|", log)]
    assert len(mses) == 4 and all(map(math.isfinite, mses)), log[-2000:]  # one line an update below 10
    row = json.loads((out / "results.json").read_text())["models"]["abc_transferred"]
    assert row["transfer_seconds"] == round(record["wall_seconds"]) and row["mlm_seconds"] == 0


def test_second_run_resumes_without_retraining(toy_run):
    out, _ = toy_run
    before = json.loads((out / "results.json").read_text())["models"]
    checkpoint = out / "abc_scratch/checkpoint_last.pt"
    stamp = checkpoint.stat().st_mtime_ns
    proc = run("--out", out, *TOY)
    assert proc.stderr.count("skipping") == 11  # four MLM stages, the transfer, six fine-tunings
    assert checkpoint.stat().st_mtime_ns == stamp
    after = json.loads((out / "results.json").read_text())["models"]
    assert {n: (r["dev_accuracy"], r["test_accuracy"]) for n, r in after.items()} == \
        {n: (r["dev_accuracy"], r["test_accuracy"]) for n, r in before.items()}


def test_other_settings_on_the_same_folder_are_refused(toy_run):
    out, _ = toy_run
    proc = run("--out", out, *TOY, "--memory", "2", check=False)
    assert proc.returncode != 0 and "holds another run" in proc.stderr
