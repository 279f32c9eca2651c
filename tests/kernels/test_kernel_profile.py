"""``python -m tools.kernel_profile`` and the cost model it prints: the model's arithmetic is the
issue's per-row count, the tool runs the kernels under the interpreter at toy sizes, and it never
overwrites its files."""

import importlib.util
import json

import pytest
from fairseq_helpers import run_module

from tools import causal_cost

if importlib.util.find_spec("triton") is None:
    pytest.skip("triton is not installed", allow_module_level=True)


def test_forward_arithmetic_is_2Cd_2Cn_4nd_per_row():
    Z, N, C, d, n = 3, 640, 64, 64, 64
    launches = {launch.name: launch for launch in causal_cost.causal_launches(Z, N, d, d, n, C, 2)}
    forward = launches["chunk_sums_kernel"].macs + launches["output_kernel"].macs
    assert forward == Z * N * (2 * C * d + 2 * C * n + 4 * n * d)
    # sequential over the groups of chunks the scans load at once: 4 in the forward scan that writes the
    # normalisers, 8 in the reverse one (one chunk a step before 5bdd324)
    assert launches["chunk_scan_kernel (forward)"].steps == -(-N // C // 4)
    assert launches["chunk_scan_kernel (reverse)"].steps == -(-N // C // 8)
    one_by_one = causal_cost.causal_launches(Z, N, d, d, n, C, 2, grouped_scan=False)
    assert [x.steps for x in one_by_one if x.name.startswith("chunk_scan")] == [N // C] * 2
    previous = causal_cost.causal_launches(Z, N, d, d, n, C, 2, normaliser="logcumsumexp")
    logcumsumexp = previous[0]  # one thread per (sequence, slot) walks all N rows
    assert (logcumsumexp.name, logcumsumexp.steps, logcumsumexp.programs) == ("PyTorch: logcumsumexp", N, Z * n)
    assert launches["columns_kernel"].programs == 2 * Z * N // C  # key and value sides


def test_a_smaller_chunk_moves_more_bytes():
    bytes_at = lambda C: sum(launch.bytes for launch in causal_cost.causal_launches(64, 4096, 64, 64, 64, C, 2))  # noqa
    assert bytes_at(16) > 2 * bytes_at(64)
    assert causal_cost.estimate(causal_cost.causal_launches(1, 64, 16, 16, 16, 16, 2)[1], None) is None


def test_runs_the_kernels_under_the_interpreter_and_keeps_its_files(tmp_path):
    out = tmp_path / "profile"
    args = ("--lengths", "32", "--tokens", "64", "--heads", "2", "--head-dim", "16", "--memory", "8",
            "--repeats", "1", "--out-dir", out)
    log = run_module("tools.kernel_profile", *args, timeout=600)
    assert "chunk_sums_kernel" in log and "wrote" in log
    record = json.loads((out / "kernel_profile.json").read_text())
    (size,) = record["sizes"]
    assert [row["name"] for row in size["launches"] if row["kind"] == "kernel"] == [
        "chunk_sums_kernel", "chunk_scan_kernel (forward)", "output_kernel", "rows_kernel",
        "chunk_scan_kernel (reverse)", "columns_kernel"]
    assert record["environment"]["commit"]
    code, log = run_module("tools.kernel_profile", *args, check=False)
    assert code == 2 and "--out-dir" in log and "overwritten" in log


def test_model_only_and_bad_flags(tmp_path):
    log = run_module("tools.kernel_profile", "--model-only", "--chunk", "64", "--out-dir", tmp_path / "m")
    # 6 kernels and the dl sum (one add); the normalisers are found inside the kernels, no PyTorch scan
    assert "| total | 7 |" in log and "logcumsumexp" not in log and "H100 peaks" in log
    code, log = run_module("tools.kernel_profile", "--chunk", "48", "--out-dir", tmp_path / "x", check=False)
    assert code == 2 and "--chunk" in log
    code, log = run_module("tools.kernel_profile", "--lengths", "99999", "--out-dir", tmp_path / "y", check=False)
    assert code == 2 and "--lengths" in log
