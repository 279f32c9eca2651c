"""The attention benchmark measures every strategy (``--methods NAME``), in the same table, JSON and plot."""

import json

import pytest
import torch
from benchmark_helpers import run_benchmark

from abc_fairseq.strategies import STRATEGIES
from benchmarks.attention import DEFAULT_METHODS, METHODS, SUITE

pytestmark = pytest.mark.usefixtures("one_thread")

CAUSAL = [name for name, cls in STRATEGIES.items() if "causal" in cls.modes]


def test_every_causal_strategy_is_a_method_but_not_a_default():
    assert set(CAUSAL) <= set(METHODS)
    assert DEFAULT_METHODS == ("abc", "sdpa", "fairseq-mha", "abc-module")


@pytest.mark.parametrize("name", CAUSAL)
def test_strategy_case_runs_forward_and_backward(name):
    params = {"method": name, "batch": 2, "heads": 2, "length": 24, "head_dim": 8, "memory": 4, "dtype": "float32"}
    SUITE.build_case(params, torch.device("cpu")).run()


def test_cli_reports_strategies_in_the_table_and_json(tmp_path):
    proc = run_benchmark(
        "attention", "--methods", "window", "elu", "--lengths", "32", "--tokens", "64", "--heads", "2",
        "--head-dim", "8", "--memory", "4", "--repeats", "1", "--warmup", "0", "--threads", "1", "--no-plot",
        "--out-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads((tmp_path / "attention.json").read_text())["results"]
    assert [(row["method"], row["status"]) for row in rows] == [("window", "ok"), ("elu", "ok")]
    assert "| 32 |     2 | window" in proc.stdout
    assert [row["info"]["strategy"] for row in rows] == ["SlidingWindow", "ELUAttention"]
