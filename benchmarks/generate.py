"""End-to-end generation speed with fairseq's SequenceGenerator: softmax vs ABC, RFA, T2R.

What fairseq-generate runs, on the decode suite's random-weight models. Workloads: sentences, the
first K pairs of the Bible test set (data_prep/bible_es_en): sources of their Spanish words + eos,
sorted by length, in left-padded batches, each batch generating its longest English sentence's
words (min_len keeps eos out until then: every method does the same work), beam search and greedy;
long: random sources of N tokens, N output tokens each, greedy. The methods of one case run
adjacent, so that a drift of the shared machine hits them alike."""

import argparse
from pathlib import Path
from typing import List, Optional, Tuple

from . import flags
from .decode import METHODS, add_size_flags, build_translation_model, check_sizes, sizes_note, sizes_of
from .harness import Case, Measurement, Suite
from .report import Column, Panel, Plot, compare

BIBLE = Path(__file__).resolve().parents[1] / "data_prep" / "bible_es_en"
MODEL_SIZES = {  # name -> (encoder layers, decoder layers, dim, heads, FFN, vocabulary, note)
    "small": (3, 3, 256, 4, 1024, 8192, ""),
    "paper": (6, 6, 512, 8, 2048, 32768, " (WMT base, Table 10)"),
    "tiny": (1, 1, 32, 2, 64, 64, " (smoke tests)"),
}
SIZE_NOTES = {name: f"{e}+{d} layers, dim {dim}, {h} heads, FFN {f}, vocabulary {v}{note}"
              for name, (e, d, dim, h, f, v, note) in MODEL_SIZES.items()}


def bible_lengths(count: Optional[int], directory: Path = BIBLE) -> List[Tuple[int, int]]:
    """(source, target) tokens (words + eos) of the first ``count`` test sentences (None: all)."""
    source = (directory / "test.es").read_text(encoding="utf-8").splitlines()
    target = (directory / "test.en").read_text(encoding="utf-8").splitlines()
    pairs = [(len(es.split()) + 1, len(en.split()) + 1) for es, en in zip(source, target) if es.strip() and en.strip()]
    return pairs[:count]


def sentence_batches(pairs: List[Tuple[int, int]], batch: int) -> List[List[Tuple[int, int]]]:
    ordered = sorted(pairs)
    return [ordered[i:i + batch] for i in range(0, len(ordered), batch)]


def workload(params: dict, dictionary, device) -> List[Tuple[dict, int]]:
    """[(sample of left-padded random sources ending in eos, tokens to generate before eos)]."""
    import torch

    generator = torch.Generator().manual_seed(params.get("seed", 0))
    long = params["workload"] == "long"
    plan = [[(params["length"], params["length"])] * params["batch"]] if long else \
        sentence_batches(bible_lengths(params["sentences"]), params["batch"])
    batches = []
    for pairs in plan:
        lengths = [source for source, _ in pairs]
        tokens = torch.full((len(lengths), max(lengths)), dictionary.pad(), dtype=torch.long)
        for row, length in enumerate(lengths):
            tokens[row, -length:] = torch.randint(dictionary.nspecial, len(dictionary), (length,), generator=generator)
        tokens[:, -1] = dictionary.eos()
        sample = {"net_input": {"src_tokens": tokens.to(device), "src_lengths": torch.tensor(lengths, device=device)}}
        batches.append((sample, max(target for _, target in pairs) - (not long)))
    return batches


def check_targets(rows: List[dict]) -> List[dict]:
    """ABC vs softmax at sentence length (beam 5) and at N=1024, ABC vs RFA wherever both ran."""
    keyed, targets = {(row["method"], row["case"]): row for row in rows}, []
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


class GenerateSuite(Suite):
    name, description, group = "generate", __doc__, "case"
    progress, call, baseline, cpu_peak = "{tokens_per_s:.1f} tokens/s", "generate", "model and batches exist", False
    tiny = {"workload": "long", "length": 4, "batch": 1}
    columns = (Column("case", "case", right=False), Column("method", "method", right=False),
               Column("tokens/s", "tokens_per_s", ".1f", status=True), Column("x softmax", "speed_vs_softmax", "x"),
               Column("x RFA", "speed_vs_rfa", "x"), Column("generate s", "generate_s", ".2f"),
               Column("tokens", lambda row: (row.get("info") or {}).get("tokens")),
               Column("peak MiB", "peak_mib", ".1f"))
    relative = [(reference, (("tokens_per_s", f"speed_vs_{reference}", False),)) for reference in ("softmax", "rfa")]
    plot = Plot("lines", (Panel("SequenceGenerator, greedy, long outputs", "tokens per second (log)", "tokens_per_s"),
                          Panel("Speed relative to softmax", "ratio (log)", "speed_vs_softmax")),
                xlabel="output tokens N (log2)", label=lambda row: f"{row['method']} ({row['size']})",
                select=lambda row: row["workload"] == "long")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        sizes = {"choices": list(MODEL_SIZES)}
        flags.add_flags(parser, ("--sizes", None, ["small", "paper"], "model sizes of the sentence workloads (" +
                                 "; ".join(f"{k}: {v}" for k, v in SIZE_NOTES.items()) + ")", dict(sizes, nargs="+")),
                        flags.methods_flag(METHODS, list(METHODS), "models to measure"),
                        ("--sentences", flags.positive_int, 48, "first K sentence pairs of the Bible test set"),
                        ("--sentence-batch", flags.positive_int, 16, "sentences per batch"),
                        ("--beams", flags.positive_int, [5, 1], "beam sizes of the sentence workloads (1: greedy); "
                         "none: skip them", {"nargs": "*", "metavar": "BEAM"}),
                        ("--greedy-sizes", None, ["small"], "model sizes that also run the greedy sentence workload",
                         dict(sizes, nargs="*")),
                        ("--lengths", flags.positive_int, [512, 1024, 2048], "long outputs: source length = output "
                         "tokens = N, greedy; none: skip them", {"nargs": "*", "metavar": "N"}),
                        ("--long-batch", flags.positive_int, 16, "sentences per long-output batch"),
                        ("--long-sizes", None, ["small"], "model sizes of the long-output workload",
                         dict(sizes, nargs="+")))
        add_size_flags(parser)
        flags.add_common_flags(parser, self, repeats=1, warmup=0, max_seconds=1800.0)
        parser.set_defaults(threads=1, rounds=2)

    def validate(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
        check_sizes(args, parser)
        if not args.beams and not args.lengths:
            parser.error("--beams and --lengths are both empty: nothing to measure")
        if args.beams and args.sentences > len(pairs := bible_lengths(None)):
            parser.error(f"--sentences {args.sentences}: the Bible test set has {len(pairs)} pairs")

    def measurements(self, args: argparse.Namespace) -> List[Measurement]:
        """One case per (workload, size, beam, N) and method, the methods of a case adjacent."""
        cases = [{"workload": "sentences", "size": size, "beam": beam, "N": None} for beam in args.beams
                 for size in args.sizes if beam > 1 or size in args.greedy_sizes]
        cases += [{"workload": "long", "size": size, "beam": 1, "N": n}
                  for n in args.lengths for size in args.long_sizes]
        items = []
        for case in cases:
            label = (f"long N={case['N']} {case['size']}" if case["workload"] == "long"
                     else f"sentences beam {case['beam']} {case['size']}")
            enc, dec, dim, heads, ffn, vocab, _ = MODEL_SIZES[case["size"]]
            params = dict(encoder_layers=enc, decoder_layers=dec, embed_dim=dim, heads=heads, ffn_dim=ffn,
                          vocab=vocab, dtype=args.dtype, sizes=sizes_of(vars(args)), seed=args.seed, beam=case["beam"],
                          workload=case["workload"], sentences=args.sentences, batch=args.sentence_batch)
            if case["workload"] == "long":
                params.update(length=case["N"], batch=args.long_batch)
            items += [Measurement(f"{method} {label}", dict(params, method=method),
                                  {"case": label, **case, "method": method}) for method in args.methods]
        return items

    def build_case(self, params: dict, device) -> Case:
        """Model and batches ready; the call translates every batch, one fairseq SequenceGenerator per
        batch (its tokens, then eos); ``info["tokens"]`` counts the best hypotheses' tokens."""
        import torch
        from fairseq.sequence_generator import SequenceGenerator

        from .fairseq_models import synthetic_dictionary

        batches = workload(params, synthetic_dictionary(params["vocab"]), device)
        longest = max(max(int(s["net_input"]["src_lengths"].max()), steps) for s, steps in batches)
        model, dictionary = build_translation_model(dict(params, length=longest + 2))
        model = model.to(device=device, dtype=flags.DTYPES[params["dtype"]])
        generators = [(SequenceGenerator([model], dictionary, beam_size=params["beam"], max_len_a=0,
                                         max_len_b=steps, min_len=steps), sample) for sample, steps in batches]
        info = {"batches": len(batches), "sentences": sum(len(s["net_input"]["src_lengths"]) for s, _ in batches),
                "source_tokens": sum(int(s["net_input"]["src_lengths"].sum()) for s, _ in batches),
                "parameters": sum(p.numel() for p in model.parameters())}

        def run() -> None:
            with torch.no_grad():  # as fairseq-generate; the best hypotheses' tokens, eos included
                info["tokens"] = sum(int(hypos[0]["tokens"].numel()) for generator, sample in generators
                                     for hypos in generator.generate([model], sample))

        return Case(run, info)

    def derive(self, row: dict, seconds: Optional[float]) -> None:
        tokens = (row.get("info") or {}).get("tokens")
        if seconds is not None and tokens:
            row.update(generate_s=seconds, tokens_per_s=tokens / seconds)

    def header(self, config: dict) -> str:
        sizes = set(config["sizes"]) | set(config["long_sizes"])
        return ("Model sizes: " + "; ".join(f"{k}: {v}" for k, v in SIZE_NOTES.items() if k in sizes) +
                f". Cross / causal sizes: {sizes_note(config, config['methods'])}. Batches: {config['sentence_batch']} "
                f"sentences, {config['long_batch']} long outputs.")

    def notes(self, config: dict, rows: List[dict]) -> List[str]:
        workloads, lines = {row["workload"] for row in rows}, []
        if "sentences" in workloads:
            lines.append(f"- sentences: the first {config['sentences']} pairs of the Bible test set (Spanish words + "
                         f"eos in, the batch's longest English sentence + eos out), sorted by length, batches of "
                         f"{config['sentence_batch']}, left-padded; random weights and symbols.")
        if "long" in workloads:
            lines.append(f"- long N: {config['long_batch']} random sources of N tokens, N output tokens each, greedy.")
        return lines + ["- tokens/s: tokens of the best hypotheses / the whole generate; x softmax, x RFA: tokens/s "
                        "over the reference's in the same case."]

    def targets(self, rows: List[dict], config: dict) -> List[dict]:
        return check_targets(rows)


SUITE = GenerateSuite()
