"""``generate`` suite: end-to-end translation through fairseq's own ``SequenceGenerator`` (what
``fairseq-generate`` runs); ``generate_model`` is the worker side. The methods of one (workload,
model size) run adjacent, so that a drift of the shared machine hits them alike."""

import argparse
from typing import List, Optional

from . import cli, report
from .decode import METHOD_NOTES, METHODS, add_size_flags, check_sizes, sizes_note, sizes_of
from .generate_model import bible_lengths
from .report import compare
from .suite import Column, Measurement, Panel, Plot, Suite

DESCRIPTION = """\
End-to-end generation speed with fairseq's SequenceGenerator: softmax vs ABC, RFA, T2R.

Translates the Bible test set's sentence lengths (beam search and greedy) and long outputs (greedy,
N tokens) at a small and the paper's size, random weights. Details: docs/benchmarks.md."""
MODEL_SIZES = {  # name -> (encoder layers, decoder layers, dim, heads, FFN, vocabulary)
    "small": (3, 3, 256, 4, 1024, 8192),
    "paper": (6, 6, 512, 8, 2048, 32768),
    "tiny": (1, 1, 32, 2, 64, 64),
}
PROFILED = ("softmax", "abc")
# The sizes as the help and the report describe them (small, paper, tiny: the order of MODEL_SIZES).
SIZE_NOTES = {name: f"{e}+{d} layers, dim {dim}, {h} heads, FFN {f}, vocabulary {v}" + extra
              for (name, (e, d, dim, h, f, v)), extra in zip(MODEL_SIZES.items(),
                                                             ("", " (WMT base, Table 10)", " (smoke tests)"))}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sizes = {"choices": list(MODEL_SIZES)}
    cli.add_flags(parser, ("--sizes", None, ["small", "paper"], "model sizes of the sentence workloads (" + "; ".join(
                           f"{k}: {v}" for k, v in SIZE_NOTES.items()) + ")", dict(sizes, nargs="+")),
                  cli.methods_flag(METHODS, list(METHODS), "models to measure"),
                  ("--sentences", cli.positive_int, 48, "first K sentence pairs of the Bible test set"),
                  ("--sentence-batch", cli.positive_int, 16, "sentences per batch"),
                  ("--beams", cli.positive_int, [5, 1], "beam sizes of the sentence workloads (1: greedy); none: "
                   "skip them", {"nargs": "*", "metavar": "BEAM"}),
                  ("--greedy-sizes", None, ["small"], "model sizes that also run the greedy sentence workload",
                   dict(sizes, nargs="*")),
                  ("--lengths", cli.positive_int, [512, 1024, 2048], "long outputs: source length = output tokens "
                   "= N, greedy; none: skip them", {"nargs": "*", "metavar": "N"}),
                  ("--long-batch", cli.positive_int, 16, "sentences per long-output batch"),
                  ("--long-sizes", None, ["small"], "model sizes of the long-output workload", dict(sizes, nargs="+")))
    add_size_flags(parser)
    parser.add_argument("--profile", action="store_true", help="also keep a cProfile of one untimed generate of "
                        "softmax and abc in every beam-search sentence case (top entries by own time)")
    cli.add_run_flags(parser, "generate", repeats=1, warmup=0, max_seconds=1800.0,
                      repeats_help="timed generates per case and round after the untimed memory generate; 0: time "
                                   "the memory generate itself")
    parser.set_defaults(threads=1, rounds=2)
    cli.add_output_flags(parser, "generate")


def validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    check_sizes(args, parser)
    if not args.beams and not args.lengths:
        parser.error("--beams and --lengths are both empty: nothing to measure")
    if args.beams:
        available = len(bible_lengths(None))
        if args.sentences > available:
            parser.error(f"--sentences {args.sentences}: the Bible test set has {available} sentence pairs")


def cases(args: argparse.Namespace) -> List[dict]:
    """(workload, size, beam, N) of every case group, in the order they run."""
    groups = []
    for beam in args.beams:
        for size in args.sizes:
            if beam == 1 and size not in args.greedy_sizes:
                continue
            groups.append({"workload": "sentences", "size": size, "beam": beam, "N": None})
    for length in args.lengths:
        for size in args.long_sizes:
            groups.append({"workload": "long", "size": size, "beam": 1, "N": length})
    return groups


def case_label(case: dict) -> str:
    return f"long N={case['N']} {case['size']}" if case["workload"] == "long" else \
        f"sentences beam {case['beam']} {case['size']}"


def measurements(args: argparse.Namespace) -> List[Measurement]:
    """One worker run per (case, method), the methods of a case adjacent."""
    sizes = sizes_of(vars(args))
    items = []
    for case in cases(args):
        enc, dec, dim, heads, ffn, vocab = MODEL_SIZES[case["size"]]
        params = dict(encoder_layers=enc, decoder_layers=dec, embed_dim=dim, heads=heads, ffn_dim=ffn, vocab=vocab,
                      dtype=args.dtype, sizes=sizes, seed=args.seed, beam=case["beam"], workload=case["workload"],
                      sentences=args.sentences, batch=args.sentence_batch)
        if case["workload"] == "long":
            params.update(length=case["N"], batch=args.long_batch)
        profile = args.profile and case["workload"] == "sentences" and case["beam"] > 1
        for method in args.methods:
            items.append(Measurement(f"{method} {case_label(case)}", f"{__package__}.generate_model:build_case",
                                     dict(params, method=method, profile=profile and method in PROFILED),
                                     {"case": case_label(case), **case, "method": method}))
    return items


def derive(row: dict, seconds: Optional[float]) -> None:
    tokens = (row.get("info") or {}).get("tokens")
    if seconds is not None and tokens:
        row.update(generate_s=seconds, tokens_per_s=tokens / seconds)


def _load(row: dict) -> str:
    info = row.get("info") or {}
    loads = [info[k][0] for k in ("load_average_start", "load_average_end") if info.get(k)]
    return "-" if not loads else "-".join(f"{value:.1f}" for value in loads)


def header(config: dict, rows: List[dict], env: dict) -> str:
    sizes, rounds = set(config["sizes"]) | set(config["long_sizes"]), config.get("rounds", 1)
    timing = ("the memory generate timed" if config["repeats"] == 0 else
              f"median of {config['repeats']} timed generate(s) after {config['warmup']} warmup")
    timing += f", {rounds} interleaved rounds pooled (median)" if rounds > 1 else ", one round"
    return (f"{config['dtype']} on {config['device']}, **{report.threads_of(rows)} thread(s)**; {timing}; "
            f"torch {env['torch']}; CPU {env['cpu_model']}; commit {env.get('commit', '-')}; "
            f"{env['date']}; load average at start {env.get('load_average')}.\n\n"
            "Model sizes: " + "; ".join(f"{k}: {v}" for k, v in SIZE_NOTES.items() if k in sizes) +
            f". Cross / causal sizes: {sizes_note(config, config['methods'])}.")


def notes(config: dict, rows: List[dict], memory_probes: List[str]) -> List[str]:
    workloads, lines = {row["workload"] for row in rows}, []
    if "sentences" in workloads:
        lines.append(f"- sentences: the first {config['sentences']} pairs of the Bible test set (Spanish words + eos "
                     f"in, the batch's longest English sentence + eos out), sorted by length, batches of "
                     f"{config['sentence_batch']}, left-padded; random weights and symbols.")
    if "long" in workloads:
        lines.append(f"- long N: {config['long_batch']} random sources of N tokens, N output tokens each, greedy.")
    lines += ["- tokens/s: tokens of the best hypotheses / the whole generate; x softmax, x RFA: tokens/s over the "
              "reference's in the same case.",
              f"- peak MiB: peak memory increase during the first, untimed generate in a fresh process (probe: "
              f"{', '.join(memory_probes) or '-'}); load: the 1-minute load average at the case's start and end."]
    return lines + report.method_notes(METHOD_NOTES, config["methods"])


def profiles(rows: List[dict]) -> List[str]:
    lines = []
    for row in rows:
        top = (row.get("info") or {}).get("profile")
        if top:
            lines += ["", f"### Profile: {row['method']}, {row['case']} (cProfile, top by own time)", "", "```"]
            lines += top + ["```"]
    return lines


def check_targets(rows: List[dict]) -> List[dict]:
    """ABC vs softmax at sentence length (beam 5) and at N=1024, ABC vs RFA wherever both ran."""
    keyed = {(row["method"], row["case"]): row for row in rows}
    targets = []
    for case in dict.fromkeys(row["case"] for row in rows):
        beam5 = case.startswith("sentences beam 5")
        if beam5 or case.startswith("long N=1024"):
            bound = 1.0 if beam5 else 2.0
            targets.append(compare(f"abc >= {bound:g}x softmax tokens/s, {case}", keyed.get(("abc", case)),
                                   keyed.get(("softmax", case)), "generate_s", bound, True, ("abc", "softmax")))
        if ("rfa", case) in keyed and (beam5 or case.startswith("long")):
            targets.append(compare(f"abc >= rfa tokens/s, {case}", keyed.get(("abc", case)),
                                   keyed.get(("rfa", case)), "generate_s", 1.0, True, ("abc", "rfa")))
    return targets


SUITE = Suite(
    name="generate", description=DESCRIPTION, add_arguments=add_arguments, validate=validate,
    measurements=measurements, derive=derive, progress="{tokens_per_s:.1f} tokens/s, peak {peak_mib:.1f} MiB",
    title=lambda config: "End-to-end generation (fairseq SequenceGenerator), softmax vs " + ", ".join(
        m.upper() for m in config["methods"] if m != "softmax"),
    header=header,
    columns=(Column("case", "case", right=False), Column("method", "method", right=False),
             Column("tokens/s", "tokens_per_s", ".1f", status=True), Column("x softmax", "speed_vs_softmax", "x"),
             Column("x RFA", "speed_vs_rfa", "x"), Column("generate s", "generate_s", ".2f"),
             Column("tokens", lambda row: (row.get("info") or {}).get("tokens")),
             Column("peak MiB", "peak_mib", ".1f"), Column("load", _load)),
    notes=notes, targets=lambda rows, config: check_targets(rows), appendix=profiles, group="case",
    relative=[(reference, (("tokens_per_s", f"speed_vs_{reference}", False),)) for reference in ("softmax", "rfa")],
    plot=Plot("lines", (Panel("SequenceGenerator, greedy, long outputs", "tokens per second (log)", "tokens_per_s"),
                        Panel("Peak memory increase while generating", "MiB (log)", "peak_mib")),
              title=lambda c: f"fairseq SequenceGenerator, batch {c['long_batch']}, {c['dtype']}, {c['device']}",
              xlabel="output tokens N (log2)", label=lambda row: f"{row['method']} ({row['size']})",
              select=lambda row: row["workload"] == "long"),
)
