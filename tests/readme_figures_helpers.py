"""The README's figure bindings (``tests/recipes/test_readme_figures.py``): for every figure the
README shows, the file it is read from, the field (a function of the file's parsed content) and
the format. ``CELLS``: the cells of each README table, known by its first header cell;
``CAPTION_RECORD``: what a caption states of each file it draws on (machine, threads, commit),
built from the file's own fields (the figures of the status box and of the two commands are
bound in ``tests/readme_prose_helpers.py``). The paper's figures are read from the collectors
that print them beside ours (``scripts/*/collect_*.py``). Pure: reads files.
"""

import importlib.util
import json
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- reading the files
@lru_cache(maxsize=None)
def load(path):
    """A saved JSON file, or the module of a collector script (its PAPER tables)."""
    full = ROOT / path
    assert full.is_file(), f"{path} is what the README quotes, but it does not exist"
    if full.suffix == ".py":
        spec = importlib.util.spec_from_file_location(full.stem, full)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    if full.suffix == ".json":
        return json.loads(full.read_text(encoding="utf-8"))
    return full.read_text(encoding="utf-8")


def one(records, **match):
    """The single record whose fields equal ``match``."""
    found = [r for r in records if all(r.get(k) == v for k, v in match.items())]
    assert len(found) == 1, f"{len(found)} records match {match}"
    return found[0]


def endpoint(model, updates):
    return one(load(UPTRAIN)["endpoints"], model=model, total_updates=updates)["test"]["mean"]


def short_machine(name):
    return " ".join(w for w in re.sub(r"\((?:R|TM)\)", "", name).split() if w not in ("Processor", "CPU"))


def environment_record(data):
    """'machine, N threads, commit X[, dirty tree][, loaded machine | load not recorded]' from a file
    with an ``environment`` record (the benchmarks, the quickstart report)."""
    env, config = data["environment"], data.get("config") or {}
    on_gpu = config.get("device") == "cuda" or "capability" in env
    machine = env.get("cuda_device") or env.get("device") if on_gpu else env["cpu_model"]
    threads = next(t for t in (config.get("threads"), data.get("threads"), env.get("threads"),
                               env.get("torch_default_threads")) if isinstance(t, int))
    commit = env["commit"]
    fields = [short_machine(machine), f"{threads} thread{'s' * (threads != 1)}", f"commit {commit[:7]}"]
    if commit.endswith("-dirty"):
        fields.append("dirty tree")
    loads, cores = env.get("load_average"), env.get("usable_cpus")
    if not loads or not cores:
        fields.append("load not recorded")
    elif loads[0] > cores:
        fields.append("loaded machine")
    return ", ".join(fields)


def provenance_record(data):
    """The seed studies' record: machine, threads, the commits of their runs, the 1-minute loads."""
    p = data["provenance"]
    commits = " and ".join(c[:7] for c in sorted(p["commits"]))
    return (f"{p['cpu_model']}, {p['threads']} thread{'s' * (p['threads'] != 1)}, commits {commits}, "
            f"1-minute load {p['load_1min']['min']:.2f}-{p['load_1min']['max']:.2f}")


def roberta_mini_record(data):
    m = data["machine"]
    return f"{m['cpu']}, {m['threads']} thread{'s' * (m['threads'] != 1)}, commit {m['commit']}, load not recorded"


def bible_record(data):
    assert "environment" not in data and "machine" not in data["settings"]
    return "machine, threads and commit not recorded"


QUICKSTART = "docs/quickstart/results.json"
GSA_SEEDS = "docs/gsa/seeds.json"
BIBLE = "docs/mt_quality/compare_bible.json"
BIBLE_GSA = "docs/gsa/bible_mt_seeds/compare_bible.json"
ROBERTA_MINI = "docs/roberta_mini/results.json"
UPTRAIN = "docs/uptraining/results.json"
TRANSFER = "docs/uptraining/transfer_results.json"
ROBERTA_TRANSFER = ("docs/roberta_mini/transfer/results.json", "docs/roberta_mini/transfer/seed2/results.json")
CPU_DECODE = "docs/benchmarks/cpu/decode.json"
H100_DECODE = "docs/benchmarks/h100/decode.json"
H100_SELFCHECK = "docs/benchmarks/h100/selfcheck.json"
H200_PEERS = "docs/benchmarks/h200_2026-11-28_peers/{}/peer_timing.json"
H200_DECODE_GRAPH = "docs/benchmarks/h200_2026-11-28_decode_graph/cuda_graph/decode.json"
HOST_TIME = "docs/gpu_host/host.json"
KERNELS = "docs/gpu_kernels/kernels.json"
KERNELS_TRITON36 = "docs/gpu_kernels/triton36/kernels.json"

TESTING = "docs/testing.md"
LM_PAPER = "scripts/lm/collect_lm_results.py"
MT_PAPER = "scripts/mt/collect_results.py"
GLUE_PAPER = "scripts/roberta/collect_glue.py"

CAPTION_RECORD = {QUICKSTART: environment_record, CPU_DECODE: environment_record, H100_DECODE: environment_record,
                  GSA_SEEDS: provenance_record, UPTRAIN: provenance_record, ROBERTA_MINI: roberta_mini_record,
                  BIBLE: bible_record, BIBLE_GSA: bible_record}


def caption_record(path):
    """What a caption must say after the link to ``path`` (its .md twin, or the .json itself)."""
    return CAPTION_RECORD[path](load(path))


def linked(path):
    md = Path(path).with_suffix(".md")
    return str(md) if (ROOT / md).is_file() else path


# ----------------------------------------------------------------------------- what each cell is
def lm(row, split="test", context=0):
    return lambda m: m.PAPER[row][(split, context)]


def decode(path, method, n, field):
    return lambda d: one(d["results"], method=method, N=n)[field]


def glue(name, memory):
    return lambda m: next(r[2] for r in m.PAPER_ROWS if r[:2] == (name, memory))


def seed_mean(model, field):
    return lambda d: one(d["rows"], model=model)["test"][field]


CELLS = {
    "Table 2a: WikiText-103, 16 layers": {
        ("BASE", "paper, test ppl"): (LM_PAPER, lm("base"), "{:.1f}"),
        ("BASE", "paper, test ppl, context 480"): (LM_PAPER, lm("base", context=480), "{:.1f}"),
        ("ABC_MLP, n = 64", "paper, test ppl"): (LM_PAPER, lm("abc_n64"), "{:.1f}"),
        ("ABC_MLP, n = 64", "paper, test ppl, context 480"): (LM_PAPER, lm("abc_n64", context=480), "{:.1f}"),
    },
    "Table 2b: WikiText-103, 32 layers": {
        ("BASE", "paper, test ppl"): (LM_PAPER, lm("base_32l", context=256), "{:.1f}"),
        ("ELU / RFA / T2R", "paper, test ppl"): (
            LM_PAPER, lambda m: tuple(m.PAPER[r][("test", 256)] for r in ("elu_32l", "rfa_32l", "t2r_32l")),
            "{:.1f} / {:.1f} / {:.1f}"),
        ("ABC_MLP, n = 64", "paper, test ppl"): (LM_PAPER, lm("abc_n64_32l", context=256), "{:.1f}"),
    },
    "Table 3a: WMT14 EN-DE": {
        ("BASE", "paper, test BLEU"): (MT_PAPER, lambda m: m.PAPER_3A[("softmax", None, None)], "{:.1f}"),
        ("ABC_MLP 32/8", "paper, test BLEU"): (MT_PAPER, lambda m: m.PAPER_3A[("abc", 32, 8)], "{:.1f}"),
    },
    "Table 3b: IWSLT14 ES-EN documents": {
        ("BASE", "paper, test BLEU"): (MT_PAPER, lambda m: m.PAPER_3B[("softmax", None, None)], "{:.1f}"),
        ("ABC_MLP 128/64", "paper, test BLEU"): (MT_PAPER, lambda m: m.PAPER_3B[("abc", 128, 64)], "{:.1f}"),
    },
    "Table 4: RoBERTa-base, GLUE dev": {
        ("RoBERTa-Ours", "paper, MNLI / QNLI / QQP / SST-2"): (
            GLUE_PAPER, glue("RoBERTa-Ours (paper)", "-"), "{:.1f} / {:.1f} / {:.1f} / {:.1f}"),
        ("ABC_MLP, n = 64", "paper, MNLI / QNLI / QQP / SST-2"): (
            GLUE_PAPER, glue("ABC_MLP (paper)", "64"), "{:.1f} / {:.1f} / {:.1f} / {:.1f}"),
        ("ABC_MLP, n = 128", "paper, MNLI / QNLI / QQP / SST-2"): (
            GLUE_PAPER, glue("ABC_MLP (paper)", "128"), "{:.1f} / {:.1f} / {:.1f} / {:.1f}"),
    },
    "Table 5: memory sizes, WMT14 dev": {
        ("ABC_MLP 32/8", "paper, dev BLEU"): (MT_PAPER, lambda m: m.PAPER_5[(32, 8)], "{:.1f}"),
        ("ABC_MLP 64/64", "paper, dev BLEU"): (MT_PAPER, lambda m: m.PAPER_5[(64, 64)], "{:.1f}"),
    },
    "Table 7: ABC variants, WMT14": {
        ("BASE", "paper, test BLEU"): (MT_PAPER, lambda m: m.PAPER_7[("softmax", None, None, None)], "{:.1f}"),
        ("MLP-exp 32/8", "paper, test BLEU"): (MT_PAPER, lambda m: m.PAPER_7[("abc", 32, 8, None)], "{:.1f}"),
        ("MLP-sigmoid 32/8", "paper, test BLEU"): (
            MT_PAPER, lambda m: m.PAPER_7[("abc-sigmoid", 32, 8, None)], "{:.1f}"),
    },
    "Figures 1-2: greedy decoding, WMT-base sizes": {
        **{(label, column): (path, decode(path, method, n, field), fmt)
           for label, path, n in (("CPU, N = 256", CPU_DECODE, 256), ("CPU, N = 2,048", CPU_DECODE, 2048),
                                  ("H100, N = 512", H100_DECODE, 512), ("H100, N = 2,048", H100_DECODE, 2048))
           for column, method, field, fmt in (
               ("softmax, ms per step", "softmax", "ms_per_step", "{:.1f}"),
               ("ABC 32/8, ms per step", "abc", "ms_per_step", "{:.1f}"),
               ("softmax cache, MiB", "softmax", "state_mib", "{:.1f}"),
               ("ABC state, MiB", "abc", "state_mib", "{:.1f}"))},
    },
    "Quickstart LM": {
        (label, column): (QUICKSTART, lambda d, m=model, f=field: one(d["rows"], model=m)[f], fmt)
        for label, model in (("softmax", "transformer_lm (softmax)"), ("ABC-64", "abc_lm_small (ABC)"))
        for column, field, fmt in (("params", "params", "{:,}"), ("valid ppl", "valid_ppl", "{:.2f}"),
                                   ("test ppl", "test_ppl", "{:.2f}"), ("training, s", "train_seconds", "{}"))
    },
    "GSA, 3 seeds": {
        (label, column): (GSA_SEEDS, seed_mean(model, field), "{:.2f}")
        for label, model in (("softmax", "softmax"), ("ABC-64", "abc"), ("GSA-64", "gsa"))
        for column, field in (("test ppl, mean", "mean"), ("lowest", "min"), ("highest", "max"))
    },
    "Bible ES-EN translation, 2 seeds": {
        (label, column): (path, lambda d, m=model, f=field, k=key: d["seed_means"][m][f][k], fmt)
        for label, path, model in (("softmax", BIBLE, "softmax"), ("ABC_MLP 32/8", BIBLE, "abc_32_8"),
                                   ("GSA 8 (causal), softmax cross", BIBLE_GSA, "gsa_causal_8"))
        for column, field, key, fmt in (("test BLEU, mean", "bleu_at", "600", "{:.2f}"),
                                        ("valid loss, mean", "valid_loss_at", "600", "{:.3f}"))
    },
    "Table 4 in miniature": {
        (label, column): (ROBERTA_MINI, lambda d, m=model, f=field: d["models"][m][f], fmt)
        for label, model in (("softmax, pretrained 500 updates", "softmax"), ("ABC, converted", "abc_converted"),
                             ("ABC, converted + 125 MLM updates", "abc_continued"),
                             ("ABC from scratch, 625 MLM updates", "abc_scratch"))
        for column, field, fmt in (("MLM valid ppl", "mlm_valid_ppl", "{:.2f}"), ("dev acc.", "dev_accuracy", "{:.1f}"),
                                   ("test acc.", "test_accuracy", "{:.1f}"))
    },
    "Uptraining, 2 seeds": {
        ("ABC-64", "converted at 300, continued 100"): (
            UPTRAIN, lambda d: endpoint("ABC-64, converted + 100 continued", 400), "{:.2f}"),
        ("ABC-64", "from scratch"): (UPTRAIN, lambda d: endpoint("ABC-64, from scratch", 400), "{:.2f}"),
        ("GSA-64", "converted at 300, continued 100"): (
            UPTRAIN, lambda d: endpoint("GSA-64, converted + 100 continued", 400), "{:.2f}"),
        ("GSA-64", "from scratch"): (UPTRAIN, lambda d: endpoint("GSA-64, from scratch", 400), "{:.2f}"),
    },
}
# Tables of words and links: no figure in any cell.
FIGURE_FREE = {"", "feature"}
