"""The README's figure bindings (``tests/recipes/test_readme_figures.py``): for every figure the
README shows, the file it is read from, the field (a function of the file's parsed content) and
the format. ``CELLS``: the cells of each README table, known by its first header cell;
``CAPTION_RECORD``: what a caption states of each file it draws on (machine, threads, commit),
built from the file's own fields; ``PROSE``: the figures of the status box and of the two
commands. The paper's figures are read from the collectors that print them beside ours
(``scripts/*/collect_*.py``). Pure: reads files.
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


def over_flash(data, N):
    """Our causal forward + backward's time over flash SDPA's at length N in a peer_timing file."""
    return one(data["results"], method="abc", N=N)["ms"] / one(data["results"], method="sdpa", N=N)["ms"]


def sequence_heads(data, N):
    """Sequences x heads at length N in a peer_timing file (batch = tokens // N)."""
    return data["config"]["tokens"] // N * data["config"]["heads"]


def start_gap(data, variant, stage):
    """The mean over seeds of a converted model's test perplexity over its source's, minus 1, in
    percent, before any LM update (transfer_results.json's start gaps)."""
    gaps = [g["gap"] for g in data["start_gaps"] if (g["variant"], g["stage"]) == (variant, stage)]
    return 100 * sum(gaps) / len(gaps)


def roberta_transfer(_):
    """The mini Table 4 with attention transfer, mean of its two seeds: transfer updates, the
    converted and transferred models' MLM valid perplexity over the softmax source's (percent,
    before any MLM update), and the transferred and softmax models' test accuracy."""
    runs = [load(path) for path in ROBERTA_TRANSFER]

    def mean(f):
        return sum(f(r) for r in runs) / len(runs)

    def gap(r, name):
        return 100 * (r["models"][name]["mlm_valid_ppl"] / r["models"]["softmax"]["mlm_valid_ppl"] - 1)

    assert len({r["transfer"]["updates"] for r in runs}) == 1
    return (runs[0]["transfer"]["updates"], len(runs), mean(lambda r: gap(r, "abc_converted")),
            mean(lambda r: gap(r, "abc_transferred")), mean(lambda r: r["models"]["abc_transferred"]["test_accuracy"]),
            mean(lambda r: r["models"]["softmax"]["test_accuracy"]))


def ahead_of_fla(data):
    """Whether ours is faster than fla's chunk_abc at every length of a peer_timing file."""
    return all(one(data["results"], method="abc", N=N)["ms"] < one(data["results"], method="fla-abc", N=N)["ms"]
               for N in data["config"]["lengths"])
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


def selfcheck_ratios(d):
    ratios = [t["abc triton"] / t["sdpa causal"] for t in d["timings"]]
    return min(ratios), max(ratios)


def suite_run_with_venv(text):
    match = re.search(r"\(([\d,]+) passed, .*?about (\d+) minutes with the venv\)", text, re.S)
    assert match, "docs/testing.md no longer records the two-process run with the venv"
    return match.group(1), match.group(2)


def host_row(data, op):
    return one(data["rows"], op=op)


def host_in_ops(data, op):
    """``tools.host_time``'s total for ``op`` in units of one small PyTorch op timed beside it."""
    return host_row(data, op)["total_us"] / host_row(data, "one PyTorch op")["total_us"]


def launch_in_ops(data):
    """(fewest, most) PyTorch ops' worth of host time per launch over the one-launch calls."""
    costs = [host_in_ops(data, op) for op in ("causal_abc_step", "causal_gsa_step", "abc_read")]
    return round(min(costs)), round(max(costs))


def triton_version(data):
    """The Triton a kernel report was compiled with, as major.minor."""
    return ".".join(data["triton"].split(".")[:2])


def half_precision_spills(data):
    """{(op, kernel, width): most bytes spilled} of the causal kernels that spill at the launcher's
    chunk on sm_80 or sm_90 with fp16 or bf16 inputs, in a kernel report."""
    spills = {}
    for r in data["kernels"]:
        if (r["op"] in ("causal_abc", "causal_gsa") and r["pick"] and r["arch"] in (80, 90)
                and r["dtype"] in ("fp16", "bf16") and r["spill_stores"]):
            key = (r["op"], r["kernel"], r["width"])
            spills[key] = max(spills.get(key, 0), r["spill_stores"])
    return spills


def the_one_spilling_kernel(data):
    """(width, bytes) of the only causal kernel spilling in half precision at the pick."""
    spills = half_precision_spills(data)
    assert len(spills) == 1, f"{len(spills)} kernels spill: {spills}"
    (_, _, width), spilled = next(iter(spills.items()))
    return width, spilled


# The figures of the status box and of the two commands: (file, field, the text in the README).
PROSE = [
    (H100_SELFCHECK, selfcheck_ratios, "took {:.1f}-{:.1f}x flash attention's time"),
    (H100_SELFCHECK, lambda d: (d["environment"]["date"][:10],), "one H100 session ({})"),
    (H100_SELFCHECK, lambda d: tuple(f(int(re.search(r"N=(\d+)", t["size"]).group(1)) for t in d["timings"])
                                     for f in (min, max)), "N = {:,} to {:,}"),
    (H100_DECODE, lambda d: (d["environment"]["date"][:10],), "one H100 session ({})"),
    (H100_DECODE, lambda d: tuple(one(d["results"], method="abc", N=n)["speed_vs_softmax"] for n in (512, 2048)),
     "greedy decoding at {:.2f}-{:.2f}x softmax's tokens/s"),
    (H200_PEERS.format("few"), lambda d: (d["environment"]["date"][:10],), "one H200 session ({})"),
    (H200_PEERS.format("few"), lambda d: (over_flash(d, 8192), sequence_heads(d, 8192)),
     "took {:.2f}x flash attention's time at N = 8,192 with {} sequence-heads"),
    (H200_PEERS.format("suite"), lambda d: (over_flash(d, 16384), sequence_heads(d, 16384)),
     "and {:.2f}x at N = 16,384 with {}"),
    (H200_PEERS.format("suite"), lambda d: ("ahead of" if ahead_of_fla(d) else "behind",),
     "{} fla's `chunk_abc` at every size measured"),
    (HOST_TIME, lambda d: (*launch_in_ops(d), host_in_ops(d, "causal_abc")),
     "one Triton launch costs the host as much as {}-{} PyTorch ops and a causal forward + backward about {:.0f}"),
    (HOST_TIME, lambda d: (host_in_ops(d, "decoder step, softmax") / host_in_ops(d, "decoder step, abc"),),
     "On the host an eager decoding step runs at {:.2f}x softmax's speed"),
    (KERNELS_TRITON36, lambda d: ("a" if half_precision_spills(d) else "no", triton_version(d)),
     "{} causal kernel spills registers at the launcher's chunk on sm_80 or sm_90 in half precision, "
     "64- or 128-wide heads, under the GPU runs' Triton {}"),
    (KERNELS, lambda d: (triton_version(d), *the_one_spilling_kernel(d)),
     "(under {} one {}-wide kernel spills {} bytes)"),
    (H200_DECODE_GRAPH, lambda d: tuple(one(d["results"], method="abc", N=n)["speed_vs_softmax"] for n in (256, 1024)),
     "the H200 decoded {:.1f}-{:.1f}x faster than softmax with the step in a CUDA graph"),
    (QUICKSTART, lambda d: tuple(one(d["rows"], model=m)["train_seconds"]
                                 for m in ("abc_lm_small (ABC)", "transformer_lm (softmax)")),
     "{} s and {} s of training"),
    (TESTING, suite_run_with_venv, "{} tests took about {} minutes with the venv build"),
    (UPTRAIN, lambda d: (endpoint("softmax, from scratch", 400),), "softmax from scratch: {:.2f}"),
    (TRANSFER, lambda d: (d["setting"]["pretrain_updates"], len(d["seeds"]), d["setting"]["transfer_updates"],
                          start_gap(d, "abc", "converted"), start_gap(d, "abc_transfer", "transferred"),
                          start_gap(d, "gsa", "converted"), start_gap(d, "gsa_transfer", "transferred"),
                          start_gap(d, "window_sink", "converted")),
     "On a source trained {:,} updates ({} seeds), attention transfer ({} updates) takes the converted "
     "model's test perplexity before any update from {:+.0f}% to {:+.0f}% of its source's (ABC-64; GSA-64: "
     "{:+.0f}% to {:+.0f}%), and a window of 64 tokens + 4 sinks with no training is at {:+.1f}%"),
    (ROBERTA_TRANSFER[0], roberta_transfer,
     "With attention transfer ({} updates of W_phi alone; {} seeds), the converted model's MLM valid perplexity "
     "before any MLM update goes from {:+.1f}% to {:+.1f}% of the softmax source's, and its fine-tuned test "
     "accuracy is {:.2f} (softmax {:.2f})"),
]
