"""``train`` suite: training throughput and peak memory through fairseq's own trainer, ABC
against softmax with the same dimensions and batch (issue 14); ``train_model`` is the worker side.
The memory update's baseline is the model on the device before the optimizer exists, so the
optimizer state counts; tokens per second = target tokens per update / the median update time."""

import argparse
import shlex
from typing import Dict, List, Optional

from . import cli, report
from .report import compare
from .suite import Column, Measurement, Panel, Plot, Suite

DESCRIPTION = """\
Whole-model training throughput through fairseq's trainer: ABC vs softmax LM and MT models.

Trains each case for a few updates with fairseq.trainer.Trainer on random tokens (a synthetic
dictionary: nothing is downloaded), each in a fresh process: abc_lm_wiki103 vs
transformer_lm_wiki103 on --lm-length token samples, abc_transformer_wmt_en_de vs
transformer_wmt_en_de on --mt-length token sentence pairs, --tokens-per-batch (or --batch sequences)
per update for both.
Model, criterion and optimizer (Adam) are built from fairseq's own training flags, --fp16 on CUDA
by default. Reports target tokens per second, peak memory increase of the first update and ABC
relative to its softmax pair. The size flags (--layers, --embed-dim, --heads, --ffn-dim, --vocab)
and --lm-args / --mt-args (more fairseq flags, e.g. smaller adaptive cutoffs) shrink the models for
CPU runs. Prints a Markdown table and PASS/FAIL targets (informational: the exit code is 0 unless
the benchmark itself crashes) and writes train.json, train.md and train.png to --out-dir."""
# Case -> (kind, the softmax case it is compared with, or None for a reference).
CASES = {
    "abc_lm_wiki103": ("lm", "transformer_lm_wiki103"),
    "transformer_lm_wiki103": ("lm", None),
    "abc_transformer_wmt_en_de": ("mt", "transformer_wmt_en_de"),
    "transformer_wmt_en_de": ("mt", None),
}
DEFAULT_VOCAB = {"lm": 267744, "mt": 32768}  # WikiText-103's word vocabulary; a joined WMT BPE
TARGET_SPEED = 0.85  # ABC's training throughput relative to softmax's
DEFAULT_TOKENS_PER_BATCH = 4096  # fairseq's WikiText-103 and WMT recipes' --max-tokens per GPU


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES), metavar="CASE",
                        help=f"architectures to train, from: {', '.join(CASES)}")
    parser.add_argument("--tokens-per-batch", type=cli.positive_int, default=DEFAULT_TOKENS_PER_BATCH,
                        help="target tokens per update, divided into sequences of each case's length (rounded "
                             "down, at least one): 8 x 512 LM samples, 64 x 64 MT pairs by default; the same "
                             "batch for ABC and its softmax pair")
    parser.add_argument("--batch", type=cli.positive_int, default=None,
                        help="instead of --tokens-per-batch: sequences (LM samples, MT sentence pairs) per update")
    parser.add_argument("--lm-length", type=cli.positive_int, default=512, help="tokens per LM sample")
    parser.add_argument("--mt-length", type=cli.positive_int, default=64,
                        help="source and target tokens per MT sentence pair (</s> included)")
    parser.add_argument("--vocab", type=cli.positive_int, default=None,
                        help=f"dictionary size (default: {DEFAULT_VOCAB['lm']} for the LMs, WikiText-103's, "
                             f"{DEFAULT_VOCAB['mt']} for MT); the LMs' adaptive cutoffs (20000,60000) need more "
                             "symbols than their last cutoff, so a small --vocab needs --model-args cutoffs")
    for flag, what in (("--layers", "architecture's layers (MT: encoder and decoder each)"),
                       ("--embed-dim", "model dimension"), ("--heads", "attention heads"),
                       ("--ffn-dim", "FFN hidden size")):
        parser.add_argument(flag, type=cli.positive_int, default=None, help=f"override the {what}")
    parser.add_argument("--lm-args", default="",
                        help="more fairseq-train flags for the LM cases, one shell-quoted string, e.g. "
                             "'--adaptive-input-cutoff 20,40 --adaptive-softmax-cutoff 20,40' with a small --vocab")
    parser.add_argument("--mt-args", default="",
                        help="more fairseq-train flags for the MT cases, one shell-quoted string")
    cli.add_run_flags(parser, "update", repeats=10, warmup=3, max_seconds=600.0, repeats_flag="--updates",
                      dtypes=("float32", "float16"), dtype_default=None,
                      dtype_help="training precision: float16 = fairseq's --fp16 (fairseq 0.12's --bf16 means TPU, "
                                 "so bfloat16 is not offered; default: float16 on cuda, float32 on cpu)")
    parser.add_argument("--fp16", dest="dtype", action="store_const", const="float16",
                        help="the same as --dtype float16")
    cli.add_output_flags(parser, "train", cpu_memory_probe="tensors")


def validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    if args.batch and args.tokens_per_batch != DEFAULT_TOKENS_PER_BATCH:
        parser.error("--batch and --tokens-per-batch set the same thing: give one of them")
    on_cuda = args.device.startswith("cuda")
    if args.dtype is None:
        args.dtype = "float16" if on_cuda else "float32"
    if args.dtype != "float32" and not on_cuda:
        parser.error(f"--dtype {args.dtype} (fairseq's --fp16 trainer) needs --device cuda")
    cli.check_model_flags(args, parser)
    for flag in ("lm_args", "mt_args"):
        try:
            shlex.split(getattr(args, flag))
        except ValueError as exc:
            parser.error(f"--{flag.replace('_', '-')} {getattr(args, flag)!r}: {exc}")


def shape_of(args: argparse.Namespace, kind: str):
    """(sequences per update, tokens per sequence) of a case kind."""
    length = args.lm_length if kind == "lm" else args.mt_length
    batch = args.batch if args.batch else max(1, args.tokens_per_batch // length)
    return batch, length


MODEL_KEYS = ("layers", "embed_dim", "heads", "ffn_dim", "dtype", "seed")


def measurements(args: argparse.Namespace) -> List[Measurement]:
    """One worker run per case, in --cases order."""
    items = []
    for case in args.cases:
        kind = CASES[case][0]
        batch, length = shape_of(args, kind)
        params = {key: getattr(args, key) for key in MODEL_KEYS}
        params.update(arch=case, kind=kind, batch=batch, length=length, vocab=args.vocab or DEFAULT_VOCAB[kind],
                      model_args=getattr(args, f"{kind}_args"))
        # ``N`` is the sequence length, for the failure notes.
        items.append(Measurement(f"{case} batch={batch} x {length}", f"{__package__}.train_model:build_case", params,
                                 {"method": case, "kind": kind, "N": length, "batch": batch}))
    return items


def derive(row: dict, seconds: Optional[float]) -> None:
    if seconds is not None:
        row.update(update_s=seconds, ms_per_update=seconds * 1e3, tokens_per_s=row["batch"] * row["N"] / seconds)


def check_targets(rows: Dict[str, dict]) -> List[dict]:
    """Per pair: ABC's training throughput at least 0.85x softmax's (rows by case; informational)."""
    targets = []
    for case, (_, reference) in CASES.items():
        if reference is not None:
            targets.append(compare(f"{case} trains at >= {TARGET_SPEED}x {reference}'s throughput",
                                   rows.get(case), rows.get(reference), "update_s", TARGET_SPEED, True,
                                   (case, reference)))
    return targets


def attention_cell(row: dict) -> str:
    """ABC's attention modules in short (mode and memory size), or softmax."""
    modules = (row.get("info") or {}).get("attention") or []
    abc = [m.split("(", 1)[1].rstrip(")") for m in modules if m.startswith("ABC")]
    short = [", ".join(p for p in m.split(", ") if p.startswith(("mode", "memory"))) for m in abc]
    return "; ".join(short) or ("softmax" if modules else "-")


def loss_cell(row: dict) -> str:
    """The logged training loss of the first and the last update."""
    losses = (row.get("info") or {}).get("losses") or []
    return f"{losses[0]:.2f} -> {losses[-1]:.2f}" if losses else "-"


def header(config: dict, rows: List[dict], env: dict) -> str:
    sizes = ", ".join(f"{flag} {config[key]}" for flag, key in (("layers", "layers"), ("dim", "embed_dim"),
                                                                 ("heads", "heads"), ("FFN", "ffn_dim"))
                      if config.get(key)) or "the architectures' own sizes"
    extra_flags = "".join(f"; {kind.upper()} flags `{config[kind + '_args']}`" for kind in ("lm", "mt")
                          if config.get(kind + "_args"))
    return (f"{sizes}; vocabulary {config.get('vocab') or 'per kind (see notes)'}{extra_flags}; "
            f"{report.machine_note(config, rows, env, report.timing(config, ' updates'))}")


def notes(config: dict, rows: List[dict], memory_probes: List[str]) -> List[str]:
    return [
        "- One update = `fairseq.trainer.Trainer.train_step([sample])` with the model, criterion and Adam "
        "built by fairseq's training parser (`--fp16` for half precision): forward, backward, "
        "loss scaling and the optimizer step. Random tokens, no padding.",
        "- tokens/s = target tokens per update / median update time; speed vs softmax = ABC's tokens/s / "
        "its softmax pair's (above 1 is faster); memory vs softmax = ABC's peak / softmax's (below 1 is smaller).",
        report.peak_note("model on the device", "update, optimizer state included", memory_probes),
        f"- default vocabulary: {DEFAULT_VOCAB['lm']} for the LMs (WikiText-103), {DEFAULT_VOCAB['mt']} for MT "
        "(a joined BPE); loss: fairseq's logged training loss (base 2) of the first and last update.",
        f"- The {TARGET_SPEED}x target is for a GPU with `--fp16` at the architectures' own sizes; on a CPU or "
        "with smaller models it says nothing about the paper's claim.",
    ]


SUITE = Suite(
    name="train", description=DESCRIPTION, add_arguments=add_arguments, validate=validate,
    measurements=measurements, derive=derive, progress="{tokens_per_s:.0f} tokens/s, peak {peak_mib:.1f} MiB",
    title=lambda config: "Training throughput through fairseq's trainer: ABC vs softmax", header=header,
    columns=(Column("case", "method", right=False),
             Column("sequences x tokens", lambda row: f"{row['batch']} x {row['N']}"),
             Column("attention", attention_cell, right=False),
             Column("ms / update", "ms_per_update", ".1f", status=True), Column("tokens/s", "tokens_per_s", ".0f"),
             Column("speed vs softmax", "speed_vs_softmax", "x"), Column("peak MiB", "peak_mib", ".1f"),
             Column("memory vs softmax", "memory_vs_softmax", "x"), Column("loss first -> last", loss_cell)),
    notes=notes, targets=lambda rows, config: check_targets({row["method"]: row for row in rows}),
    # ABC rows against their softmax pair (same N: an LM or MT pair shares its length); the pairs have none.
    relative=[(lambda row: CASES[row["method"]][1], (("tokens_per_s", "speed_vs_softmax", False),
                                                     ("peak_mib", "memory_vs_softmax", False)))],
    plot=Plot("bars", (Panel("", "training tokens / s (higher is faster)", "tokens_per_s"),
                       Panel("", "peak memory increase, MiB (lower is smaller)", "peak_mib")),
              title=lambda c: f"training through fairseq's trainer, {c['dtype']}, {c['device']}",
              group=lambda row: row["method"]),
)
