"""experiments.transfer: the driver's dry-run plan (budgets, the transfer stage, the window + sink
control, where each variant's continued updates start), its refusal of a folder it did not create,
and the report's numbers and target checks built from synthetic logs. No training."""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.transfer import report
from experiments.transfer import settings as S

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _driver(*args):
    return subprocess.run([sys.executable, "-m", "experiments.transfer.run", *args], cwd=REPO, env=ENV,
                          capture_output=True, text=True, timeout=60)


def _plan(root):
    """The dry run's steps: {name: command words}."""
    proc = _driver("--root", str(root), "--code", str(REPO), "--seeds", "1,2", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    return {lines[i][2:].rsplit(" [", 1)[0]: shlex.split(lines[i + 1]) for i in range(0, len(lines), 2)}


def _value(words, flag):
    return words[words.index(flag) + 1]


def test_the_plan_trains_converts_transfers_and_continues(tmp_path):
    steps = _plan(tmp_path / "root")
    assert not (tmp_path / "root").exists()  # a dry run writes nothing
    soft = steps["train softmax_s2"]
    assert (_value(soft, "--max-update"), _value(soft, "--seed"), _value(soft, "--arch")) == ("1300", "2",
                                                                                             "transformer_lm")
    # checkpoints (and validation) every 25 updates from P = 1,200 only
    assert (_value(soft, "--save-interval-updates"), _value(soft, "--validate-after-updates")) == ("25", "1200")
    assert _value(steps["train abc_s1"], "--max-update") == _value(steps["train gsa_s2"], "--max-update") == "1400"
    convert = steps["convert conv_abc_transfer_s1"]
    assert _value(convert, "--input").endswith("softmax_s1/checkpoints/checkpoint*_1200.pt")
    assert (_value(convert, "--decoder-self-attn"), _value(convert, "--decoder-self-memory")) == ("abc", "64")
    sink = steps["convert conv_window_sink_s2"]
    assert (_value(sink, "--decoder-self-attn"), _value(sink, "--decoder-self-memory"),
            _value(sink, "--sink-tokens")) == ("window-sink", "68", "4")
    transfer = steps["transfer conv_gsa_transfer_s2"]
    assert transfer[:3] == ["python", "-m", "abc_fairseq.transfer"]
    assert _value(transfer, "--input").endswith("conv_gsa_transfer_s2/converted.pt")
    assert (_value(transfer, "--max-updates"), _value(transfer, "--max-tokens")) == ("100", "2048")
    # a transferred variant continues from the transfer's output, the others from the conversion
    assert _value(steps["uptrain conv_abc_transfer_s1"], "--checkpoint").endswith("transferred.pt")
    assert _value(steps["uptrain conv_abc_s1"], "--checkpoint").endswith("conv_abc_s1/converted.pt")
    assert _value(steps["uptrain conv_window_sink_s1"], "--checkpoint").endswith("converted.pt")
    assert "transfer conv_abc_s1" not in steps and "transfer conv_window_sink_s1" not in steps
    # last, each transfer resumed (same run state) to 400 updates, its own output scored before any update
    longer = steps["longtransfer conv_abc_transfer_s2"]
    assert (_value(longer, "--max-updates"), _value(longer, "--save-dir")) == ("400", _value(
        steps["transfer conv_abc_transfer_s2"], "--save-dir"))
    assert _value(longer, "--output").endswith("transferred_400.pt")
    assert list(steps)[-1] == "eval conv_gsa_transfer_s2 @transferred_400 test"
    for name in ("eval conv_gsa_transfer_s1 @transferred test", "eval conv_gsa_transfer_s1 @converted test",
                 "eval abc_s2 @u1200 test", "eval abc_s2 @u1400 test", "eval softmax_s1 @u1300 test"):
        assert _value(steps[name], "--gen-subset") == "test"


def test_a_foreign_folder_is_refused(tmp_path):
    (tmp_path / "mine.txt").write_text("not the driver's\n")
    proc = _driver("--root", str(tmp_path), "--only", "data")
    assert proc.returncode == 2 and "not empty" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def _eval_log(root, run, label, ppl):
    folder = root / "runs" / run / "eval"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{label}_test.log").write_text(f"| Loss (base 2): 5.9000, Perplexity: {ppl:.2f}\n")


@pytest.fixture
def synthetic(tmp_path):
    """Two seeds' eval logs: the transferred ABC starts 1% above the source and stays below the
    converted one, except seed 2 at k = 50; GSA's transfer starts 5% above."""
    root = tmp_path / "runs_root"
    P, K = S.PRETRAIN_UPDATES, S.TRANSFER_UPDATES
    for seed in (1, 2):
        source = 50.0 + seed
        for k in S.CURVE:
            _eval_log(root, f"softmax_s{seed}", f"u{P + k}", source - k / 100)
            for model in ("abc", "gsa"):
                _eval_log(root, f"{model}_s{seed}", f"u{P + k}", 70.0 - k / 10)
                _eval_log(root, f"{model}_s{seed}", f"u{P + K + k}", 69.0 - k / 10)
        for variant in S.VARIANTS:
            run = f"conv_{variant}_s{seed}"
            _eval_log(root, run, "converted", source * 1.14)
            for k in S.CURVE[1:]:
                worse = variant.endswith("transfer") and not (seed == 2 and k == 50)
                _eval_log(root, run, f"u{k}", source * (1.02 if worse else 1.06) - k / 100)
        _eval_log(root, f"conv_abc_transfer_s{seed}", "transferred", source * 1.01)
        _eval_log(root, f"conv_gsa_transfer_s{seed}", "transferred", source * 1.05)
        _eval_log(root, f"conv_gsa_transfer_s{seed}", "transferred_400", source * 1.02)
        run_dir = root / "runs" / f"conv_abc_transfer_s{seed}"
        (run_dir / "transfer.log").write_text(
            "transfer | wrote X: 100 updates, 204800 tokens, 61.2 s\n")
    steps = []
    for seed in (1, 2):
        base = {"seed": seed, "status": "ok", "load_before": [1.0], "load_after": [2.0], "threads": 1,
                "started": f"2026-11-28T08:0{seed}:00+00:00", "model": "abc", "updates": 0, "split": ""}
        steps += [dict(base, kind="transfer", run=f"conv_abc_transfer_s{seed}", seconds=62.0,
                       command=["python", "-m", "abc_fairseq.transfer", "--input", str(root / "x.pt")]),
                  dict(base, kind="uptrain", run=f"conv_abc_transfer_s{seed}", seconds=80.0,
                       command=["bash", "scripts/lm/uptrain.sh"])]
    (root / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    return root


def test_the_report_reads_every_point_and_checks_the_targets(synthetic, tmp_path):
    out = tmp_path / "out"
    assert report.main(["--root", str(synthetic), "--out", str(out)]) == 0
    rec = json.loads((out / "transfer_results.json").read_text())
    assert rec["written_by"] == report.MARK and (out / "transfer_results.png").stat().st_size > 0
    seed1 = rec["test_ppl"]["1"]
    assert seed1["softmax"]["0"] == 51.0 and seed1["abc_transfer"]["0"] == pytest.approx(51.51)
    assert seed1["abc"]["0"] == pytest.approx(58.14) and seed1["scratch_abc_tokens"]["100"] == pytest.approx(59.0)
    assert rec["mean"]["softmax"]["0"] == pytest.approx(51.5)
    targets = {(t["model"], t["seed"]): t for t in rec["targets"]}
    assert targets["abc", 1]["within"] and targets["abc", 1]["beats_at_every_k"]
    assert targets["abc", 2]["not_beaten_at"] == [50] and targets["abc", 2]["beats_at_every_k"] is False
    assert targets["gsa", 1]["within"] is False and targets["gsa", 1]["start_gap"] == pytest.approx(0.05, abs=1e-3)
    longer = [g for g in rec["start_gaps"] if g["stage"] == "transferred_400" and g["seed"] == 1]
    assert [(g["variant"], g["ppl"]) for g in longer] == [("abc_transfer", None), ("gsa_transfer", 52.02)]
    (cost,) = [c for c in rec["transfer_costs"] if c["seed"] == 1]
    assert (cost["tokens"], cost["updates"], cost["lm_update_seconds"]) == (204800, 100, 0.8)
    text = (out / "transfer_results.md").read_text()
    assert "| ABC-64 | 2 | +1.0% | yes | **no** | 50 |" in text and str(synthetic) not in text


def test_the_report_leaves_files_it_did_not_write(synthetic, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "transfer_results.md").write_text("someone's notes\n")
    with pytest.raises(SystemExit):
        report.main(["--root", str(synthetic), "--out", str(out)])
    assert (out / "transfer_results.md").read_text() == "someone's notes\n"
