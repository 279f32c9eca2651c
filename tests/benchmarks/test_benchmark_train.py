"""Tests of ``python -m benchmarks train`` at tiny sizes on the CPU (no timing thresholds:
the 0.85x target is for GPUs)."""

import math
import subprocess
import sys

import pytest
import torch
from benchmark_helpers import PNG_SIGNATURE, REPO, assert_flag_named, tiny_run_fixture

from benchmarks.fairseq_models import synthetic_dictionary
from benchmarks.harness import build_parser
from benchmarks.train import CASES, DEFAULT_CASES, check_targets, synthetic_sample

LM_LENGTH, MT_LENGTH, BATCH = 16, 12, 2
LM_ARGS = "--adaptive-input-cutoff 20,40 --adaptive-softmax-cutoff 20,40"
TINY_MODELS = ["--vocab", "64", "--layers", "1", "--embed-dim", "32", "--heads", "2", "--ffn-dim", "32",
               "--lm-length", str(LM_LENGTH), "--mt-length", str(MT_LENGTH), "--repeats", "2", "--warmup", "1",
               "--threads", "1", "--lm-args", LM_ARGS]
TINY = ["--batch", str(BATCH), *TINY_MODELS]


tiny_run = tiny_run_fixture("train", TINY)


def test_every_case_trains_through_fairseq_with_its_attention(tiny_run):
    _, _, record, rows = tiny_run
    assert record["complete"] is True and list(rows) == list(DEFAULT_CASES)
    for case, row in rows.items():
        info = row["info"]
        assert row["status"] == "ok", f"{case}: {row.get('message')}"
        assert row["tokens_per_s"] > 0 and row["peak_mib"] > 0 and row["ms_per_update"] > 0
        length = LM_LENGTH if CASES[case].kind == "lm" else MT_LENGTH
        assert (row["batch"], row["N"], info["tokens_per_update"]) == (BATCH, length, BATCH * length)
        assert row["tokens_per_s"] == pytest.approx(BATCH * length / row["update_s"])
        assert info["arch"] == CASES[case].arch == info["fairseq_argv"][info["fairseq_argv"].index("--arch") + 1]
        assert "--cpu" in info["fairseq_argv"] and "--fp16" not in info["fairseq_argv"]
        # memory update + 1 warmup + 2 timed, every one applied (fp32: no overflow skips)
        assert len(info["losses"]) == 4 and info["overflows"] == 0
        assert all(math.isfinite(loss) and loss > 0 for loss in info["losses"])
        assert info["parameters_changed"] is True
    for case in ("abc_lm_wiki103", "abc_transformer_wmt_en_de"):
        modules = rows[case]["info"]["attention"]
        assert any(m.startswith("ABCMultiheadAttention(mode=causal, strategy=abc") for m in modules)
        assert rows[case]["info"]["parameters"] > rows[CASES[case].pair]["info"]["parameters"]  # + W_phi
        assert rows[case]["speed_vs_pair"] > 0 and rows[case]["memory_vs_pair"] > 0
    cross = [m for m in rows["abc_transformer_wmt_en_de"]["info"]["attention"] if "mode=cross" in m]
    assert cross and "memory_size=32" in cross[0]
    for case in ("transformer_lm_wiki103", "transformer_wmt_en_de"):
        assert rows[case]["info"]["attention"] == ["MultiheadAttention"]
        assert rows[case]["speed_vs_pair"] is None
    assert record["config"]["dtype"] == "float32"  # the CPU default
    assert record["environment"]["command"].startswith("python -m benchmarks train --batch 2 --vocab 64")


def test_report_table_targets_and_plot(tiny_run):
    proc, out_dir, record, _ = tiny_run
    text = (out_dir / "train.md").read_text()
    assert "| case" in text and "| abc_lm_wiki103" in text and "| transformer_wmt_en_de" in text
    assert "tokens/s" in text and "speed vs pair" in text
    assert "## Targets (informational)" in proc.stdout
    assert [t["name"] for t in record["targets"]] == [
        "abc_lm_wiki103 trains at >= 0.85x transformer_lm_wiki103's throughput",
        "abc_transformer_wmt_en_de trains at >= 0.85x transformer_wmt_en_de's throughput"]
    assert all(t["status"] in ("PASS", "FAIL") for t in record["targets"])
    assert (out_dir / "train.png").read_bytes().startswith(PNG_SIGNATURE)


def test_targets_logic():
    def at(seconds):
        return {"status": "ok", "update_s": seconds}

    rows = {"transformer_lm_wiki103": at(1.0), "abc_lm_wiki103": at(1.0 / 0.86),
            "transformer_wmt_en_de": at(1.0), "abc_transformer_wmt_en_de": at(1.0 / 0.84)}
    assert [t["status"] for t in check_targets(rows)] == ["PASS", "FAIL"]
    rows["abc_lm_wiki103"] = {"status": "oom"}
    rows["transformer_wmt_en_de"] = {"status": "crashed"}
    assert [t["status"] for t in check_targets(rows)] == ["FAIL", "SKIP"]
    assert [t["status"] for t in check_targets({})] == ["SKIP", "SKIP"]
    # GSA's target (at most 1.2x ABC's time) appears where GSA ran
    small = {"abc_lm_small": at(1.0), "gsa_lm_small": at(1.19)}
    assert [(t["name"], t["status"]) for t in check_targets(small)][-1] == (
        "gsa_lm_small trains at >= 0.833x abc_lm_small's throughput", "PASS")
    small["gsa_lm_small"] = at(1.25)
    assert check_targets(small)[-1]["status"] == "FAIL"


def test_gsa_case_is_the_quickstart_model_with_gsa_self_attention():
    from benchmarks.train import fairseq_argv

    params = {"case": "gsa_lm_small", "kind": "lm", "length": 256, "dtype": "float32", "model_args": ""}
    argv = fairseq_argv(params, on_cuda=False)
    assert argv[argv.index("--arch") + 1] == "abc_lm_small"
    assert argv[argv.index("--decoder-self-attn") + 1] == "gsa"
    assert len(argv) - argv[::-1].index("--criterion") - 1 > argv.index("adaptive_loss")  # cross_entropy wins
    assert argv[len(argv) - argv[::-1].index("--criterion")] == "cross_entropy"


def test_synthetic_batches_are_shifted_like_fairseqs():
    dictionary = synthetic_dictionary(64)
    generator = torch.Generator().manual_seed(0)
    lm = synthetic_sample({"kind": "lm", "batch": 3, "length": 5}, dictionary, generator)
    assert lm["net_input"]["src_tokens"].shape == lm["target"].shape == (3, 5) and lm["ntokens"] == 15
    assert torch.equal(lm["net_input"]["src_tokens"][:, 1:], lm["target"][:, :-1])
    mt = synthetic_sample({"kind": "mt", "batch": 3, "length": 5}, dictionary, generator)
    source, previous, target = mt["net_input"]["src_tokens"], mt["net_input"]["prev_output_tokens"], mt["target"]
    eos = dictionary.eos()
    assert (source[:, -1] == eos).all() and (target[:, -1] == eos).all() and (previous[:, 0] == eos).all()
    assert torch.equal(previous[:, 1:], target[:, :-1])
    assert (source[:, :-1] >= dictionary.nspecial).all() and (target[:, :-1] >= dictionary.nspecial).all()


def test_tokens_per_batch_divides_into_each_cases_length():
    from benchmarks.harness import prepare
    from benchmarks.train import SUITE

    args = build_parser().parse_args(["train", *TINY_MODELS, "--tokens-per-batch", "48"])
    prepare(SUITE, args)
    shapes = [(m.params["batch"], m.params["length"]) for m in SUITE.measurements(args)]
    assert shapes == [(3, 16), (3, 16), (4, 12), (4, 12)]
    assert [m.params["model_args"] for m in SUITE.measurements(args)][1:3] == [LM_ARGS, ""]


def test_help_does_nothing_else(tmp_path):
    out_dir = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "train", "--help", "--out-dir",
                           str(out_dir)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "--tokens-per-batch" in proc.stdout and "--lm-args" in proc.stdout
    assert "fairseq.trainer.Trainer" in proc.stdout
    assert not out_dir.exists() and "[1/" not in proc.stderr


@pytest.mark.parametrize("argv, flag", [
    (["--device", "cpu", "--dtype", "float16"], "--dtype"),
    (["--dtype", "bfloat16"], "--dtype"),
    (["--batch", "0"], "--batch"),
    (["--batch", "2", "--tokens-per-batch", "64"], "--tokens-per-batch"),
    (["--embed-dim", "30", "--heads", "4"], "--embed-dim"),
    (["--lm-args", "--adaptive-input-cutoff '20"], "--lm-args"),
    (["--cases", "transformer_lm"], "--cases"),
])
def test_bad_flags_are_named(argv, flag, capsys):
    assert_flag_named("train", argv, flag, capsys)


def test_a_failed_case_is_noted_with_its_sequence_length():
    from benchmarks.report import table
    from benchmarks.train import SUITE

    rows = [{"method": "abc_lm_wiki103", "kind": "lm", "N": 16, "batch": 2, "status": "oom",
             "message": "out of memory"}]
    text, notes = table(SUITE, rows)
    assert "oom [1]" in text and notes == ["- [1] abc_lm_wiki103 N=16: oom: out of memory"]
