"""experiments.bible_mt (compare_bible and its helpers): help, variants, log parsing, the phi statistics
against hand-computed values, resuming rules. No training (the comparison itself takes hours on CPU)."""

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "experiments.bible_mt"


def _module(name: str):
    """The command that runs one module of the study (from the repository root)."""
    return [sys.executable, "-m", f"{PACKAGE}.{name}"]

_STAMP = "2026-11-23 12:40:00 | INFO | "
_VALID_FIELDS = "wps 4000 | wpb 2000 | bsz 60"
_TRAIN_FIELDS = "wps 600 | ups 0.2 | wpb 2800 | bsz 78"
LOG = "".join([
    f"{_STAMP}valid | epoch 001 | valid on 'valid' subset | loss 9.5 | nll_loss 9.25 | ppl 608.87 | "
    f"{_VALID_FIELDS} | num_updates 50\n",
    f"{_STAMP}train | epoch 001 | loss 10.1 | nll_loss 10 | ppl 1024 | {_TRAIN_FIELDS} | num_updates 50 | "
    "lr 1.25e-4 | gnorm 2 | train_wall 240 | wall 250\n",
    "2026-11-23 12:44:00 | INFO | valid | epoch 002 | valid on 'valid' subset | loss 8.5 | nll_loss 8 | ppl 256 | "
    f"{_VALID_FIELDS} | num_updates 100 | best_loss 8.5\n",
    f"{_STAMP}train | epoch 002 | loss 9.1 | nll_loss 9 | ppl 512 | {_TRAIN_FIELDS} | num_updates 100 | "
    "lr 2.5e-4 | gnorm 2 | train_wall 480 | wall 500\n",
])


@pytest.mark.parametrize("module", ["compare_bible", "phi_usage", "phi_init_train", "uptrain"])
def test_help_prints_usage_and_does_nothing(module, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # the package from a folder it must leave empty
    proc = subprocess.run(_module(module) + ["--help"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0 and "usage:" in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_unknown_variant_and_stage_are_named():
    from experiments.bible_mt.compare_bible import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--out", "x", "--variants", "softmax,nope"])
    with pytest.raises(SystemExit):
        parse_args(["--out", "x", "--stages", "train,fly"])
    for bad in ("0", "1,x", ""):
        with pytest.raises(SystemExit):
            parse_args(["--out", "x", "--seeds", bad])


def test_seeds_get_their_own_run_folders_and_train_seed(tmp_path):
    data = tmp_path / "data"
    _write(data / "eval" / "prep.json", "{}")
    proc = subprocess.run(_module("compare_bible") + ["--out", tmp_path / "out", "--data", data,
                           "--variants", "softmax,abc_32_8_attdrop", "--seeds", "1,2", "--stages", "train",
                           "--dry-run"], cwd=REPO, capture_output=True, text=True, check=True)
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 4
    runs = tmp_path / "out" / "runs"
    expected = [("softmax", "1"), ("softmax_seed2", "2"), ("abc_32_8_attdrop", "1"), ("abc_32_8_attdrop_seed2", "2")]
    for line, (name, seed) in zip(lines, expected):
        assert f"--save-dir {runs / name} " in line and f" --seed {seed} " in line
    assert all(line.endswith("--attention-dropout 0.1") for line in lines[2:])
    assert not (tmp_path / "out").exists()  # a dry run creates nothing


def test_variants_swap_one_position_at_a_time():
    from experiments.bible_mt.variants import VARIANTS

    assert VARIANTS["abc_cross_32"].fairseq_args == ("--decoder-self-attn", "softmax")
    assert VARIANTS["abc_causal_8"].fairseq_args == ("--decoder-cross-attn", "softmax")
    assert VARIANTS["abc_32_8"].uses_phi() and not VARIANTS["softmax"].uses_phi()
    # attention dropout is the only difference from abc_32_8, as softmax_attdrop from softmax
    assert VARIANTS["abc_32_8_attdrop"].train_args == VARIANTS["abc_32_8"].train_args
    assert VARIANTS["abc_32_8_attdrop"].fairseq_args == VARIANTS["softmax_attdrop"].fairseq_args
    assert not VARIANTS["random_32_8"].uses_phi()
    # GSA in the causal position: with softmax cross attention no W_phi is left to inspect
    assert not VARIANTS["gsa_causal_8"].uses_phi() and VARIANTS["abc_32_gsa_8"].uses_phi()
    assert VARIANTS["abc_cross_32"].uses_phi() and VARIANTS["abc_causal_8"].uses_phi()


def test_valid_curve_and_interpolation():
    from experiments.bible_mt.training_curves import first_update_reaching, loss_at, train_wall_seconds, valid_curve

    curve = valid_curve(LOG)
    assert [(p.updates, p.epoch, p.loss, p.nll_loss) for p in curve] == [(50, 1, 9.5, 9.25), (100, 2, 8.5, 8.0)]
    assert loss_at(curve, 75) == pytest.approx(9.0)
    assert loss_at(curve, 100) == 8.5 and loss_at(curve, 150) is None
    assert first_update_reaching(curve, 9.0) == 75 and first_update_reaching(curve, 1.0) is None
    assert first_update_reaching(curve, 9.9) == 50
    assert train_wall_seconds(LOG) == 480
    resumed = valid_curve(LOG + LOG.replace("loss 8.5 |", "loss 8.4 |"))  # a repeated epoch keeps the last
    assert len(resumed) == 2 and resumed[-1].loss == 8.4
    plain = LOG.replace("2026-11-23 12:44:00 | INFO | valid | ", "INFO:valid:")  # Python's default log format
    assert valid_curve(plain) == curve


def test_phi_statistics_uniform_and_copying_slots():
    torch = pytest.importorskip("torch")
    from experiments.bible_mt.phi_usage import phi_statistics

    B, H, N, n = 2, 3, 5, 4
    valid = torch.ones(B, N, dtype=torch.bool)
    valid[1, :2] = False  # left padding: 3 real tokens
    uniform = phi_statistics(torch.zeros(B, H, N, n), valid)
    assert uniform["slot_entropy"] == pytest.approx(1.0)
    assert uniform["tokens_per_slot"] == pytest.approx((5 + 3) / 2)
    assert uniform["slots_per_token"] == pytest.approx(n)
    assert uniform["memory_rank"] == pytest.approx((1 / 4 + 1 / 3) / 2)  # every slot the same mean
    assert uniform["sequences"] == 2 and uniform["tokens"] == pytest.approx(4.0)

    # slot j copies token j (large logit on one token per slot): one token per slot, distinct slots
    copy = torch.full((1, H, N, n), -50.0)
    for j in range(n):
        copy[0, :, j, j] = 50.0
    stats = phi_statistics(copy, torch.ones(1, N, dtype=torch.bool))
    assert stats["slot_entropy"] == pytest.approx(0.0, abs=1e-6)
    assert stats["tokens_per_slot"] == pytest.approx(1.0)
    assert stats["memory_rank"] == pytest.approx(1.0)
    assert stats["distinct_top_slots"] == pytest.approx(1.0)
    # tokens 0..3 write to one slot each; token 4 writes equally everywhere
    assert stats["slots_per_token"] == pytest.approx((4 * 1.0 + n) / N)
    spread = torch.zeros(1, 1, N, n).normal_(generator=torch.Generator().manual_seed(0)) * 3.0
    row = phi_statistics(spread, torch.ones(1, N, dtype=torch.bool))
    phi = torch.softmax(spread[0, 0].double(), dim=0)
    assert row["slot_entropy"] == pytest.approx(float(-(phi * phi.log()).sum(0).mean() / math.log(N)))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_foreign_run_folder_is_an_error_and_left_alone(tmp_path):
    data = tmp_path / "data"
    _write(data / "eval" / "prep.json", "{}")
    foreign = _write(tmp_path / "out" / "runs" / "softmax" / "notes.txt", "mine")
    proc = subprocess.run(_module("compare_bible") + ["--out", tmp_path / "out", "--data", data,
                           "--variants", "softmax", "--stages", "train"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode != 0 and "not created by this script" in proc.stderr
    assert foreign.read_text() == "mine" and sorted(p.name for p in foreign.parent.iterdir()) == ["notes.txt"]


def test_summary_from_logs_and_foreign_summary_refused(tmp_path):
    from experiments.bible_mt.compare_bible import main

    data = tmp_path / "data"
    _write(data / "eval" / "prep.json", "{}")
    logs = tmp_path / "out" / "logs"
    _write(logs / "softmax.train.log", LOG)
    _write(logs / "abc_32_8.train.log", LOG.replace("loss 8.5 |", "loss 9.2 |"))
    _write(logs / "abc_32_8_seed2.train.log", LOG.replace("loss 8.5 |", "loss 8.8 |"))
    _write(tmp_path / "out" / "runs" / "abc_32_8" / "eval" / "test_u100" / "result.json", '{"bleu": 2.0}')
    _write(tmp_path / "out" / "runs" / "abc_32_8_seed2" / "eval" / "test_u100" / "result.json", '{"bleu": 3.0}')
    _write(tmp_path / "out" / "runs" / "softmax" / "eval" / "test_u50" / "result.json", '{"bleu": 3.5}')
    _write(tmp_path / "out" / "runs" / "softmax" / "eval" / "test_u100" / "result.json", '{"bleu": 5.0}')
    summary = tmp_path / "summary"
    main(["--out", str(tmp_path / "out"), "--data", str(data), "--variants", "softmax,abc_32_8",
          "--seeds", "1,2", "--stages", "summary", "--summary-dir", str(summary)])
    import json

    result = json.loads((summary / "compare_bible.json").read_text())
    assert result["models"]["abc_32_8"]["valid_loss_at"]["100"] == pytest.approx(9.2)
    assert result["catch_up"]["abc_32_8"]["softmax_updates_to_reach_it"] == 65  # 9.5 -> 8.5 crosses 9.2 at 65
    table = (summary / "compare_bible.md").read_text()
    assert "| abc_32_8 | 100 | 2.00 @100 | 9.200 |" in table
    assert "| abc_32_8_seed2 | 100 | 3.00 @100 | 8.800 |" in table
    means = result["seed_means"]
    assert list(means) == ["abc_32_8"]  # softmax has one seed here: no mean row
    assert means["abc_32_8"]["seeds"] == [1, 2]
    assert means["abc_32_8"]["bleu_at"]["100"] == pytest.approx(2.5)
    assert means["abc_32_8"]["bleu_spread_at"]["100"] == pytest.approx(1.0)
    assert means["abc_32_8"]["valid_loss_at"]["100"] == pytest.approx(9.0)
    assert means["abc_32_8"]["valid_loss_spread_at"]["100"] == pytest.approx(0.4)
    assert ("| abc_32_8, mean of seeds 1, 2 | 100 | 2.50 @100 (seeds differ by 1.00) | 9.000 "
            "| mean of abc_32_8, abc_32_8_seed2 |") in table
    assert "| softmax | 100 | 3.50 @50, 5.00 @100 | 8.500 |" in table
    assert result["models"]["softmax"]["bleu"] == 5.0

    other = tmp_path / "other"
    _write(other / "compare_bible.md", "someone else's")
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path / "out"), "--data", str(data), "--variants", "softmax",
              "--stages", "summary", "--summary-dir", str(other)])
    assert (other / "compare_bible.md").read_text() == "someone else's"


def test_phi_init_gain_scales_w_phi_and_is_split_from_fairseq_args():
    torch = pytest.importorskip("torch")
    from abc_fairseq.strategies.phi import PhiProjection
    from experiments.bible_mt.phi_init_train import patch_phi_init, split_gain

    torch.manual_seed(0)
    plain = PhiProjection(64, 4, 8).weight.detach().clone()
    original = patch_phi_init(3.0)
    try:
        torch.manual_seed(0)
        scaled = PhiProjection(64, 4, 8).weight.detach()
    finally:
        PhiProjection.__init__ = original
    assert torch.equal(scaled, 3.0 * plain)
    assert split_gain(["DATA", "--arch", "a", "--phi-init-gain", "4", "--seed", "2"]) == (
        4.0, ["DATA", "--arch", "a", "--seed", "2"])
    for bad in (["DATA"], ["DATA", "--phi-init-gain", "0"], ["DATA", "--phi-init-gain", "x"]):
        with pytest.raises(SystemExit):
            split_gain(bad)


def test_phi_gain_variant_trains_through_the_module_with_train_sh(tmp_path):
    """The gain variant's command: train.sh with --train-module, its fairseq command runs this Python with
    -m experiments.bible_mt.phi_init_train and the gain flag, and nothing is put on PATH."""
    data = tmp_path / "data"
    _write(data / "eval" / "prep.json", "{}")
    proc = subprocess.run(_module("compare_bible") + ["--out", tmp_path / "out", "--data", data, "--variants",
                          "abc_32_8_phigain4", "--stages", "train", "--dry-run"], cwd=REPO, capture_output=True,
                          text=True, check=True)
    line = proc.stdout.strip()
    assert "--train-module experiments.bible_mt.phi_init_train" in line and "--phi-init-gain 4" in line
    assert "PATH=" not in line
    from experiments.bible_mt.compare_bible import parse_args, train_command

    args = parse_args(["--out", str(tmp_path / "out"), "--data", str(data), "--variants", "abc_32_8_phigain4"])
    printed = subprocess.run(train_command(args.runs[0], args, dry_run=True), cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split()
    assert printed[1:3] == ["-m", "experiments.bible_mt.phi_init_train"]
    assert printed[printed.index("--phi-init-gain") + 1] == "4"


def test_phi_and_eval_stages_name_each_seed_run(tmp_path):
    data = tmp_path / "data"
    _write(data / "eval" / "prep.json", "{}")
    out = tmp_path / "out"
    for name in ("abc_32_8", "abc_32_8_seed2"):
        _write(out / "logs" / f"{name}.train.log", LOG)
        _write(out / "runs" / name / "checkpoint_last.pt", "")
    proc = subprocess.run(_module("compare_bible") + ["--out", out, "--data", data,
                           "--variants", "abc_32_8", "--seeds", "1,2", "--stages", "phi,eval", "--dry-run"],
                          cwd=REPO, capture_output=True, text=True, check=True)
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 4 and all("experiments.bible_mt.phi_usage" in line for line in lines[:2])
    for line, name in zip(lines[2:], ("abc_32_8", "abc_32_8_seed2")):
        assert "evaluate.sh" in line and f"--save-dir {out / 'runs' / name} " in line
        assert line.endswith("--tag test_u100")  # the budget its log reached
