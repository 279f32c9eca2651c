"""Tests of ``python -m benchmarks encode`` at tiny sizes (no timing thresholds)."""

import pytest
import torch
from benchmark_helpers import PNG_SIGNATURE, assert_flag_named, tiny_run_fixture

from benchmarks.encode import build_encoder, check_targets
from benchmarks.harness import build_parser

LENGTH, BATCH = 24, 2
TINY = ["--length", str(LENGTH), "--batch", str(BATCH), "--memories", "64", "--vocab", "64", "--layers", "1",
        "--embed-dim", "32", "--heads", "2", "--ffn-dim", "32", "--repeats", "1", "--warmup", "0",
        "--threads", "1"]


tiny_run = tiny_run_fixture("encode", TINY)


def test_every_method_is_measured_relative_to_softmax(tiny_run):
    _, _, record, rows = tiny_run
    assert record["complete"] is True
    assert list(rows) == ["softmax", "softmax-unfused", "linformer-64", "abc-64"]
    assert rows["softmax-unfused"]["speed_vs_unfused"] == 1.0 and rows["abc-64"]["memory_vs_unfused"] > 0
    for name, row in rows.items():
        assert row["status"] == "ok", f"{name}: {row.get('message')}"
        assert row["ms_per_batch"] > 0 and row["sequences_per_s"] > 0 and row["peak_mib"] >= 0
        assert row["info"]["output_shape"] == [BATCH, LENGTH, 32]
        assert row["speed_vs_softmax"] > 0
    assert rows["softmax"]["speed_vs_softmax"] == 1.0
    assert rows["abc-64"]["info"]["parameters"] > rows["softmax"]["info"]["parameters"]  # + W_phi
    assert record["environment"]["command"].startswith("python -m benchmarks encode --length 24")


def test_report_table_targets_and_plot(tiny_run):
    proc, out_dir, record, _ = tiny_run
    text = (out_dir / "encode.md").read_text()
    assert "| method" in text and "| abc-64" in text and "speed vs softmax" in text
    assert "## Targets (informational)" in proc.stdout
    # the targets need N=512 and N=4096, which the tiny run does not measure
    assert [t["status"] for t in record["targets"]] == ["SKIP"] * 3
    assert "- SKIP: abc-64 >= 1.15x faster than softmax-unfused at N=512 -- needs" in proc.stdout
    assert (out_dir / "encode.png").read_bytes().startswith(PNG_SIGNATURE)


def test_models_share_dimensions_and_use_their_attention():
    from fairseq.modules import MultiheadAttention

    from abc_fairseq.modules import ABCMultiheadAttention

    params = {"vocab": 64, "layers": 2, "embed_dim": 32, "heads": 2, "ffn_dim": 32, "length": 16}
    models = {kind: build_encoder(dict(params, kind=kind, memory=None if kind == "softmax" else 8))
              for kind in ("softmax", "linformer", "abc")}
    assert isinstance(models["softmax"].encoder.sentence_encoder.layers[0].self_attn, MultiheadAttention)
    for kind in ("linformer", "abc"):
        attn = models[kind].encoder.sentence_encoder.layers[0].self_attn
        assert isinstance(attn, ABCMultiheadAttention)
    shared = {k: v.shape for k, v in models["softmax"].state_dict().items()}
    for kind in ("linformer", "abc"):
        own = {k: v.shape for k, v in models[kind].state_dict().items() if "self_attn_phi" not in k}
        assert own == shared
    tokens = torch.randint(4, 64, (2, 16))
    with torch.inference_mode():
        assert models["abc"](tokens, features_only=True)[0].shape == (2, 16, 32)


def test_unfused_softmax_is_the_same_model_on_fairseqs_own_attention_path():
    params = {"vocab": 64, "layers": 2, "embed_dim": 32, "heads": 2, "ffn_dim": 32, "length": 16, "memory": None}
    fused, unfused = (build_encoder(dict(params, kind=kind)) for kind in ("softmax", "softmax-unfused"))
    unfused.load_state_dict(fused.state_dict())
    layers = unfused.encoder.sentence_encoder.layers
    assert all(layer.self_attn.skip_embed_dim_check for layer in layers)
    assert not any(layer.self_attn.skip_embed_dim_check for layer in fused.encoder.sentence_encoder.layers)
    tokens = torch.randint(4, 64, (2, 16))
    with torch.inference_mode():
        torch.testing.assert_close(unfused(tokens, features_only=True)[0], fused(tokens, features_only=True)[0],
                                   rtol=1e-5, atol=1e-5)


def test_help_and_flag_errors(capsys):
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["encode", "--help"])
    assert "--memories" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        parser.parse_args(["encode", "--memories", "0"])
    assert "--memories" in capsys.readouterr().err


def _at(seconds, mib):
    return {"status": "ok", "encode_s": seconds, "peak_mib": mib}


def test_length_targets_at_512_against_unfused_and_at_4096_against_fused():
    rows = {("softmax-unfused", 512): _at(1.2, 100.0), ("abc-64", 512): _at(1.0, 60.0),
            ("softmax", 4096): _at(2.0, 50.0), ("abc-64", 4096): _at(1.9, 80.0)}
    assert [t["status"] for t in check_targets(rows)] == ["PASS", "PASS", "PASS"]
    rows[("abc-64", 512)] = _at(1.1, 61.0)  # 1.09x faster, 0.61x the memory: both short
    rows[("abc-64", 4096)] = _at(2.0, 10.0)  # as fast as fused softmax is not faster
    assert [t["status"] for t in check_targets(rows)] == ["FAIL", "FAIL", "FAIL"]
    rows[("abc-64", 4096)] = {"status": "oom"}
    del rows[("softmax-unfused", 512)]
    assert [t["status"] for t in check_targets(rows)] == ["SKIP", "SKIP", "FAIL"]
    rows[("softmax", 4096)] = {"status": "crashed"}  # a failed reference decides nothing
    assert [t["status"] for t in check_targets(rows)] == ["SKIP", "SKIP", "SKIP"]


def test_every_length_gets_the_same_tokens_per_batch():
    from benchmarks.encode import SUITE
    from benchmarks.harness import make_row, prepare

    args = build_parser().parse_args(["encode", *TINY, "--lengths", "64", "16", "--batch", "8", "--methods",
                                      "softmax", "abc"])
    prepare(SUITE, args)
    cases = SUITE.measurements(args)
    assert [item.label for item in cases] == ["softmax batch=8 N=16", "abc-64 batch=8 N=16",
                                              "softmax batch=2 N=64", "abc-64 batch=2 N=64"]
    assert [(item.params["length"], item.params["batch"]) for item in cases] == [(16, 8), (16, 8), (64, 2), (64, 2)]
    row = make_row(SUITE, cases[-1], {"status": "ok", "times_s": [0.5], "peak_bytes": 2 ** 20})
    assert (row["N"], row["batch"], row["sequences_per_s"], row["tokens_per_s"], row["peak_mib"]) == (64, 2, 4, 256, 1)


def test_too_few_tokens_for_the_longest_length_names_the_flag(capsys):
    assert_flag_named("encode", ["--lengths", "512", "4096", "--batch", "4"], "--batch", capsys)
