"""Tests of ``python -m benchmarks attention`` at tiny sizes (no timing thresholds)."""

import json
import struct
from pathlib import Path

import pytest
from benchmark_helpers import PNG_SIGNATURE, assert_flag_named, run_benchmark

from benchmarks.attention import check_targets
from benchmarks.harness import pool_rounds

TINY = ["--lengths", "64", "128", "--tokens", "512", "--heads", "2", "--head-dim", "16", "--memory", "8",
        "--repeats", "1", "--warmup", "0", "--threads", "1"]


def run_cli(*args: str):
    return run_benchmark("attention", *args)


def png_size(path: Path):
    """(width, height) from the PNG header; asserts the signature and IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, "not a PNG file"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("attention")
    proc = run_cli(*TINY, "--out-dir", str(out_dir))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, out_dir


def test_json_has_every_method_and_length(tiny_run):
    _, out_dir = tiny_run
    record = json.loads((out_dir / "attention.json").read_text())
    assert record["complete"] is True
    rows = {(row["method"], row["N"]): row for row in record["results"]}
    assert set(rows) == {(m, n) for m in ("abc", "sdpa", "fairseq-mha", "abc-module") for n in (64, 128)}
    for (method, n), row in rows.items():
        assert row["batch"] == 512 // n
        assert row["status"] == "ok", f"{method} N={n}: {row.get('status')}: {row.get('message')}"
        assert len(row["times_s"]) == 1 and all(t > 0 for t in row["times_s"])
        assert row["ms_per_call"] > 0 and row["us_per_token"] > 0
        assert row["peak_mib"] > 0, f"{method} N={n}: no memory increase measured"
        assert row["speed_vs_sdpa"] > 0 and row["memory_vs_sdpa"] > 0
    env = record["environment"]
    for key in ("torch", "cpu_model", "date", "command", "torch_default_threads"):
        assert env[key]
    assert env["command"].startswith("python -m benchmarks attention --lengths 64 128")
    assert len(record["targets"]) == 5 and all(t["status"] == "SKIP" for t in record["targets"])


def test_png_and_markdown_written(tiny_run):
    proc, out_dir = tiny_run
    width, height = png_size(out_dir / "attention.png")
    assert width > 100 and height > 100
    header = "| N | batch | method | ms/call | us/token | x sdpa speed | peak MiB | x sdpa memory |"
    printed = " ".join(proc.stdout.split())
    assert " ".join(header.split()) in printed
    assert "Targets" in proc.stdout
    assert (out_dir / "attention.md").read_text().strip() == proc.stdout.strip()


def test_too_slow_method_is_reported_not_fatal(tmp_path):
    proc = run_cli("--methods", "sdpa", "--lengths", "64", "--tokens", "64", "--heads", "1", "--head-dim", "8",
                   "--repeats", "1", "--warmup", "0", "--threads", "1", "--max-seconds", "1e-9", "--no-plot",
                   "--out-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (row,) = json.loads((tmp_path / "attention.json").read_text())["results"]
    assert row["status"] == "timeout" and "--max-seconds" in row["message"]
    assert "timeout [1]" in proc.stdout
    assert not (tmp_path / "attention.png").exists()


@pytest.mark.parametrize("argv, flag", [
    (["--tokens", "100", "--lengths", "128"], "--tokens"),
    (["--tokens", "0"], "--tokens"),
    (["--heads", "two"], "--heads"),
    (["--methods", "flash"], "--methods"),
    (["--max-seconds", "-1"], "--max-seconds"),
])
def test_bad_flags_are_named(argv, flag, capsys):
    assert_flag_named("attention", argv, flag, capsys)


def _row(method, n, seconds, mib, status="ok"):
    if status != "ok":
        return {"method": method, "N": n, "status": status}
    return {"method": method, "N": n, "status": status, "median_s": seconds,
            "us_per_token": seconds * 1e6 / 32768, "peak_mib": mib}


def test_targets_pass_fail_skip():
    rows = {}
    for n in (512, 1024, 2048, 4096, 8192):
        rows[("sdpa", n)] = _row("sdpa", n, n / 1000, 100.0)
        rows[("abc", n)] = _row("abc", n, 0.5, 150.0)
    verdicts = [t["status"] for t in check_targets(rows)]
    assert verdicts == ["PASS", "PASS", "PASS", "PASS", "PASS"]  # no GSA target without a GSA method

    rows[("abc", 8192)] = _row("abc", 8192, None, None, status="timeout")
    rows[("abc", 4096)] = _row("abc", 4096, 0.5, 250.0)
    verdicts = [t["status"] for t in check_targets(rows)]
    assert verdicts == ["PASS", "FAIL", "PASS", "FAIL", "FAIL"]

    del rows[("sdpa", 512)]
    assert check_targets(rows)[2]["status"] == "SKIP"


def test_gsa_targets_take_the_worst_length_against_abc_on_the_same_path():
    rows = {}
    for n in (256, 4096, 8192):
        rows[("abc", n)], rows[("abc-strategy", n)] = _row("abc", n, 1.0, 10.0), _row("abc-strategy", n, 2.0, 10.0)
        rows[("gsa-op", n)], rows[("gsa", n)] = _row("gsa-op", n, 1.2, 10.0), _row("gsa", n, 2.5, 10.0)
    op, strategy = check_targets(rows)[-2:]
    assert (op["status"], strategy["status"]) == ("PASS", "PASS")
    assert "worst of 3 lengths" in op["detail"] and op["value"] == pytest.approx(1 / 1.2)
    rows[("gsa-op", 4096)] = _row("gsa-op", 4096, 1.4, 10.0)  # 1.4x abc's time at one length
    rows[("gsa", 8192)] = _row("gsa", 8192, None, None, status="timeout")
    op, strategy = check_targets(rows)[-2:]
    assert op["status"] == "FAIL" and "N=4096" in op["detail"]
    assert strategy["status"] == "FAIL" and "timeout" in strategy["detail"]
    assert check_targets({("gsa-op", 256): rows[("gsa-op", 256)]})[-2]["status"] == "SKIP"


def test_rounds_interleave_cases_and_pool_their_timed_calls(tmp_path):
    proc = run_cli("--methods", "abc", "sdpa", "--lengths", "64", "--tokens", "128", "--heads", "1",
                   "--head-dim", "8", "--memory", "4", "--repeats", "2", "--warmup", "0", "--threads", "1",
                   "--rounds", "3", "--no-plot", "--out-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    started = [line.split("] ")[1] for line in proc.stderr.splitlines()
               if line.startswith("[round") and line.endswith("...")]
    assert started == ["abc N=64 batch=2 ...", "sdpa N=64 batch=2 ..."] * 3  # round after round
    record = json.loads((tmp_path / "attention.json").read_text())
    assert record["config"]["rounds"] == 3
    for row in record["results"]:
        assert row["status"] == "ok" and row["rounds"] == 3 and len(row["times_s"]) == 6
    assert "3 interleaved rounds pooled" in proc.stdout


def test_pooling_keeps_the_first_rounds_memory_and_counts_failed_rounds():
    first = {"status": "ok", "times_s": [1.0], "peak_mib": 10.0}
    pooled = pool_rounds(pool_rounds(None, first), {"status": "ok", "times_s": [3.0, 2.0], "peak_mib": 99.0})
    assert pooled["times_s"] == [1.0, 3.0, 2.0] and pooled["peak_mib"] == 10.0 and pooled["rounds"] == 2
    pooled = pool_rounds(pooled, {"status": "timeout", "message": "slow"})
    assert pooled["status"] == "ok" and pooled["failed_rounds"] == 1 and pooled["rounds"] == 2
    failed = pool_rounds(None, {"status": "crashed"})
    assert pool_rounds(failed, first)["status"] == "crashed"


def test_gpu_targets_pass_fail_skip():
    from benchmarks.attention import check_gpu_targets

    rows = {}
    for n in (512, 1024, 2048, 4096, 8192, 16384):
        rows[("abc", n)] = _row("abc", n, 0.010, 1.0)
        rows[("abc-torch", n)] = _row("abc-torch", n, 0.060, 1.0)
        rows[("fla-abc", n)] = _row("fla-abc", n, 0.011, 1.0)
        rows[("sdpa", n)] = _row("sdpa", n, n / 1e6, 1.0)  # abc overtakes it after N = 10,000
    verdicts = [t["status"] for t in check_gpu_targets(rows)]
    assert verdicts == ["PASS", "PASS", "PASS", "FAIL"]  # sdpa is faster at 8192
    rows[("sdpa", 8192)] = _row("sdpa", 8192, 0.012, 1.0)
    assert [t["status"] for t in check_gpu_targets(rows)] == ["PASS", "PASS", "PASS", "PASS"]

    rows[("abc", 16384)] = _row("abc", 16384, 0.014, 1.0)  # 1.4x the per-token time of N = 512
    rows[("abc-torch", 1024)] = _row("abc-torch", 1024, 0.040, 1.0)  # only 4x slower than abc
    rows[("fla-abc", 2048)] = _row("fla-abc", 2048, 0.009, 1.0)
    assert [t["status"] for t in check_gpu_targets(rows)] == ["FAIL", "FAIL", "FAIL", "PASS"]

    for n in (512, 1024, 2048, 4096, 8192, 16384):  # fla-core not installed: every fla-abc row skipped
        rows[("fla-abc", n)] = {"method": "fla-abc", "N": n, "status": "skipped"}
    assert check_gpu_targets(rows)[2]["status"] == "SKIP"


def test_abc_backends_and_optional_fla_on_cpu():
    import torch

    from benchmarks.attention import SUITE
    from benchmarks.harness import CaseUnavailable

    params = {"batch": 1, "heads": 2, "length": 16, "head_dim": 8, "memory": 4, "dtype": "float32"}
    for method, backend in (("abc", "auto"), ("abc-torch", "torch")):
        case = SUITE.build_case(dict(params, method=method), torch.device("cpu"))
        case.run()
        assert case.info["backend"] == backend
    for method in ("fla-abc", "fla-gsa"):
        with pytest.raises(CaseUnavailable, match="CUDA only"):
            SUITE.build_case(dict(params, method=method), torch.device("cpu"))
