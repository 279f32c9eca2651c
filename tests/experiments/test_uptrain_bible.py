"""experiments.bible_mt.uptrain (the translation part of the uptraining evidence): its plan (the
converter gets each target variant's attention flags, the recipe the continued budget), its
refusals, and the summary's numbers from hand-written logs. No training (hours on CPU)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODULE = [sys.executable, "-m", "experiments.bible_mt.uptrain"]
STAMP = "2026-11-27 12:40:00 | INFO | "


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _valid_log(points) -> str:
    """A fairseq-train log with one validation line per (updates, loss), 50 updates per epoch."""
    return "".join(f"{STAMP}valid | epoch {u // 50:03d} | valid on 'valid' subset | loss {loss:.3f} | "
                   f"nll_loss {loss - 0.3} | ppl 100 | wps 4000 | wpb 2552 | bsz 72.6 | num_updates {u}\n"
                   for u, loss in points)


def _validated(loss: float) -> str:
    return f"{STAMP}valid | valid on 'valid' subset | loss {loss:.3f} | nll_loss {loss - 0.3} | ppl 100 | wps 0\n"


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    _write(data / "eval" / "prep.json", "{}")
    return data


def _run(args, **kw):
    return subprocess.run(MODULE + [str(a) for a in args], cwd=REPO, capture_output=True, text=True, **kw)


def test_dry_run_converts_with_each_targets_training_flags(tmp_path):
    out = _run(["--out", tmp_path / "out", "--data", _data(tmp_path), "--seeds", "3", "--pretrain", "300",
                "--continue", "150", "--lr", "7e-4", "--warmup", "20", "--stages", "convert,uptrain,continue",
                "--dry-run"], check=True).stdout
    lines = out.splitlines()
    convert = [line for line in lines if "abc_fairseq.convert" in line]
    assert len(convert) == 2
    assert ("--encoder-attn softmax --decoder-self-attn abc --decoder-self-memory 8 --decoder-cross-attn abc "
            "--decoder-cross-memory 32 --seed 3") in convert[0]
    assert "--decoder-self-attn gsa --decoder-self-memory 8 --decoder-cross-attn softmax" in convert[1]
    assert all("runs/transformer_seed3/checkpoint_last.pt" in line for line in convert)
    uptrain = [line for line in lines if "scripts/mt/uptrain.sh" in line]
    assert len(uptrain) == 2 and all("--lr 7e-4 --warmup 20 --max-update 150 --seed 3" in line for line in uptrain)
    assert "uptrain/abc_32_8_s3/checkpoints" in uptrain[0] and "uptrain/gsa_causal_8_s3/converted.pt" in uptrain[1]
    # The source is scored at P before its conversion (valid loss batched as in training: every sentence),
    # and continued to P + U in its own folder afterwards.
    assert "--tag test_u300" in lines[0]
    validate = [line for line in lines if "fairseq-validate" in line]
    assert len(validate) == 1 and "--required-batch-size-multiple 1" in validate[0]
    continued = [line for line in lines if "scripts/mt/train.sh" in line]
    assert len(continued) == 1 and "--max-update 450" in continued[0] and "--arch transformer" in continued[0]
    assert lines.index(continued[0]) > max(lines.index(line) for line in uptrain)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, message", [
    (["--targets", "transformer"], "--targets: 'transformer' is the source"),
    (["--targets", "nope"], "--targets: unknown nope"),
    (["--continue", "0"], "--continue must be a positive number"),
    (["--stages", "convert,fly"], "--stages: unknown fly"),
])
def test_bad_flags_are_named(tmp_path, argv, message):
    proc = _run(["--out", tmp_path / "out"] + argv)
    assert proc.returncode == 2 and message in proc.stderr


def test_a_source_trained_past_p_and_a_foreign_folder_are_refused(tmp_path):
    data, out = _data(tmp_path), tmp_path / "out"
    _write(out / "logs" / "transformer.train.log", _valid_log([(50, 9.2), (100, 8.3)]))
    proc = _run(["--out", out, "--data", data, "--seeds", "1", "--pretrain", "50", "--stages", "convert"])
    assert proc.returncode != 0 and "reached 100 updates, not P = 50" in proc.stderr
    assert "cannot be converted at P" in proc.stderr
    foreign = _write(out / "uptrain" / "abc_32_8_s1" / "notes.txt", "mine")
    proc = _run(["--out", out, "--data", data, "--seeds", "1", "--pretrain", "100", "--stages", "convert"])
    assert proc.returncode != 0 and "was not created by this script" in proc.stderr
    assert foreign.read_text() == "mine"


def _finished_out(tmp_path: Path) -> Path:
    """OUT as the driver leaves it (P = 100, U = 100), with two seeds and made-up numbers."""
    out = tmp_path / "out"
    for seed, shift in ((1, 0.0), (2, 0.1)):
        suffix = "" if seed == 1 else f"_seed{seed}"
        source = out / "runs" / f"transformer{suffix}"
        _write(out / "logs" / f"transformer{suffix}.train.log",
               _valid_log([(50, 9.0 + shift), (100, 8.0 + shift), (150, 7.5 + shift), (200, 7.0 + shift)]))
        _write(source / "eval" / "validate_u100.log", _validated(8.0 + shift))
        _write(source / "eval" / "test_u100" / "result.json", json.dumps({"bleu": 4.0 + seed}))
        _write(source / "eval" / "test_u200" / "result.json", json.dumps({"bleu": 8.0 + seed}))
        for target, start, points in (("abc_32_8", 8.6, [(50, 7.6), (100, 7.2)]),
                                      ("gsa_causal_8", 8.1, [(50, 7.4), (100, 6.9)])):
            folder = out / "uptrain" / f"{target}_s{seed}"
            _write(folder / "conversion.json", json.dumps({"convert_command": [sys.executable, str(out / "x.pt")],
                                                          "lr": "1e-3", "warmup": 50}))
            _write(folder / "eval" / "validate_u0.log", _validated(start + shift))
            _write(folder / "train.log", _valid_log([(u, loss + shift) for u, loss in points]))
            for u, bleu in ((0, 1.0), (50, 5.0), (100, 7.0)):
                _write(folder / "eval" / f"test_u{u}" / "result.json", json.dumps({"bleu": bleu + seed}))
            scratch = f"{target}{suffix}"
            _write(out / "logs" / f"{scratch}.train.log", _valid_log([(100, 8.5 + shift), (200, 7.3 + shift)]))
            _write(out / "runs" / scratch / "eval" / "test_u200" / "result.json", json.dumps({"bleu": 6.0 + seed}))
    return out


def test_summary_tables_recovery_and_portable_commands(tmp_path):
    out = _finished_out(tmp_path)
    summary_dir = tmp_path / "summary"
    _run(["--out", out, "--data", _data(tmp_path), "--pretrain", "100", "--continue", "100", "--stages", "summary",
          "--summary-dir", summary_dir], check=True)
    summary = json.loads((summary_dir / "mt.json").read_text())
    rows = {row["model"]: row for row in summary["tables"]["abc_32_8"]}
    assert rows["softmax source"]["valid_loss"] == [8.0, 8.1] and rows["softmax source"]["bleu"] == [5.0, 6.0]
    assert rows["converted, before any update"]["valid_loss"] == [8.6, 8.7]
    assert rows["converted + 50"]["valid_loss"] == [7.6, 7.7] and rows["converted + 50"]["bleu"] == [6.0, 7.0]
    assert rows["converted + 100"]["updates"] == 200 and rows["converted + 100"]["bleu"] == [8.0, 9.0]
    assert rows["abc_32_8 from scratch"]["valid_loss"] == [7.3, 7.4]
    assert rows["softmax continued"]["valid_loss"] == [7.0, 7.1] and rows["softmax continued"]["bleu"] == [9.0, 10.0]
    # ABC reaches its source's 8.0 between 0 (8.6) and 50 (7.6) continued updates: 0.6 / 1.0 of the way.
    assert summary["recovery"]["abc_32_8"] == {"1": 30, "2": 30}
    assert summary["settings"]["targets"]["gsa_causal_8"].startswith("--encoder-attn softmax --decoder-self-attn gsa")
    assert summary["source_validate_check"] == {"validate": [8.0, 8.1], "log": [8.0, 8.1]}
    text = (summary_dir / "mt.md").read_text()
    assert "| converted + 100 | 200 | 7.200 | 7.300 | 7.250 | 8.00 | 9.00 | 8.50 |" in text
    assert json.loads((summary_dir / "mt.json").read_text())["runs"]["abc_32_8_s1"]["convert_command"] == [
        "python", "OUT/x.pt"]
    assert str(tmp_path) not in text and (summary_dir / "mt.png").stat().st_size > 0


def test_from_scratch_runs_missing_in_out_are_read_from_a_saved_summary(tmp_path):
    out = _finished_out(tmp_path)
    for target in ("abc_32_8", "gsa_causal_8"):
        (out / "logs" / f"{target}_seed2.train.log").unlink()
    curve = [{"updates": 100, "epoch": 2, "loss": 8.0, "nll_loss": 7.7, "ppl": 200.0},
             {"updates": 200, "epoch": 4, "loss": 6.5, "nll_loss": 6.2, "ppl": 70.0}]
    saved = _write(tmp_path / "saved" / "compare_bible.json", json.dumps({"models": {
        "abc_32_8_seed2": {"seed": 2, "curve": curve, "bleu_at": {"200": 11.5}},
        "gsa_causal_8_seed2": {"seed": 2, "curve": curve[:1], "bleu_at": {"100": 3.0}}}}))  # short of P + U
    summary_dir = tmp_path / "summary"
    _run(["--out", out, "--data", _data(tmp_path), "--pretrain", "100", "--continue", "100", "--stages", "summary",
          "--summary-dir", summary_dir, "--scratch-summary", saved], check=True)
    summary = json.loads((summary_dir / "mt.json").read_text())
    abc = {row["model"]: row for row in summary["tables"]["abc_32_8"]}["abc_32_8 from scratch"]
    assert abc["valid_loss"] == [7.3, 6.5] and abc["bleu"] == [7.0, 11.5]
    gsa = {row["model"]: row for row in summary["tables"]["gsa_causal_8"]}["gsa_causal_8 from scratch"]
    assert gsa["valid_loss"] == [7.3, None]  # neither OUT nor the saved summary has it at P + U
    assert summary["runs"]["abc_32_8_scratch_s2"]["saved_summary"].endswith("saved/compare_bible.json")
    assert "abc_32_8 seed 2 from " in (summary_dir / "mt.md").read_text()
    proc = _run(["--out", out, "--stages", "summary", "--scratch-summary", tmp_path / "nope.json"])
    assert proc.returncode == 2 and "--scratch-summary: no such file" in proc.stderr
