"""``python -m tools.cost_model``: the calibrated cost model's counts (sequential steps of every op
on the path, PyTorch glue included), its fit (recovers the constants of rows the model itself
generated; leave-one-out), and its table of the saved H100 rows, read from the saved files."""

import json
import math
import os
import shutil

import numpy as np
import pytest
from fairseq_helpers import ROOT, run_module

from tools import cost_model
from tools.causal_cost import F

RESULTS = os.path.join(ROOT, cost_model.RESULTS)


def _launch(cost, name):
    return next(x for x in cost.launches if x.name == name)


def test_every_sequential_step_is_counted():
    Z, N, d, n, C = 3, 320, 16, 8, 16
    previous = cost_model.ours(Z, N, d, n, C, 2, "attention", normaliser="logcumsumexp", grouped_scan=False)
    logcumsumexp = _launch(previous, "PyTorch: logcumsumexp")
    assert (logcumsumexp.steps, logcumsumexp.programs, logcumsumexp.kind) == (N, Z * n, "torch scan")
    scans = [_launch(previous, f"chunk_scan_kernel ({way})").steps for way in ("forward", "reverse")]
    assert scans == [N // C, N // C]
    calls, ops, triton, steps, _, flops = cost_model.features(previous)[0]
    assert steps == N + 2 * N // C + 4  # the scan and two chunk loops, plus one step per chunk kernel
    assert (calls, triton, flops) == (1, 6, 0)  # sums, scan, output, rows, reverse scan, columns
    # the normalisers (a cast of half logits, the scan, 10 more), the dl sum, the harness's 3
    assert ops == 1 + 11 + 1 + 3
    assert cost_model.features(previous, "torch")[0][3] == N
    assert cost_model.features(previous, "kernel")[0][3] == 2 * N // C + 4
    # the default finds the normalisers in the kernels: nothing sequential over N outside them
    current = cost_model.ours(Z, N, d, n, C, 2, "attention")
    assert all(x.kind != "torch scan" for x in current.launches)
    # the scans load and combine 4 (forward, writing the normalisers) and 8 (reverse) chunks per dependent step
    groups = [-(-N // C // 4), -(-N // C // 8)]
    assert [_launch(current, f"chunk_scan_kernel ({way})").steps for way in ("forward", "reverse")] == groups
    assert list(cost_model.features(current)[0][1:4]) == [1 + 3, 6, sum(groups) + 4]
    saved = sum(x.bytes for x in previous.launches) - sum(x.bytes for x in current.launches)
    assert saved > 3 * Z * N * n * 4  # g [Z, N, n] fp32 no longer written by PyTorch nor read by three kernels
    # fla: five loops over its 64-row chunks and the normaliser's (64-row blocks assumed)
    fla = cost_model.fla_launches(2, 4096, 64, 64, 64, 2)
    assert sorted(x.steps for x in fla if x.steps > 1) == [4096 // 64] * 6
    swapped = cost_model.fla_launches(8192, 4, 64, 64, 64, 2)  # the saved rows' problem: one chunk
    assert max(x.steps for x in swapped) == 1
    # flash attention: 7 N d FLOPs per token and head, forward + backward, causal
    assert cost_model.flash(5, 1024, 64, 2, "attention").flash_flops == 7 * 1024 * 64 * 5 * 1024


def _synthetic_rows(constants):
    costs = [cost_model.ours(Z, N, 64, 64, C, P, harness, logit_bytes=L, split_columns=split, normaliser=way)
             for Z, N in ((4, 8192), (64, 512), (16, 2048), (512, 512)) for C in (16, 64)
             for P, L in ((2, 2), (2, 4)) for harness in ("selfcheck", "attention") for split in (False, True)
             for way in ("chunked", "logcumsumexp")]
    costs += [cost_model.flash(Z, N, d, 2, "attention")
              for Z, N in ((4, 8192), (512, 512), (32, 2048)) for d in (64, 128)]
    costs += [cost_model.fla(1, N, Z, 64, 64, 2, "selfcheck") for N, Z in ((4, 8192), (2048, 32))]
    costs += [cost_model.Cost([cost_model.Launch("step", ops, 0, 0, 0, 1e8, "torch")], calls=0) for ops in (150, 250)]
    return [cost_model.Row("synthetic", "m", "s", "float16", cost_model.predict(cost, constants), cost, True)
            for cost in costs]


def test_the_fit_recovers_the_constants_of_rows_the_model_made():
    truth = [120.0, 15.0, 60.0, 0.4, 0.8, 2500.0]
    rows = _synthetic_rows(truth)
    X, fixed, measured = cost_model.design(rows)
    np.testing.assert_allclose(cost_model.fit(X, fixed, measured), truth, rtol=1e-6)
    np.testing.assert_allclose(cost_model.leave_one_out(X, fixed, measured), measured, rtol=1e-6)
    # a constant that is zero stays zero (non-negative least squares), the others are found
    truth = [0.0, 30.0, 90.0, 0.5, 0.3, 1000.0]
    X, fixed, measured = cost_model.design(_synthetic_rows(truth))
    np.testing.assert_allclose(cost_model.fit(X, fixed, measured), truth, rtol=1e-6, atol=1e-9)
    # with +-5% noise on the rows the constants stay non-negative and near the truth
    noisy = measured * (1 + 0.05 * np.sin(np.arange(len(measured))))
    fitted = cost_model.fit(X, fixed, noisy)
    assert np.all(fitted >= 0)
    np.testing.assert_allclose(fitted[1:], truth[1:], rtol=0.25)


@pytest.fixture(scope="module")
def decode_counts():
    """The decoding step's counts at the saved run's sizes (counted once: a model build each)."""
    with open(os.path.join(RESULTS, "decode.json")) as f:
        config = json.load(f)["config"]
    return {method: cost_model.decode_ops(method, config) for method in ("softmax", "abc")}


def test_a_decoding_step_counts_two_launches_per_abc_layer(decode_counts):
    """The fused self-attention step and the cross-attention read, each one launch on CUDA; the
    run's code did the same launches and 4 more PyTorch ops per layer: the padding mask's
    inversion and the logits' fp32 copy (since removed), and q, k, v in three products (one
    since ``fused_projection``)."""
    with open(os.path.join(RESULTS, "decode.json")) as f:
        config = json.load(f)["config"]
    one, two = (cost_model.decode_ops("abc", dict(config, decoder_layers=layers)) for layers in (1, 2))
    layers = config["decoder_layers"]
    assert (one[1], two[1], decode_counts["abc"][1]) == (2, 4, 2 * layers)
    per_layer = two[0] - one[0]
    assert per_layer > 10 and decode_counts["abc"][0] == one[0] + (layers - 1) * per_layer
    assert decode_counts["softmax"][1] == 0 and decode_counts["softmax"][0] > 10 * layers
    run = cost_model.H100_RUN_DECODE_COUNTS
    assert run["softmax"] == decode_counts["softmax"]
    assert run["abc"] == (decode_counts["abc"][0] + 4 * layers, decode_counts["abc"][1])


def test_the_saved_h100_rows_and_their_fit():
    with open(os.path.join(RESULTS, "selfcheck.json")) as f:
        timings = json.load(f)["timings"]
    with open(os.path.join(RESULTS, "attention_fp16_partial.json")) as f:
        suite = json.load(f)["results"]
    with open(os.path.join(RESULTS, "decode.json")) as f:
        decode = json.load(f)["results"]
    rows = cost_model.saved_rows(RESULTS)
    fitted = [row for row in rows if row.fitted]
    expected = (2 * len(timings) + sum(r["method"] in ("abc", "sdpa") and r["status"] == "ok" for r in suite)
                + sum(r["method"] in ("softmax", "abc") for r in decode))
    assert len(fitted) == expected == 33
    assert sorted(row.method for row in rows if not row.fitted) == ["fla chunk_abc"] * len(timings)
    result = cost_model.calibrate(rows)
    by_key = {(r["source"], r["method"], r["size"], r["dtype"]): r for r in result["fit"]}
    long_row = by_key[("selfcheck.json", "abc triton", "Z=4 N=8192 d=64", "float16")]
    assert long_row["measured_us"] == pytest.approx(1e3 * timings[8]["abc triton"]) == pytest.approx(6098.88, abs=0.01)
    first = suite[0]  # abc at N = 512, 64 x 8 sequence-heads
    assert by_key[("attention_fp16_partial.json", "abc", "Z=512 N=512 d=64", "float16")]["measured_us"] == \
        pytest.approx(1e3 * first["ms_per_call"])
    step = by_key[("decode.json", "decode abc", "batch 16 N=512, a step", "float16")]
    assert step["measured_us"] == pytest.approx(1e3 * decode[1]["ms_per_step"]) == pytest.approx(5369.31, abs=0.01)
    for r in result["fit"]:
        assert r["error"] == pytest.approx(r["predicted_us"] / r["measured_us"] - 1)
    # the stated accuracy (docs/gpu.md): median within 10%, every row within 35%; leave-one-out
    # median within 15%, every row within 40%
    assert result["fit_error"]["median"] < 0.10 and result["fit_error"]["max"] < 0.35
    assert result["leave_one_out_error"]["median"] < 0.15 and result["leave_one_out_error"]["max"] < 0.40
    c = result["constants"]
    assert 0.2 < c["step_us"] < 1.0  # a dependent step: about one global-memory round trip
    assert all(value >= 0 for value in c.values())
    # the logcumsumexp is most of the 6.10 ms at N = 8,192 with 4 sequence-heads
    timed = cost_model.ours(4, 8192, 64, 64, cost_model.H100_CHUNK, 2, "selfcheck", F, False, "logcumsumexp")
    constants = [c[name] for name in cost_model.CONSTANTS]
    logcum = _launch_us(cost_model.breakdown(timed, constants), "PyTorch: logcumsumexp")
    assert logcum > 0.5 * long_row["measured_us"]
    assert math.isclose(sum(b["us"] for b in cost_model.breakdown(timed, constants)) + c["call_us"],
                        cost_model.predict(timed, constants), rel_tol=1e-9)


@pytest.fixture(scope="module")
def fitted():
    """The constants fitted on the saved H100 rows: {name: value}."""
    return cost_model.calibrate(cost_model.saved_rows(RESULTS))["constants"]


def test_per_token_time_never_rises_with_n(fitted):
    """Issue 44's "flat per token from 2,048 to 16,384", under the fitted constants: at the suite's
    budget ours stays within 5% per token while flash attention's grows with N; with 4
    sequence-heads ours falls per token (the per-call floor spread over more tokens)."""
    rows = cost_model.flatness([fitted[name] for name in cost_model.CONSTANTS])
    suite = [r for r in rows if r["series"] == "suite"]
    few = [r for r in rows if r["series"] == "few"]
    assert [r["N"] for r in suite] == [r["N"] for r in few] == [2048, 4096, 8192, 16384]
    assert all(r["N"] * r["Z"] == 32768 * 8 for r in suite) and {r["Z"] for r in few} == {4}
    per_token = [r["ours_ns_per_token"] for r in suite]
    assert max(per_token) < 1.05 * min(per_token)
    assert suite[-1]["flash_ns_per_token"] > 1.3 * suite[0]["flash_ns_per_token"]
    few_per_token = [r["ours_ns_per_token"] for r in few]
    assert few_per_token == sorted(few_per_token, reverse=True)
    for r in rows:
        assert r["ours_ns_per_token"] == pytest.approx(1e3 * r["ours_us"] / (r["N"] * r["Z"]))


def test_the_two_launch_floor_bounds_every_design(fitted):
    """No design with a forward and a backward launch gets under the floor: ours (6 launches) and
    the H100 run's code cost more, and at 8,192 x 4 the floor is above flash attention's measured
    0.64 ms (the reason docs/gpu.md gives for issue 44's below-flash target)."""
    constants = [fitted[name] for name in cost_model.CONSTANTS]
    for row in cost_model.predictions(constants):
        assert row["two_launch_floor_us"] < min(row["ours_us"], row["ours_h100_code_us"])
    floor = cost_model.two_launch_floor(4, 8192, 64, 64, 2, "attention")
    count = lambda kind: sum(x.launches for x in floor.launches if x.kind == kind)  # noqa: E731
    assert count("kernel") == 2
    assert cost_model.predict(floor, constants) > 640  # us
    host = fitted["call_us"] + count("torch") * fitted["op_us"] + count("kernel") * fitted["triton_us"]
    assert host > 640  # the host terms alone


def _launch_us(parts, name):
    return next(part["us"] for part in parts if part["name"] == name)


def test_cli_writes_its_files_and_keeps_them(tmp_path):
    assert "calibrated" in run_module("tools.cost_model", "--help")
    results = tmp_path / "results"  # the saved rows, decoding left out (its count builds two models)
    results.mkdir()
    for name in ("selfcheck.json", "attention_fp16_partial.json"):
        shutil.copy(os.path.join(RESULTS, name), results / name)
    (results / "decode.json").write_text(json.dumps({"config": {}, "results": []}))
    out = tmp_path / "model"
    log = run_module("tools.cost_model", "--results", results, "--out-dir", out)
    assert "leave-one-out" in log.lower() and "wrote" in log
    record = json.loads((out / "model.json").read_text())
    assert record["commit"] and record["command"].startswith("python -m tools.cost_model")
    assert [(p["N"], p["Z"]) for p in record["predictions"]] == [(8192, 4), (2048, 32), (512, 512)]
    assert set(record["step_extremes"]) == {"torch", "kernel"}
    assert [(r["series"], r["N"]) for r in record["flatness"]][:2] == [("suite", 2048), ("suite", 4096)]
    assert "| 8,192 | 4 |" in (out / "model.md").read_text()
    assert record["results"] == str(results) and len(record["fit"]) == 29
    code, log = run_module("tools.cost_model", "--results", results, "--out-dir", out, check=False)
    assert code == 2 and "--overwrite" in log
    code, log = run_module("tools.cost_model", "--results", tmp_path, "--out-dir", tmp_path / "x", check=False)
    assert code == 2 and "--results" in log
