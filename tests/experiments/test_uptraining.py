"""experiments.uptraining: the driver's help, its dry-run plan (model and restore flags, seeds,
checkpoints), its refusal of a folder it did not create, and the report built from synthetic logs
(the numbers parsed, mean and spread). No training."""

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _driver(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "experiments.uptraining.run", *args], cwd=cwd or REPO, env=ENV,
                          capture_output=True, text=True, timeout=60)


def _plan(tmp_path):
    """The dry run's steps: {name: command line}."""
    proc = _driver("--root", str(tmp_path / "runs_root"), "--code", str(REPO), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) % 2 == 0
    return {lines[i][2:].rsplit(" [", 1)[0]: lines[i + 1] for i in range(0, len(lines), 2)}, lines


def test_help_documents_every_flag(tmp_path):
    proc = _driver("--help", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: python -m experiments.uptraining.run")
    from experiments.uptraining.run import parser

    for action in parser()._actions:
        assert action.help, f"{action.option_strings} has no help text"
    for flag in ("--root", "--code", "--seeds", "--extra-seeds", "--lr", "--warmup", "--threads", "--deadline",
                 "--gsa-code", "--only", "--dry-run"):
        assert flag in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_dry_run_plan_order_seeds_and_checkpoints(tmp_path):
    steps, lines = _plan(tmp_path)
    assert not (tmp_path / "runs_root").exists()  # a dry run writes nothing
    names = list(steps)
    # the cheap and informative first: softmax, conversions (ABC then GSA), ABC, GSA, the extra seed
    order = [names.index(n) for n in ("train softmax_s1", "train softmax_s2", "convert conv_abc_s1",
                                      "convert conv_gsa_s2", "eval softmax_s2 @375 test", "train abc_s1",
                                      "train gsa_s2", "train softmax_s3", "train gsa_s3", "train abc_s3")]
    assert order == sorted(order)
    root = str(tmp_path / "runs_root")
    soft = steps["train softmax_s2"].split()
    assert soft[soft.index("--seed") + 1] == "2" and soft[soft.index("--max-update") + 1] == "400"
    assert soft[soft.index("--save-interval-updates") + 1] == "25"
    assert soft[soft.index("--arch") + 1] == "transformer_lm"
    assert "--user-dir" in soft and soft[soft.index("--user-dir") + 1] == f"{REPO}/abc_fairseq"
    for flags in (["--lr", "0.001"], ["--warmup-updates", "100"], ["--max-tokens", "2048"],
                  ["--tokens-per-sample", "256"], ["--decoder-layers", "4"], ["--decoder-embed-dim", "256"]):
        assert " ".join(flags) in steps["train softmax_s2"]
    gsa = steps["train gsa_s1"].split()
    assert gsa[gsa.index("--decoder-self-attn") + 1] == "gsa" and gsa[gsa.index("--decoder-self-memory") + 1] == "64"
    assert gsa[gsa.index("--save-interval-updates") + 1] == "100"
    extra = steps["train abc_s3"].split()
    assert extra[extra.index("--max-update") + 1] == "300" and extra[extra.index("--seed") + 1] == "3"
    assert extra[extra.index("--save-interval-updates") + 1] == "100"
    soft3 = steps["train softmax_s3"].split()
    assert soft3[soft3.index("--save-interval-updates") + 1] == "100"  # no curve beyond P to draw
    assert "train softmax_s3" in steps and "convert conv_abc_s3" not in steps  # seed 3: from scratch to P only
    conv = steps["convert conv_gsa_s2"].split()
    assert conv[conv.index("--input") + 1] == f"'{root}/runs/softmax_s2/checkpoints/checkpoint*_300.pt'"
    assert conv[conv.index("--seed") + 1] == "2" and conv[conv.index("--decoder-self-attn") + 1] == "gsa"
    up = steps["uptrain conv_abc_s1"].split()
    assert up[up.index("--checkpoint") + 1] == f"{root}/runs/conv_abc_s1/converted.pt"
    assert [up[up.index(f) + 1] for f in ("--lr", "--warmup", "--max-update", "--seed")] == ["5e-4", "50", "100", "1"]
    assert up[up.index("--save-interval-updates") + 1] == "25" and up.index("--save-interval-updates") > up.index("--")
    assert f"--path {root}/runs/conv_gsa_s1/converted.pt" in steps["eval conv_gsa_s1 @0 valid"]
    assert steps["eval conv_gsa_s1 @75 test"].endswith("--gen-subset test")
    evals = [n for n in names if n.startswith("eval conv_abc_s1")]
    assert [n.split("@")[1] for n in evals] == [f"{u} {s}" for u in (0, 25, 50, 75, 100) for s in ("valid", "test")]


def test_uptrain_step_restores_with_every_reset(tmp_path):
    """The plan's uptraining command, run by scripts/lm/uptrain.sh --dry-run: the converted checkpoint
    restored with every --reset-* flag, the quickstart's weight decay and clip norm winning."""
    steps, _ = _plan(tmp_path)
    words = steps["uptrain conv_gsa_s2"].split()
    cut = words.index("--")
    proc = subprocess.run(words[:cut] + ["--dry-run"] + words[cut:], cwd=REPO, env=ENV, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    root = tmp_path / "runs_root"
    assert (f"--restore-file {root}/runs/conv_gsa_s2/converted.pt --reset-optimizer --reset-dataloader "
            "--reset-meters --reset-lr-scheduler") in out
    assert "--weight-decay 0.01 --clip-norm 1.0" in out and "--seed 2" in out and "--warmup-updates 50" in out
    assert not root.exists()


def test_foreign_folder_is_refused(tmp_path):
    foreign = tmp_path / "other"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    for extra in ([], ["--dry-run"]):
        proc = _driver("--root", str(foreign), "--code", str(REPO), *extra)
        assert proc.returncode == 2 and "was not created by experiments.uptraining" in proc.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    (foreign / ".run").write_text("quickstart lm-comparison\n")  # another tool's mark
    proc = _driver("--root", str(foreign), "--code", str(REPO), "--dry-run")
    assert proc.returncode == 2 and "holds another run" in proc.stderr

    from experiments.uptraining import owner

    mine = tmp_path / "mine"
    owner.claim(str(mine))
    assert owner.check(str(mine)) is True and (mine / ".run").read_text() == owner.OWNER + "\n"


# --- the report from synthetic logs -------------------------------------------------------------
def _eval_log(ppl):
    return ("INFO:fairseq_cli.eval_lm:num. model params: 4,830,208\n"
            "INFO:fairseq_cli.eval_lm:Evaluated 32,987 tokens in 3.0s (10995.67 tokens/s)\n"
            f"INFO:fairseq_cli.eval_lm:Loss (base 2): 6.0000, Perplexity: {ppl:.2f}\n")


def _run(root, name, evals, seconds=100, commit="abc123", updates=None):
    folder = root / "runs" / name
    (folder / "eval").mkdir(parents=True)
    for (u, split), value in evals.items():
        (folder / "eval" / f"u{u}_{split}.log").write_text(_eval_log(value))
    (folder / "commit").write_text(commit + "\n")
    (folder / "train_seconds").write_text(f"{seconds}\n")
    if updates:
        (folder / "done").write_text(f"max_update={updates}\n")
        (folder / "train.log").write_text(f"2026 | INFO | train | epoch 003 | loss 6 | num_updates {updates}\n")


# test perplexity at P per model and seed; valid is test + 3
TEST_AT_P = {"softmax": {1: 60.0, 2: 62.0, 3: 64.0}, "abc": {1: 66.0, 2: 65.0, 3: 70.0},
             "gsa": {1: 52.0, 2: 50.0, 3: 51.5}}


@pytest.fixture
def synthetic(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / ".run").write_text("experiments.uptraining lm-uptraining-evidence\n")
    for model, per_seed in TEST_AT_P.items():
        for seed, value in per_seed.items():
            evals = {(300, "test"): value, (300, "valid"): value + 3}
            if seed < 3:
                evals.update({(400, "test"): value - 4, (400, "valid"): value - 1})
            if model == "softmax" and seed < 3:
                evals.update({(u, s): value - (u - 300) / 25 + (3 if s == "valid" else 0)
                              for u in (325, 350, 375) for s in ("valid", "test")})
            _run(root, f"{model}_s{seed}", evals, updates=400 if seed < 3 else 300)
    for model in ("abc", "gsa"):
        for seed in (1, 2):
            source = TEST_AT_P["softmax"][seed]
            curve = {0: source * 1.5, 25: source * 1.1, 50: source * 1.04, 75: source * 1.0, 100: source * 0.97}
            _run(root, f"conv_{model}_s{seed}", {(u, s): v + (3 if s == "valid" else 0) for u, v in curve.items()
                                                 for s in ("valid", "test")}, updates=100)
    (root / "steps.jsonl").write_text(json.dumps({
        "step": "eval softmax_s1 @300 valid", "kind": "eval", "run": "softmax_s1", "model": "softmax", "seed": 1,
        "status": "ok", "started": "2026-11-27T10:00:00+00:00", "load_before": [1.0, 1, 1], "load_after": [1.5, 1, 1],
        "command": ["fairseq-eval-lm", "DATA", "--gen-subset", "valid"]}) + "\n")
    return root


def test_logs_are_parsed(synthetic):
    from experiments.uptraining import logs

    run = logs.run_record(str(synthetic / "runs" / "conv_gsa_s2"))
    assert (run["kind"], run["model"], run["seed"], run["commit"], run["budget"]) == \
        ("converted", "gsa", 2, "abc123", "max_update=100")
    assert run["evals"][100]["test"] == {"ppl": 60.14, "loss_base2": 6.0, "tokens": 32987, "tokens_per_s": 10995.67}
    with pytest.raises(ValueError):
        logs.run_record(str(synthetic))


def test_report_numbers_mean_and_spread(synthetic, tmp_path):
    up, gsa = tmp_path / "up", tmp_path / "gsa"
    proc = subprocess.run([sys.executable, "-m", "experiments.uptraining.report", "--root", str(synthetic),
                           "--uptraining-out", str(up), "--seeds-out", str(gsa)], cwd=REPO, env=ENV,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seeds = json.loads((gsa / "seeds.json").read_text())
    rows = {r["model"]: r for r in seeds["rows"]}
    for model, per_seed in TEST_AT_P.items():
        values = list(per_seed.values())
        test = rows[model]["test"]
        assert test["per_seed"] == {str(s): v for s, v in per_seed.items()}
        assert test["mean"] == pytest.approx(statistics.fmean(values))
        assert test["std"] == pytest.approx(statistics.stdev(values))
        assert (test["min"], test["max"]) == (min(values), max(values))
        assert test["range"] == pytest.approx(max(values) - min(values))
        assert rows[model]["valid"]["mean"] == pytest.approx(statistics.fmean(values) + 3)
    md = (gsa / "seeds.md").read_text()
    assert "| GSA-64 | 52.00 | 50.00 | 51.50 | 51.17 | 50.00-52.00 | 2.00 | 1.04 |" in md

    result = json.loads((up / "results.json").read_text())
    soft = result["curves"]["softmax"]["1"]
    assert [soft[str(u)]["test"] for u in (300, 325, 350, 375, 400)] == [60.0, 59.0, 58.0, 57.0, 56.0]
    conv = result["curve_means"]["converted ABC-64"]["test"]
    assert conv["300"] == pytest.approx(1.5 * 61) and conv["400"] == pytest.approx(0.97 * 61, abs=0.01)
    ends = {(r["model"], r["total_updates"]): r for r in result["endpoints"]}
    assert ends[("GSA-64, from scratch", 400)]["test"]["mean"] == pytest.approx(47.0)
    assert ends[("ABC-64, converted + 100 continued", 400)]["per_seed"]["test"] == {"1": 58.2, "2": 60.14}
    recovery = {(r["model"], r["seed"]): r["first_within"] for r in result["recovery"]}
    assert recovery == {("abc", 1): 50, ("abc", 2): 50, ("gsa", 1): 50, ("gsa", 2): 50}
    assert (up / "results.png").stat().st_size > 0 and (gsa / "seeds.png").stat().st_size > 0
    assert "abc123" in (up / "results.md").read_text()

    # it replaces its own files, and refuses a folder whose files it did not write
    again = subprocess.run([sys.executable, "-m", "experiments.uptraining.report", "--root", str(synthetic),
                            "--uptraining-out", str(up), "--seeds-out", str(gsa)], cwd=REPO, env=ENV,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    other = tmp_path / "other"
    other.mkdir()
    (other / "results.md").write_text("someone else's\n")
    refused = subprocess.run([sys.executable, "-m", "experiments.uptraining.report", "--root", str(synthetic),
                              "--uptraining-out", str(other), "--seeds-out", str(gsa)], cwd=REPO, env=ENV,
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "not written by" in refused.stderr
    assert (other / "results.md").read_text() == "someone else's\n"


def test_gsa_runs_take_their_own_checkout_when_given(tmp_path):
    """With --gsa-code, the GSA runs (from scratch and converted) run in that checkout, every
    other run in --code."""
    other = tmp_path / "gsa_checkout"
    proc = _driver("--root", str(tmp_path / "runs_root"), "--code", str(REPO), "--gsa-code", str(other), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for header, command in zip(lines[::2], lines[1::2]):
        gsa = "gsa_s" in header
        assert header.endswith(f"] in {other if gsa else REPO}"), header
        if "abc_fairseq.convert" not in command:  # the converter names no path of the worktree it runs in
            assert (f"{other}/" in command) == gsa, header
            assert (f"{REPO}/" in command) == (not gsa), header


def test_report_shows_a_variant_schedule_beside_the_main_one(synthetic, tmp_path):
    variant = tmp_path / "variant"
    variant.mkdir()
    _run(variant, "conv_gsa_s1", {(k, s): 50.0 - k / 25 for k in (0, 25, 50, 75, 100) for s in ("valid", "test")},
         updates=100, commit="def456")
    (variant / "steps.jsonl").write_text(json.dumps({
        "step": "uptrain conv_gsa_s1", "kind": "uptrain", "run": "conv_gsa_s1", "model": "gsa", "seed": 1,
        "status": "ok", "started": "2026-11-27T11:00:00+00:00", "load_before": [1, 1, 1], "load_after": [1, 1, 1],
        "command": ["bash", "uptrain.sh", "--lr", "1e-3", "--warmup", "25", "--max-update", "100"]}) + "\n")
    up = tmp_path / "up"
    proc = subprocess.run([sys.executable, "-m", "experiments.uptraining.report", "--root", str(synthetic),
                           "--uptraining-out", str(up), "--seeds-out", str(tmp_path / "gsa"),
                           "--variant-root", str(variant)], cwd=REPO, env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    record = json.loads((up / "results.json").read_text())
    assert record["variants"][0]["lr"] == "1e-3" and record["variants"][0]["warmup"] == 25
    md = (up / "results.md").read_text()
    assert ("| GSA-64 | 1 | 1e-3 | 25 | 50.00 / 50.00 | 49.00 / 49.00 | 48.00 / 48.00 | 47.00 / 47.00 | "
            "46.00 / 46.00 |") in md
    assert "| GSA-64 | 1 | 5e-4 | 50 | 93.00 / 90.00 |" in md  # the main schedule's run, beside it



def test_report_commands_name_no_folder_of_the_machine():
    from experiments.uptraining.report import portable

    text = ("fairseq-train /m/runs/data-bin --user-dir /m/wt_gsa/abc_fairseq --save-dir /m/runs/runs/gsa_s1"
            " && bash /m/wt/x.sh")
    assert portable(text, "/m/runs", ["/m/wt", "/m/wt_gsa"]) == \
        "fairseq-train RUNS/data-bin --user-dir ./abc_fairseq --save-dir RUNS/runs/gsa_s1 && bash ./x.sh"
