"""Worker side of the ``generate`` suite: fairseq's own ``SequenceGenerator`` on a random-weight
translation model (``decode_model.build_model``). Workloads: ``sentences``, the first K pairs of the
Bible test set (``data_prep/bible_es_en/test.{es,en}``): a source of its Spanish sentence's words +
eos, sorted by length, cut into left-padded batches as ``fairseq-generate`` batches them, each
batch decoding its longest English sentence's words (``min_len`` keeps eos out until then, so every
method does the same work); ``long``: ``batch`` random sources of N tokens, N output tokens each,
then eos. One call translates every batch; ``info["tokens"]`` counts the best hypotheses' tokens."""

import cProfile
import io
import os
import pstats
import re
import time
from pathlib import Path
from typing import List, Optional, Tuple

from ._worker import Case
from .cli import DTYPES
from .decode_model import build_model
from .synthetic import synthetic_dictionary

REPO = Path(__file__).resolve().parents[1]
BIBLE = REPO / "data_prep" / "bible_es_en"
PROFILE_ENTRIES = 25


def bible_lengths(count: Optional[int], directory: Path = BIBLE) -> List[Tuple[int, int]]:
    """(source, target) tokens (words + eos) of the first ``count`` test sentences (None: all)."""
    source = (directory / "test.es").read_text(encoding="utf-8").splitlines()
    target = (directory / "test.en").read_text(encoding="utf-8").splitlines()
    pairs = [(len(es.split()) + 1, len(en.split()) + 1) for es, en in zip(source, target) if es.strip() and en.strip()]
    if count is not None and len(pairs) < count:
        raise ValueError(f"--sentences {count}: the Bible test set has only {len(pairs)} sentence pairs")
    return pairs[:count]


def sentence_batches(pairs: List[Tuple[int, int]], batch: int) -> List[List[Tuple[int, int]]]:
    ordered = sorted(pairs)
    return [ordered[i:i + batch] for i in range(0, len(ordered), batch)]


def random_sources(lengths: List[int], dictionary, generator, device):
    """Left-padded [B, max length] sources of random symbols ending in eos, and their lengths."""
    import torch

    longest = max(lengths)
    tokens = torch.full((len(lengths), longest), dictionary.pad(), dtype=torch.long)
    for row, length in enumerate(lengths):
        tokens[row, longest - length:] = torch.randint(dictionary.nspecial, len(dictionary), (length,),
                                                       generator=generator)
        tokens[row, -1] = dictionary.eos()
    return tokens.to(device), torch.tensor(lengths, device=device)


def workload(params: dict, dictionary, device) -> List[Tuple[dict, int]]:
    """[(sample, tokens to generate before eos: the batch's longest English sentence, or N)]."""
    import torch

    generator = torch.Generator().manual_seed(params.get("seed", 0))
    if params["workload"] == "long":
        plan = [[(params["length"], params["length"])] * params["batch"]]
    else:
        plan = sentence_batches(bible_lengths(params["sentences"]), params["batch"])
    batches = []
    for pairs in plan:
        src_tokens, src_lengths = random_sources([s for s, _ in pairs], dictionary, generator, device)
        sample = {"net_input": {"src_tokens": src_tokens, "src_lengths": src_lengths}}
        batches.append((sample, max(t for _, t in pairs) - (params["workload"] != "long")))
    return batches


def profile_top(run, entries: int = PROFILE_ENTRIES) -> List[str]:
    """The ``entries`` functions with the most own time in one call of ``run``."""
    profiler = cProfile.Profile()
    profiler.runcall(run)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(entries)
    lines = text.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    prefix = re.compile(r"\S*" + re.escape(os.sep + "site-packages" + os.sep) + "|" + re.escape(str(REPO) + os.sep))
    return [prefix.sub("", line) for line in lines[start:] if line.strip()]


def build_case(params: dict, device) -> Case:
    """The worker's entry point: model and batches ready; ``run`` translates them all, one fairseq
    SequenceGenerator per batch (its tokens, then eos)."""
    import torch
    from fairseq.sequence_generator import SequenceGenerator

    dictionary = synthetic_dictionary(params["vocab"])
    batches = workload(params, dictionary, device)
    longest = max(max(int(s["net_input"]["src_lengths"].max()), steps) for s, steps in batches)
    model = build_model(dict(params, length=longest + 2), dictionary)
    model = model.to(device=device, dtype=DTYPES[params["dtype"]])
    generators = [(SequenceGenerator([model], dictionary, beam_size=params["beam"], max_len_a=0, max_len_b=steps,
                                     min_len=steps), sample) for sample, steps in batches]
    info = {"batches": len(batches), "sentences": sum(int(s["net_input"]["src_lengths"].numel()) for s, _ in batches),
            "source_tokens": sum(int(s["net_input"]["src_lengths"].sum()) for s, _ in batches),
            "parameters": sum(p.numel() for p in model.parameters()),
            "load_average_start": list(os.getloadavg())}

    def run() -> None:
        with torch.no_grad():  # as fairseq-generate; the best hypotheses' tokens, eos included
            info["tokens"] = sum(int(hypos[0]["tokens"].numel()) for generator, sample in generators
                                 for hypos in generator.generate([model], sample))
        info["load_average_end"] = list(os.getloadavg())

    if params.get("profile"):  # untimed, after ``prime`` made the lazy imports and thread pools
        begin = time.perf_counter()
        info["profile"] = profile_top(run)
        info["profile_s"] = time.perf_counter() - begin
    return Case(run, info)


def prime(params: dict, device) -> None:
    """One short sentence through the generator, so thread pools exist before the baseline."""
    primer = dict(params, workload="long", length=4, batch=1, profile=False)
    build_case(primer, device).run()
