"""The README's prose figures (``tests/recipes/test_readme_figures.py``): ``PROSE`` binds each
figure of the status box and of the two commands to the file it is read from, its field (a
function of the file's parsed content) and the text around it. Pure: reads files.
"""

import re

from readme_figures_helpers import (
    H100_DECODE,
    H100_SELFCHECK,
    H200_DECODE_GRAPH,
    H200_PEERS,
    HOST_TIME,
    KERNELS,
    KERNELS_TRITON36,
    QUICKSTART,
    ROBERTA_TRANSFER,
    TESTING,
    TRANSFER,
    UPTRAIN,
    endpoint,
    load,
    one,
)


def selfcheck_ratios(d):
    ratios = [t["abc triton"] / t["sdpa causal"] for t in d["timings"]]
    return min(ratios), max(ratios)


def suite_run_with_venv(text):
    match = re.search(r"\(([\d,]+) passed, .*?about (\d+) minutes with the venv\)", text, re.S)
    assert match, "docs/testing.md no longer records the two-process run with the venv"
    return match.group(1), match.group(2)


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
    (KERNELS, lambda d: (f"spills: {spills}" if (spills := half_precision_spills(d)) else triton_version(d),),
     "under the GPU runs' Triton 3.6 or under {}: checked on CPU"),
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
