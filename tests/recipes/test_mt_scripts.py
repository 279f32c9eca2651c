"""The MT scripts and data tools: --help everywhere, unknown options, batch arithmetic of the
launchers (dry runs), the sweep grid, checkpoint averaging and the results collector."""

import json
import re
import sys

import pytest
from mt_helpers import IWSLT, REPO, _run

# --- scripts: help, dry runs, small tools ---------------------------------------------------------

@pytest.mark.parametrize("script", [
    "data_prep/wmt14_en_de/prepare.sh", "data_prep/iwslt14_es_en_doc/prepare.sh",
    "data_prep/mt/prepare_doc_corpus.sh", "data_prep/bible_es_en/make_corpus.sh", "scripts/mt/train.sh",
    "scripts/mt/train.sbatch", "scripts/mt/evaluate.sh", "scripts/mt/sweep_memory.sh"])
def test_every_script_has_help(script):
    proc = _run(["bash", REPO / script, "--help"])
    assert len(proc.stdout.splitlines()) > 5 and "set -euo" not in proc.stdout


@pytest.mark.parametrize("module", ["data_prep.lib.fetch", "data_prep.mt.wmt14_extract", "data_prep.mt.iwslt_docs",
                                    "data_prep.mt.moses_prep", "data_prep.mt.spm_bpe", "data_prep.mt.windows",
                                    "data_prep.mt.clean_parallel"])
def test_every_module_has_help(module):
    assert "usage" in _run([sys.executable, "-m", module, "--help"]).stdout


@pytest.mark.parametrize("script", ["average_checkpoints.py", "translate_docs.py", "score.py", "collect_results.py"])
def test_every_python_script_has_help(script):
    assert "usage" in _run([sys.executable, REPO / "scripts" / "mt" / script, "--help"]).stdout


def test_unknown_option_names_the_flag(tmp_path):
    proc = _run(["bash", IWSLT, "--bpe-size", "many"], check=False)
    assert proc.returncode != 0 and "--bpe-size" in proc.stderr


def _fake_data(tmp_path, window=1):
    d = tmp_path / "data"
    (d / "eval").mkdir(parents=True)
    (d / "eval" / "prep.json").write_text(json.dumps({"src": "en", "tgt": "de", "window": window, "sep": None,
                                                     "pipeline": "spm"}))
    return d


@pytest.mark.parametrize("gpus,freq", [(1, 8), (2, 4), (4, 2), (8, 1), (16, 1)])
def test_train_update_freq_keeps_the_total_batch(tmp_path, gpus, freq):
    proc = _run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "wmt14", "--data", _fake_data(tmp_path),
                 "--save-dir", tmp_path / "ck", "--nproc-per-node", gpus, "--dry-run"])
    cmd = proc.stdout
    assert "--update-freq %d " % freq in cmd
    assert "--lr 7e-4" in cmd and "--warmup-updates 6000" in cmd and "--dropout 0.1" in cmd
    assert "--decoder-cross-memory 32" in cmd and "--decoder-self-memory 8" in cmd and "--encoder-attn softmax" in cmd
    assert "--tensorboard-logdir" in cmd and "--label-smoothing 0.1" in cmd
    assert ("torchrun" in cmd) == (gpus > 1)


def test_train_multinode_and_cpu_launch_commands(tmp_path):
    data = _fake_data(tmp_path)
    proc = _run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "iwslt14_doc", "--data", data, "--save-dir",
                 tmp_path / "ck", "--nproc-per-node", "4", "--nnodes", "2", "--dry-run"])
    cmd = proc.stdout
    # several nodes: srun + torchrun with a c10d rendezvous, the launch of every recipe
    assert cmd.startswith("srun --nodes 2 --ntasks-per-node 1 torchrun --nnodes 2 --nproc_per_node 4 "
                          "--rdzv_backend c10d")
    assert "--distributed-world-size 8" in cmd and "--update-freq 1 " in cmd and "--distributed-rank" in cmd
    proc = _run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "iwslt14_doc", "--data", data, "--save-dir",
                 tmp_path / "ck", "--node-rank", "1", "--dry-run"], check=False)
    assert proc.returncode != 0 and "--node-rank" in proc.stderr and "scripts/mt/train.sbatch" in proc.stderr
    assert "--warmup-updates 4000" in cmd and "--dropout 0.3" in cmd and "--decoder-cross-memory 128" in cmd
    proc = _run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "tiny", "--data", data, "--save-dir",
                 tmp_path / "ck", "--cpu", "--nproc-per-node", "2", "--model", "softmax", "--dry-run"])
    cmd = proc.stdout
    assert "--distributed-backend gloo" in cmd and "--ddp-backend legacy_ddp" in cmd and "--cpu" in cmd
    assert "--decoder-cross-attn softmax" in cmd and "--decoder-self-attn softmax" in cmd
    proc = _run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "wmt14", "--data", data, "--save-dir",
                 tmp_path / "ck", "--nproc-per-node", "x"], check=False)
    assert proc.returncode != 0 and "--nproc-per-node" in proc.stderr


def test_sweep_lists_the_table5_grid(tmp_path):
    proc = _run(["bash", REPO / "scripts/mt/sweep_memory.sh", "--data", "D", "--root", tmp_path, "--dry-run"])
    trains = [line for line in proc.stdout.splitlines() if "train.sh" in line]
    def memory(flag, line):
        return int(re.search(rf"--{flag}-memory (\d+)", line).group(1))

    pairs = sorted((memory("cross", t), memory("causal", t)) for t in trains)
    assert pairs == sorted((c, k) for c in (8, 16, 32, 64) for k in (8, 16, 32, 64) if k <= c)
    evals = [line for line in proc.stdout.splitlines() if "evaluate.sh" in line]
    assert len(evals) == 10
    assert all("--split valid" in e and "--beam 1" in e and "checkpoint_last.pt" in e for e in evals)


def test_average_checkpoints(tmp_path):
    torch = pytest.importorskip("torch")
    for epoch, value in ((1, 0.0), (2, 1.0), (3, 2.0), (4, 4.0)):
        torch.save({"model": {"w": torch.full((2, 2), value), "step": torch.tensor(7)}, "cfg": {"epoch": epoch},
                    "last_optimizer_state": {"big": 1}}, tmp_path / f"checkpoint{epoch}.pt")
    torch.save({"model": {"w": torch.zeros(2, 2), "step": torch.tensor(7)}}, tmp_path / "checkpoint_last.pt")
    _run([sys.executable, REPO / "scripts/mt/average_checkpoints.py", "--save-dir", tmp_path, "--last-epochs", "3",
          "--output", tmp_path / "avg.pt"])
    avg = torch.load(tmp_path / "avg.pt", weights_only=False)
    assert torch.allclose(avg["model"]["w"], torch.full((2, 2), 7.0 / 3))
    assert avg["cfg"] == {"epoch": 4} and "last_optimizer_state" not in avg
    proc = _run([sys.executable, REPO / "scripts/mt/average_checkpoints.py", "--save-dir", tmp_path, "--last-epochs",
                 "5", "--output", tmp_path / "avg5.pt"], check=False)
    assert proc.returncode != 0 and "4 epoch checkpoints" in proc.stderr


def _result(root, name, bleu, dataset, model, cross, causal, split, checkpoint, beam, decode="sentence",
            encoder=None):
    """A result.json as evaluate.sh writes it, with train.sh's run.json inside."""
    d = root / name
    d.mkdir()
    (d / "result.json").write_text(json.dumps({
        "bleu": bleu, "split": split, "checkpoint": checkpoint, "beam": beam, "decode": decode,
        "signature": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0",
        "run": {"dataset": dataset, "model": model, "cross_memory": cross, "causal_memory": causal,
                "encoder_memory": encoder}}))


def test_collect_results_builds_the_paper_tables(tmp_path):
    def result(*args, **kwargs):
        _result(tmp_path, *args, **kwargs)

    result("base", 27.0, "wmt14", "softmax", None, None, "test", "x/average_last5.pt", 5)
    result("abc", 26.5, "wmt14", "abc", 32, 8, "test", "x/average_last5.pt", 5)
    result("rd", 25.0, "wmt14", "random", 64, 64, "test", "x/average_last5.pt", 5)
    result("doc", 39.0, "iwslt14_doc", "abc", 128, 64, "test", "y/average_last5.pt", 5, decode="doc")
    result("t5", 25.0, "wmt14", "abc", 16, 8, "valid", "z/checkpoint_last.pt", 1)
    result("other", 3.0, "tiny", "abc", 16, 8, "test", "w/checkpoint_last.pt", 5)
    out = _run([sys.executable, REPO / "scripts/mt/collect_results.py", tmp_path]).stdout
    assert "| BASE | - | - | 27.0 | 27.2 |" in out
    assert "| ABC_MLP | 32 | 8 | 26.5 | 27.1 |" in out
    assert "| ABC_MLP | 32 | 32 | - | 27.3 |" in out
    assert "| ABC_RD | 64 | 64 | 25.0 | 26.2 |" in out and "| Linformer | 32 | 32 | - | 26.6 |" in out
    assert out.index("| BASE |") < out.index("| ABC_RD |") < out.index("| Linformer |") < out.index("| ABC_MLP |")
    assert "| ABC_MLP | 128 | 64 | 39.0 | 39.7 |" in out
    row8 = next(line for line in out.splitlines() if line.startswith("| 8 |"))
    assert row8.split("|")[2].strip() == "- / 24.7" and row8.split("|")[3].strip() == "25.0 / 25.2"
    assert "Other evaluations" in out and "| tiny | abc |" in out


def test_collect_results_builds_table7(tmp_path):
    """Table 7 (ABC variants, WMT14 test): every paper row with its number, ours beside it; the
    encoder-too run (MLP-exp-all) is its own row and stays out of Table 3a."""
    test = ("test", "x/average_last5.pt", 5)
    _result(tmp_path, "base", 27.0, "wmt14", "softmax", None, None, *test)
    _result(tmp_path, "window", 26.0, "wmt14", "window", 32, 32, *test)
    _result(tmp_path, "sigmoid", 26.6, "wmt14", "abc-sigmoid", 32, 8, *test)
    _result(tmp_path, "exp", 27.2, "wmt14", "abc", 32, 32, *test)
    _result(tmp_path, "all", 26.9, "wmt14", "abc", 32, 32, *test, encoder=32)
    _result(tmp_path, "rd", 25.0, "wmt14", "random", 32, 32, *test)
    out = _run([sys.executable, REPO / "scripts/mt/collect_results.py", tmp_path]).stdout
    table7 = out[out.index("### Table 7"):].split("\n\n")[1].splitlines()
    assert table7[2:] == [
        "| BASE | - | - | - | 27.0 | 27.2 |",
        "| Window | 32 | 32 | - | 26.0 | 26.3 |",
        "| Cluster | 32 | 32 | - | - | 26.8 |",
        "| MLP-ReLU | 32 | 8 | - | - | - |",
        "| MLP-ReLU | 32 | 32 | - | - | 26.4 |",
        "| MLP-sigmoid | 32 | 8 | - | 26.6 | 26.8 |",
        "| MLP-sigmoid | 32 | 32 | - | - | 27.0 |",
        "| MLP-exp | 32 | 8 | - | - | 27.1 |",
        "| MLP-exp | 32 | 32 | - | 27.2 | 27.3 |",
        "| MLP-exp-all | 32 | 32 | 32 | 26.9 | 27.0 |"]
    table3a = out[out.index("### Table 3a"):out.index("### Table 3b")]
    assert "| ABC_MLP | 32 | 32 | 27.2 | 27.3 |" in table3a and "26.9" not in table3a  # the -all run is Table 7's
    assert "| window | 32 | 32 | 26.0 | - |" in table3a and "| ABC_RD | 32 | 32 | 25.0 | 25.7 |" in table3a
    assert "Other evaluations" not in out


def test_every_table7_row_launches_from_train_sh(tmp_path):
    """Each row of Table 7 is a train.sh command (--model, --cross-memory, --causal-memory and, for
    MLP-exp-all, --encoder-memory) whose fairseq-train arguments fairseq's parser accepts; the
    Window row was refused before window had a cross-attention form."""
    import importlib.util
    import shlex

    from fairseq_helpers import parse

    spec = importlib.util.spec_from_file_location("collect_results", REPO / "scripts/mt/collect_results.py")
    collect_results = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(collect_results)

    data = _fake_data(tmp_path)
    for model, cross, causal, encoder in collect_results.PAPER_7:
        flags = ["--model", model]
        if model != "softmax":
            flags += ["--cross-memory", cross, "--causal-memory", causal]
        if encoder:
            flags += ["--encoder-memory", encoder]
        if model == "window" or encoder:  # through train.sh (seconds each); the rest: the same flags, parsed here
            proc = _run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "wmt14", "--data", data, "--save-dir",
                         tmp_path / "ck", "--nproc-per-node", "1", "--dry-run", *flags])
            argv = shlex.split(proc.stdout.splitlines()[0])[1:]
        else:
            attention = ["--decoder-cross-attn", model, "--decoder-self-attn", model, "--encoder-attn", "softmax"]
            if model != "softmax":
                attention += ["--decoder-cross-memory", cross, "--decoder-self-memory", causal]
            argv = [data, "--task", "translation", "--arch", "abc_transformer_wmt_en_de", "--user-dir",
                    REPO / "abc_fairseq", *attention]
        args = parse([str(a) for a in argv])
        expected = ("softmax",) * 3 if model == "softmax" else (model, model, model if encoder else "softmax")
        assert (args.decoder_cross_attn, args.decoder_self_attn, args.encoder_attn) == expected
        if model != "softmax":
            assert (args.decoder_cross_memory, args.decoder_self_memory) == (cross, causal)
        if encoder:
            assert args.encoder_memory == encoder


def test_a_plain_fairseq_arch_trains_with_the_plugin_loaded(tmp_path):
    """--arch transformer gets no ABC flag but --user-dir: resuming its run loads checkpoint_last.pt,
    which torch >= 2.6 refuses (weights-only) unless the plugin has allowed fairseq's pickled types."""
    proc = _run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "tiny", "--data", _fake_data(tmp_path),
                 "--save-dir", tmp_path / "ck", "--cpu", "--model", "softmax", "--arch", "transformer", "--dry-run"])
    cmd = proc.stdout
    assert "--arch transformer " in cmd and f"--user-dir {REPO}/abc_fairseq " in cmd
    assert "--decoder-cross-attn" not in cmd and "--encoder-attn" not in cmd


@pytest.mark.parametrize("cross", ["abc", "softmax"])
def test_gsa_causal_under_a_softmax_or_abc_cross_attention(cross, tmp_path):
    """``--causal-model gsa``: GSA (causal only) in the decoder's self attention under the cross
    attention of ``--model``; fairseq's parser takes the command, and the run records it."""
    import shlex

    from fairseq_helpers import parse

    proc = _run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "wmt14", "--data", _fake_data(tmp_path),
                 "--save-dir", tmp_path / "ck", "--nproc-per-node", "1", "--dry-run", "--model", cross,
                 "--causal-model", "gsa"])
    args = parse([str(a) for a in shlex.split(proc.stdout.splitlines()[0])[1:]])
    assert (args.decoder_cross_attn, args.decoder_self_attn, args.encoder_attn) == (cross, "gsa", "softmax")
    assert args.decoder_self_memory == 8
    bad = _run(["bash", REPO / "scripts/mt/train.sh", "--dataset", "wmt14", "--data", _fake_data(tmp_path / "b"),
                "--save-dir", tmp_path / "ck2", "--dry-run", "--causal-model", "no-such"], check=False)
    assert bad.returncode != 0 and "--causal-model" in bad.stderr
