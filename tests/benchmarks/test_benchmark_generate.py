"""Tests of ``python -m benchmarks generate`` at the tiny size (no timing thresholds)."""

import pytest
import torch
from benchmark_helpers import PNG_SIGNATURE, assert_flag_named, tiny_run_fixture

from benchmarks.generate import BIBLE, SUITE, bible_lengths, check_targets, sentence_batches

SENTENCES, BATCH, N, LONG_BATCH = 4, 2, 8, 2
TINY = ["--sizes", "tiny", "--long-sizes", "tiny", "--greedy-sizes", "--methods", "softmax", "abc",
        "--sentences", str(SENTENCES), "--sentence-batch", str(BATCH), "--beams", "2", "--lengths", str(N),
        "--long-batch", str(LONG_BATCH), "--cross-memory", "4", "--causal-memory", "2", "--rounds", "1",
        "--profile"]


def expected_sentence_tokens() -> int:
    """Every sentence of a batch gets the batch's longest output (words + eos)."""
    return sum(len(batch) * max(t for _, t in batch) for batch in sentence_batches(bible_lengths(SENTENCES), BATCH))


tiny_run = tiny_run_fixture("generate", TINY, key=lambda row: (row["method"], row["case"]))


def test_every_case_generates_the_planned_tokens(tiny_run):
    _, _, record, rows = tiny_run
    assert record["complete"] is True
    assert set(rows) == {(m, c) for m in ("softmax", "abc") for c in ("sentences beam 2 tiny", f"long N={N} tiny")}
    for (method, case), row in rows.items():
        assert row["status"] == "ok", f"{method} {case}: {row.get('message')}"
        assert row["threads"] == 1 and row["tokens_per_s"] > 0 and "peak_mib" not in row
        expected = LONG_BATCH * (N + 1) if case.startswith("long") else expected_sentence_tokens()
        assert row["info"]["tokens"] == expected
        assert row["tokens_per_s"] == pytest.approx(expected / row["generate_s"])
        assert row["profile"] and "ncalls" in row["profile"][0]  # --profile: every case
    softmax, abc = rows[("softmax", "sentences beam 2 tiny")], rows[("abc", "sentences beam 2 tiny")]
    assert abc["speed_vs_softmax"] == pytest.approx(abc["tokens_per_s"] / softmax["tokens_per_s"])
    env = record["environment"]
    for key in ("commit", "cpu_model", "torch", "date", "load_average"):
        assert env.get(key), key


def test_report_targets_and_plot(tiny_run):
    proc, out_dir, record, _ = tiny_run
    text = (out_dir / "generate.md").read_text()
    assert "1 thread(s)" in text and "Profile: abc, sentences beam 2 tiny" in text
    assert "## Targets (informational)" in text and record["targets"] == []  # beam 5 and N=1024 not run
    assert (out_dir / "generate.png").read_bytes()[:8] == PNG_SIGNATURE
    assert text.strip() in proc.stdout


def test_targets_compare_abc_with_softmax_and_rfa():
    def row(method, case, seconds):
        return {"method": method, "case": case, "status": "ok", "generate_s": seconds}

    rows = [row("softmax", "sentences beam 5 small", 2.0), row("abc", "sentences beam 5 small", 1.0),
            row("rfa", "sentences beam 5 small", 0.5), row("softmax", "long N=1024 small", 3.0),
            row("abc", "long N=1024 small", 2.0), row("rfa", "long N=1024 small", 4.0)]
    status = {t["name"]: t["status"] for t in check_targets(rows)}
    assert status == {"abc >= 1x softmax tokens/s, sentences beam 5 small": "PASS",
                      "abc >= rfa tokens/s, sentences beam 5 small": "FAIL",
                      "abc >= 2x softmax tokens/s, long N=1024 small": "FAIL",
                      "abc >= rfa tokens/s, long N=1024 small": "PASS"}


def test_bible_lengths_are_words_plus_eos():
    first_es = (BIBLE / "test.es").read_text(encoding="utf-8").splitlines()[0]
    first_en = (BIBLE / "test.en").read_text(encoding="utf-8").splitlines()[0]
    assert bible_lengths(1) == [(len(first_es.split()) + 1, len(first_en.split()) + 1)]
    batches = sentence_batches(bible_lengths(10), 4)
    assert [len(b) for b in batches] == [4, 4, 2]
    flat = [pair for batch in batches for pair in batch]
    assert flat == sorted(bible_lengths(10))


def test_a_worker_case_generates_left_padded_sentences():
    params = dict(encoder_layers=1, decoder_layers=1, embed_dim=32, heads=2, ffn_dim=64, vocab=64, dtype="float32",
                  sizes={"abc": [4, 2]}, seed=0, beam=3, workload="sentences", sentences=3, batch=3, method="abc")
    case = SUITE.build_case(params, torch.device("cpu"))
    case.run()
    assert case.info["tokens"] == 3 * max(t for _, t in bible_lengths(3))
    assert case.info["source_tokens"] == sum(s for s, _ in bible_lengths(3))


@pytest.mark.parametrize("argv,flag", [
    (["--beams"] + ["--lengths"], "--beams"),
    (["--sentences", "100000"], "--sentences"),
    (["--rfa-memory", "5", "4"], "--rfa-memory"),
    (["--sizes", "huge"], "--sizes"),
])
def test_bad_flags_are_named(argv, flag, capsys):
    assert_flag_named("generate", argv, flag, capsys)
