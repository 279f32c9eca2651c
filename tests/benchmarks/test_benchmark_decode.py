"""Tests of ``python -m benchmarks decode`` at tiny sizes (no timing thresholds)."""

import pytest
import torch
from benchmark_helpers import PNG_SIGNATURE, assert_flag_named, tiny_run_fixture

from benchmarks.decode import build_translation_model, check_targets, greedy_decode, state_bytes
from benchmarks.graph_step import graph_decode
from benchmarks.harness import build_parser

LENGTHS = (8, 32)
BATCH, LAYERS, DIM, HEADS, CROSS, CAUSAL = 2, 2, 32, 2, 4, 2
HEAD_DIM = DIM // HEADS
KERNEL_SIZES = {"rfa": (8, 4), "t2r": (6, 2)}  # (cross, causal) features
TINY = ["--lengths", *map(str, LENGTHS), "--batch", str(BATCH), "--vocab", "64", "--encoder-layers", "1",
        "--decoder-layers", str(LAYERS), "--embed-dim", str(DIM), "--heads", str(HEADS), "--ffn-dim", "32",
        "--cross-memory", str(CROSS), "--causal-memory", str(CAUSAL), "--repeats", "0", "--warmup", "0",
        "--threads", "1",
        *(arg for name, sizes in KERNEL_SIZES.items() for arg in (f"--{name}-memory", *map(str, sizes)))]
FP32 = 4
SIZES = {"abc": [CROSS, CAUSAL], **{name: list(sizes) for name, sizes in KERNEL_SIZES.items()}}


tiny_run = tiny_run_fixture("decode", TINY, key=lambda row: (row["method"], row["N"]))


def test_every_method_and_length_decodes_exactly_n_steps(tiny_run):
    _, _, record, rows = tiny_run
    assert record["complete"] is True
    assert set(rows) == {(m, n) for m in ("softmax", "abc", "rfa", "t2r") for n in LENGTHS}
    for (method, n), row in rows.items():
        assert row["status"] == "ok", f"{method} N={n}: {row.get('status')}: {row.get('message')}"
        assert row["info"]["tokens_decoded"] == BATCH * n
        assert row["tokens_per_s"] > 0 and row["ms_per_step"] > 0
        # the CPU goes unprobed in decode (and with --repeats 0): the profiler's log grows with every allocation
        assert row["timed_call"] == "first" and row["times_s"] == [row["first_call_s"]]
        assert "peak_bytes" not in row and "memory_probe" not in row
    assert record["environment"]["command"].startswith("python -m benchmarks decode --lengths 8 32")


def test_abc_state_is_constant_and_softmax_state_grows(tiny_run):
    _, _, _, rows = tiny_run
    # ABC, per layer, sentence and head: causal (K~, V~: n x d each, log-normaliser: n) and the
    # cross memory (K~, V~: n x d each), float32, whatever N.
    abc_self = LAYERS * BATCH * HEADS * (2 * CAUSAL * HEAD_DIM + CAUSAL) * FP32
    abc_cross = LAYERS * BATCH * HEADS * 2 * CROSS * HEAD_DIM * FP32
    for n in LENGTHS:
        state = rows[("abc", n)]["state_bytes"]
        assert (state["self"], state["cross"], state["other"]) == (abc_self, abc_cross, 0), n
        assert state["total"] == abc_self + abc_cross
    # RFA and T2R, per layer, sentence and head: S [D x d] and z [D] in causal and cross attention.
    for method, (cross, causal) in KERNEL_SIZES.items():
        kernel_self = LAYERS * BATCH * HEADS * (causal * HEAD_DIM + causal) * FP32
        kernel_cross = LAYERS * BATCH * HEADS * (cross * HEAD_DIM + cross) * FP32
        for n in LENGTHS:
            state = rows[(method, n)]["state_bytes"]
            assert (state["self"], state["cross"], state["other"]) == (kernel_self, kernel_cross, 0), (method, n)
    # softmax caches keys and values of all N decoded tokens and of all N source tokens.
    totals = [rows[("softmax", n)]["state_bytes"]["total"] for n in LENGTHS]
    assert totals == sorted(set(totals))  # strictly growing
    for n in LENGTHS:
        state = rows[("softmax", n)]["state_bytes"]
        assert state["self"] == LAYERS * BATCH * HEADS * n * HEAD_DIM * 2 * FP32
        assert state["cross"] >= LAYERS * BATCH * HEADS * n * HEAD_DIM * 2 * FP32
        assert rows[("abc", n)]["state_vs_softmax"] == pytest.approx(
            (abc_self + abc_cross) / state["total"])


def test_report_plot_and_targets(tiny_run):
    proc, out_dir, record, _ = tiny_run
    header = ("| N | method | tokens/s | ms/step | x softmax speed | state MiB | "
              "x softmax state | peak MiB |")
    assert " ".join(header.split()) in " ".join(proc.stdout.split())
    assert "incremental decoder API" in proc.stdout
    assert "not measured, the CPU goes unprobed where a call makes too many allocations" in proc.stdout
    assert (out_dir / "decode.md").read_text().strip() == proc.stdout.strip()
    data = (out_dir / "decode.png").read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert [t["status"] for t in record["targets"]] == ["SKIP", "SKIP", "PASS"]
    assert "# Greedy decoding speed and attention-state memory: softmax vs ABC, RFA, T2R" in proc.stdout
    assert "cross / causal sizes: ABC 4/2, RFA 8/4, T2R 6/2" in proc.stdout
    assert "DEBUG:matplotlib" not in proc.stderr


@pytest.mark.parametrize("method", ["softmax", "abc", "rfa", "t2r"])
def test_greedy_loop_matches_full_forward_argmax(method):
    """The incremental loop decodes what a full forward over its own output predicts (float64)."""
    torch.manual_seed(0)
    params = dict(method=method, length=12, vocab=40, encoder_layers=1, decoder_layers=2, embed_dim=DIM,
                  heads=HEADS, ffn_dim=32, sizes=SIZES)
    model, dictionary = build_translation_model(params)
    model = model.double()
    assert len(dictionary) == 40
    src = torch.randint(dictionary.nspecial, 40, (3, 12))
    src_lengths = torch.full((3,), 12)
    with torch.no_grad():
        encoder_out = model.encoder(src, src_lengths=src_lengths)
        tokens, incremental_state = greedy_decode(model, encoder_out, 12, dictionary.eos(), dictionary.pad())
        logits = model(src, src_lengths, tokens[:, :-1])[0]
    logits[:, :, dictionary.pad()] = float("-inf")
    assert tokens.shape == (3, 13) and not (tokens == dictionary.pad()).any()
    assert torch.equal(logits.argmax(-1), tokens[:, 1:])
    sizes = state_bytes(incremental_state, model.decoder)
    assert sizes["other"] == 0 and sizes["self"] > 0 and sizes["cross"] > 0


@pytest.mark.parametrize("method", ["softmax", "abc"])
def test_the_graph_steps_split_equals_fairseqs_decoder(method):
    """--cuda-graph's step cut in two (the embedding eager, the layers and the output projection
    one graph on CUDA), run eagerly on CPU: fairseq's decoder's logits and tokens at every step."""
    torch.manual_seed(0)
    params = dict(method=method, length=10, vocab=40, encoder_layers=1, decoder_layers=2, embed_dim=DIM,
                  heads=HEADS, ffn_dim=32, sizes=SIZES)
    model, dictionary = build_translation_model(params)
    model = model.double()
    src = torch.randint(dictionary.nspecial, 40, (3, 10))
    with torch.no_grad():
        encoder_out = model.encoder(src, src_lengths=torch.full((3,), 10))
        tokens, _ = greedy_decode(model, encoder_out, 10, dictionary.eos(), dictionary.pad())
        split, state = graph_decode(model, encoder_out, 10, dictionary.eos(), dictionary.pad(), graph=False)
        logits = model(src, torch.full((3,), 10), split[:, :-1])[0]
    assert torch.equal(split, tokens)
    last, _ = model.decoder(split[:, :-1], encoder_out=encoder_out)  # the full pass over the same tokens
    torch.testing.assert_close(last, logits, rtol=0, atol=1e-10)


def test_cuda_graph_flag_is_parsed_and_needs_cuda(capsys):
    assert build_parser().parse_args(["decode", "--cuda-graph"]).cuda_graph is True
    assert build_parser().parse_args(["decode"]).cuda_graph is False
    assert_flag_named("decode", ["--cuda-graph", "--device", "cpu"], "--cuda-graph", capsys)


def _row(method, n, seconds, state=100, status="ok"):
    if status != "ok":
        return {"method": method, "N": n, "status": status}
    return {"method": method, "N": n, "status": status, "decode_s": seconds,
            "us_per_token": seconds * 1e6 / (16 * n), "state_mib": state / 2 ** 20}


def test_targets_pass_fail_skip():
    rows = {}
    for n in (256, 512, 1024, 2048, 4096):
        rows[("softmax", n)] = _row("softmax", n, n * n / 1e5, state=n * 1000)
        rows[("abc", n)] = _row("abc", n, n / 100)
    assert [t["status"] for t in check_targets(rows)] == ["PASS", "PASS", "PASS"]

    rows[("abc", 4096)] = _row("abc", 4096, 4096 / 50, state=101)  # 2x slower per token, state grew
    assert [t["status"] for t in check_targets(rows)] == ["FAIL", "FAIL", "FAIL"]

    rows[("abc", 4096)] = _row("abc", 4096, None, status="oom")
    rows[("softmax", 4096)] = _row("softmax", 4096, None, status="timeout")
    assert [t["status"] for t in check_targets(rows)] == ["FAIL", "SKIP", "FAIL"]

    del rows[("abc", 256)]
    assert check_targets(rows)[0]["status"] == "SKIP"


@pytest.mark.parametrize("argv, flag", [
    (["--embed-dim", "30", "--heads", "4"], "--embed-dim"),
    (["--batch", "0"], "--batch"),
    (["--methods", "flash"], "--methods"),
    (["--rfa-memory", "7", "4"], "--rfa-memory"),
    (["--t2r-memory", "4"], "--t2r-memory"),
    (["--vocab", "3"], "--vocab"),
    (["--lengths", "-4"], "--lengths"),
])
def test_bad_flags_are_named(argv, flag, capsys):
    assert_flag_named("decode", argv, flag, capsys)


def test_a_case_decodes_untimed_steps_before_its_first_timed_call(monkeypatch):
    """With --repeats 0 the timed call is the first: the kernels must have compiled before it."""
    from benchmarks import decode

    steps = []
    real = decode.greedy_decode

    def counted(model, encoder_out, n, *rest):
        steps.append(n)
        return real(model, encoder_out, n, *rest)

    monkeypatch.setattr(decode, "greedy_decode", counted)
    params = dict(vocab=64, encoder_layers=1, decoder_layers=1, embed_dim=DIM, heads=HEADS, ffn_dim=32,
                  dtype="float32", method="abc", length=8, batch=BATCH, sizes=SIZES)
    case = decode.DecodeSuite().build_case(params, torch.device("cpu"))
    assert steps == [decode.PRIMING_STEPS]
    case.run()
    assert steps == [decode.PRIMING_STEPS, 8]
