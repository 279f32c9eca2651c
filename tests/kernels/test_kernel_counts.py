"""``python -m tools.kernel_counts``: the interpreter's loads, stores, dots and launches counted
against figures worked out by hand from the shapes, the closed form of the forward's products, the
op's launch list, and the flag on a PyTorch scan over the sequence."""

import importlib.util
import json
import math

import pytest
import torch
from fairseq_helpers import run_module

if importlib.util.find_spec("triton") is None:  # not imported here: see triton_helpers
    pytest.skip("triton is not installed", allow_module_level=True)

from tools import kernel_count_report, kernel_counts  # noqa: E402 (import no Triton)
from tools.kernel_counts import InterpreterCounter, Sizes, count  # noqa: E402

pytestmark = [pytest.mark.usefixtures("interpreted_kernels"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")]

# Z = 2 sequences of N = 40 rows (the last chunk of 16 masked from row 40), n = 8 slots (a 16-wide
# tile: half its lanes masked), d = dv = 16, fp32.
TOY = Sizes(N=40, batch=1, heads=2, d=16, n=8, chunk=16, dtype="fp32")


@pytest.fixture(scope="module")
def abc_counts():
    return count("abc", TOY)[0]


def _masked_product_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def masked_product(a_ptr, b_ptr, c_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
        """c [M, 16] = a [M, K] @ b [K, 16], one program per BM rows, a's tile masked."""
        rows = tl.program_id(0) * BM + tl.arange(0, BM)
        cols = tl.arange(0, BK)
        ok = (rows < M)[:, None] & (cols < K)[None, :]
        a = tl.load(a_ptr + rows[:, None] * K + cols[None, :], mask=ok, other=0.0)
        b = tl.load(b_ptr + cols[:, None] * 16 + tl.arange(0, 16)[None, :], mask=(cols < K)[:, None], other=0.0)
        product = tl.dot(a, b, input_precision="ieee")
        tl.store(c_ptr + rows[:, None] * 16 + tl.arange(0, 16)[None, :], product, mask=(rows < M)[:, None])

    return masked_product


def test_a_kernel_written_here_is_counted_lane_by_lane():
    kernel = _masked_product_kernel()
    M, K, BM, BK = 37, 12, 16, 16
    a, b = torch.randn(M, K), torch.randn(K, 16, dtype=torch.float32)
    c = torch.zeros(M, 16)
    with InterpreterCounter() as counter:
        kernel[(math.ceil(M / BM),)](a, b, c, M, K, BM=BM, BK=BK)
    torch.testing.assert_close(c, a @ b)
    (launch,) = counter.launches
    assert launch.kernel == "masked_product" and launch.grid == (3, 1, 1) and launch.programs == 3
    # Active lanes only: a's M x K elements once, b's K x 16 once per program, c's M x 16 once.
    assert launch.requested["load"] == 4 * (M * K + 3 * K * 16)
    assert launch.distinct["load"] == 4 * (M * K + K * 16)
    assert launch.requested["store"] == launch.distinct["store"] == 4 * M * 16
    assert launch.calls["load"] == 6 and launch.calls["store"] == 3
    # One 16 x 16 x 16 product per program: the padded tile is what the tensor cores compute.
    assert launch.dots == {("fp32", "fp32", "ieee", 16, 16, 16): 3} and launch.macs == 3 * 16 ** 3
    assert not counter.torch_ops  # the interpreter's own copies of the arguments are not the op's


def test_the_counter_puts_the_interpreter_back():
    import triton.runtime.autotuner as autotuner
    import triton.runtime.interpreter as interpreter

    before = [interpreter.InterpreterBuilder.create_masked_load, interpreter.InterpreterBuilder.create_dot,
              interpreter.GridExecutor.__call__, autotuner.Autotuner.prune_configs]
    with InterpreterCounter():
        assert interpreter.InterpreterBuilder.create_masked_load is not before[0]
    assert [interpreter.InterpreterBuilder.create_masked_load, interpreter.InterpreterBuilder.create_dot,
            interpreter.GridExecutor.__call__, autotuner.Autotuner.prune_configs] == before


def test_causal_abc_launches_are_the_ops_six(abc_counts):
    # ops/causal/triton/function.py: forward = chunk sums, scan, output; backward = rows, reverse scan, columns.
    launches = abc_counts.launches
    assert [(x.phase, x.kernel) for x in launches] == [
        ("forward", "chunk_sums_kernel"), ("forward", "chunk_scan_kernel"), ("forward", "output_kernel"),
        ("backward", "rows_kernel"), ("backward", "chunk_scan_kernel"), ("backward", "columns_kernel")]
    Z, nc = TOY.batch * TOY.heads, math.ceil(TOY.N / TOY.chunk)
    assert [x.programs for x in launches if "scan" not in x.kernel] == [Z * nc] * 3 + [2 * Z * nc]
    assert [kernel_counts.model_name(x) for x in launches if "scan" in x.kernel] == [
        "chunk_scan_kernel (forward)", "chunk_scan_kernel (reverse)"]


def test_reverse_scan_bytes_equal_the_shapes(abc_counts):
    # rev [Z, nc, n, d + dv + 1] fp32: every element read and overwritten once, and the decay
    # [Z, nc, n] read once per element of its slot (requested) but once per address (distinct).
    Z, nc, n, width = TOY.batch * TOY.heads, math.ceil(TOY.N / TOY.chunk), TOY.n, 2 * TOY.d + 1
    (scan,) = [x for x in abc_counts.launches if x.kernel == "chunk_scan_kernel" and x.meta["REVERSE"]]
    assert scan.distinct["load"] == 4 * Z * nc * n * (width + 1)
    assert scan.requested["store"] == scan.distinct["store"] == 4 * Z * nc * n * width
    assert scan.requested["load"] >= 4 * Z * nc * n * 2 * width  # the decay again for every column


def test_forward_products_follow_the_closed_form():
    # d = n = C = 16 (no padded tile): the forward's tl.dot work is 2Cd + 2Cn + 4nd multiply-adds a
    # row, for every row of the chunks (N = 40 rounds up to 3 chunks of 16).
    sizes = Sizes(N=40, batch=1, heads=2, d=16, n=16, chunk=16, dtype="fp16")
    counter = count("abc", sizes)[0]
    C, d, n, Z = 16, 16, 16, 2
    forward = sum(x.macs for x in counter.launches if x.phase == "forward")
    assert forward == Z * 3 * C * (2 * C * d + 2 * C * n + 4 * n * d)
    kinds = {(a, b) for x in counter.launches for (a, b, *_), _ in x.dots.items()}
    assert ("fp16", "fp16") in kinds and ("fp32", "fp32") in kinds  # inputs in half, factors in fp32
    # products with half operands (the summary's "half operands"): three quarters of the forward's
    # here (the products with the intra-chunk factors stay fp32), 86% at d = n = 64 (docs/gpu_counts)
    half = sum(calls * M * N * K for x in counter.launches if x.phase == "forward"
               for (a, b, _, M, N, K), calls in x.dots.items() if a == b == "fp16")
    assert half == 3 * forward // 4


def test_a_scan_over_the_sequence_is_flagged():
    x = torch.randn(2, 40, 8)
    with InterpreterCounter() as counter:
        torch.logcumsumexp(x, dim=1)  # 40 dependent steps
        x.view(2, 5, 8, 8).cumsum(2)  # 8: within a chunk, not over the sequence
        x.reshape(80, 8)
        x.new_zeros(4)  # written, x not read
        torch.add(x, x, out=torch.empty_like(x, dtype=torch.float16))  # x read twice, out written
    scan, split, chunk_scan, view, zeros, _, add = counter.torch_ops
    assert (scan.name, scan.scan_length, scan.sequential(40)) == ("logcumsumexp", 40, True)
    assert (chunk_scan.scan_length, chunk_scan.sequential(40)) == (8, False)
    assert scan.bytes == 2 * x.numel() * 4 and split.bytes == view.bytes == 0 and zeros.bytes == 16
    assert add.bytes == 2 * x.numel() * 4 + x.numel() * 2


def test_the_cost_model_holds_the_counted_bytes_and_products():
    # tools.causal_cost against the interpreter at d = n = C = 16, N = 48 (whole chunks, no padded
    # tile): each kernel's distinct bytes within 2% (the model counts every tensor once; the scan
    # reads the decay once per column it scales), its products exactly, and no flag.
    sizes = Sizes(N=48, batch=1, heads=2, d=16, n=16, chunk=16, dtype="fp16")
    rows = kernel_count_report.model_rows(count("abc", sizes)[0], sizes)
    kernels = [r for r in rows if r["name"].endswith("kernel") or "scan" in r["name"]]
    assert len(kernels) == 6 and not any(r.get("flag") for r in rows)
    for row in kernels:
        assert abs(row["ratio"] - 1) < 0.02, row
        assert row["macs"] == row["model_macs"], row


def test_the_command_line(tmp_path, abc_counts):
    out = tmp_path / "counts"
    argv = ["-N", "40", "--heads", "2", "-d", "16", "-n", "8", "--chunk", "16", "--dtype", "fp32", "--ops", "abc",
            "--out-dir", str(out)]
    assert kernel_counts.main(argv) == 0
    record = json.loads((out / "counts.json").read_text())
    assert record["tool"] == "tools.kernel_counts" and record["environment"]["commit"]
    assert record["sizes"] == dict(N=40, batch=1, heads=2, d=16, n=8, chunk=16, dtype="fp32")
    abc = record["ops"]["abc"]
    assert abc["reference_error"] < 1e-5  # the counted run computed causal ABC
    assert [x["distinct"] for x in abc["launches"]] == [dict(x.distinct) for x in abc_counts.launches]
    (reverse,) = [row for row in abc["model"] if row["name"] == "chunk_scan_kernel (reverse)"]
    assert reverse["model_bytes"] == reverse["distinct"]  # the model's reverse scan is exact
    text = (out / "counts.md").read_text()
    assert text.startswith(kernel_counts.HEADER) and "python -m tools.kernel_counts -N 40" in text
    assert "| abc | 6 | " in text and " | 0% | " in text  # fp32 inputs: no half-precision product
    with pytest.raises(SystemExit) as error:  # nothing is overwritten without --replace
        kernel_counts.main(argv)
    assert error.value.code == 2
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "counts.md").write_text("someone else's\n")
    with pytest.raises(SystemExit):  # --replace replaces only what this tool wrote
        kernel_counts.main(argv[:-1] + [str(tmp_path / "other"), "--replace"])
    assert (tmp_path / "other" / "counts.md").read_text() == "someone else's\n"


def test_help_and_bad_flags(capsys):
    assert "--out-dir" in run_module("tools.kernel_counts", "--help")
    for argv, flag in ((["--chunk", "48"], "--chunk"), (["-N", "0"], "--length"), (["-n", "20"], "--memory")):
        with pytest.raises(SystemExit) as error:
            kernel_counts.main(argv + ["--out-dir", "/nonexistent/counts"])
        assert error.value.code == 2 and flag in capsys.readouterr().err
