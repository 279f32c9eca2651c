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

Trains each case for a few updates with fairseq.trainer.Trainer on random tokens (model, criterion
and Adam from fairseq's own training flags; --fp16 on CUDA by default), each in a fresh process;
the size flags and --lm-args / --mt-args shrink the models for CPU runs. Details: docs/benchmarks.md."""
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
    cli.add_flags(parser, ("--cases", None, list(CASES), f"architectures to train, from: {', '.join(CASES)}",
                           {"nargs": "+", "choices": list(CASES), "metavar": "CASE"}),
                  ("--tokens-per-batch", cli.positive_int, DEFAULT_TOKENS_PER_BATCH, "target tokens per update, in "
                   "sequences of each case's length (at least one); the same batch for ABC and its softmax pair"),
                  ("--batch", cli.positive_int, None, "instead of --tokens-per-batch: sequences per update"),
                  ("--lm-length", cli.positive_int, 512, "tokens per LM sample"),
                  ("--mt-length", cli.positive_int, 64, "source and target tokens per MT sentence pair (</s> in)"),
                  ("--vocab", cli.positive_int, None, f"dictionary size (default: {DEFAULT_VOCAB['lm']} for the LMs, "
                   f"{DEFAULT_VOCAB['mt']} for MT); a small one needs smaller LM cutoffs in --lm-args"),
                  *((flag, cli.positive_int, None, f"override the {what}") for flag, what in (
                      ("--layers", "architecture's layers (MT: encoder and decoder each)"),
                      ("--embed-dim", "model dimension"), ("--heads", "attention heads"), ("--ffn-dim", "FFN size"))),
                  ("--lm-args", None, "", "more fairseq-train flags for the LM cases, one shell-quoted string"),
                  ("--mt-args", None, "", "more fairseq-train flags for the MT cases, one shell-quoted string"))
    cli.add_run_flags(parser, "update", repeats=10, warmup=3, max_seconds=600.0, repeats_flag="--updates",
                      dtypes=("float32", "float16"), dtype_default=None,
                      dtype_help="float16 = fairseq's --fp16 (its --bf16 means TPU; default: float16 on cuda, else "
                                 "float32)")
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


MODEL_KEYS = ("layers", "embed_dim", "heads", "ffn_dim", "dtype", "seed")


def measurements(args: argparse.Namespace) -> List[Measurement]:
    """One worker run per case, in --cases order."""
    items = []
    for case in args.cases:
        kind = CASES[case][0]
        length = args.lm_length if kind == "lm" else args.mt_length
        batch = args.batch or max(1, args.tokens_per_batch // length)
        params = {key: getattr(args, key) for key in MODEL_KEYS}
        params.update(arch=case, kind=kind, batch=batch, length=length, vocab=args.vocab or DEFAULT_VOCAB[kind],
                      model_args=getattr(args, f"{kind}_args"))
        items.append(Measurement(f"{case} batch={batch} x {length}", f"{__package__}.train_model:build_case", params,
                                 {"method": case, "kind": kind, "N": length, "batch": batch}))
    return items


def derive(row: dict, seconds: Optional[float]) -> None:
    if seconds is not None:
        row.update(update_s=seconds, ms_per_update=seconds * 1e3, tokens_per_s=row["batch"] * row["N"] / seconds)


def check_targets(rows: Dict[str, dict]) -> List[dict]:
    """Per pair: ABC's training throughput at least 0.85x softmax's (rows by case)."""
    return [compare(f"{case} trains at >= {TARGET_SPEED}x {reference}'s throughput", rows.get(case),
                    rows.get(reference), "update_s", TARGET_SPEED, True, (case, reference))
            for case, (_, reference) in CASES.items() if reference is not None]


def attention_cell(row: dict) -> str:
    """ABC's attention modules in short (mode and memory size), or softmax."""
    modules = (row.get("info") or {}).get("attention") or []
    abc = [m.split("(", 1)[1].rstrip(")") for m in modules if m.startswith("ABC")]
    short = [", ".join(p for p in m.split(", ") if p.startswith(("mode", "memory"))) for m in abc]
    return "; ".join(short) or ("softmax" if modules else "-")


def loss_cell(row: dict) -> str:
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
        "- One update = `fairseq.trainer.Trainer.train_step([sample])`: forward, backward, loss scaling, Adam step; "
        "random tokens, no padding. speed / memory vs softmax: ABC's tokens/s / its pair's, ABC's peak / its pair's.",
        report.peak_note("model on the device", "update, optimizer state included", memory_probes),
        f"- default vocabulary: {DEFAULT_VOCAB['lm']} (LMs), {DEFAULT_VOCAB['mt']} (MT); loss: fairseq's logged "
        f"training loss (base 2), first and last update. The {TARGET_SPEED}x target is for a GPU with `--fp16` at "
        "the architectures' own sizes.",
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
    # ABC rows against their softmax pair (same N); the softmax rows have none.
    relative=[(lambda row: CASES[row["method"]][1], (("tokens_per_s", "speed_vs_softmax", False),
                                                     ("peak_mib", "memory_vs_softmax", False)))],
    plot=Plot("bars", (Panel("", "training tokens / s (higher is faster)", "tokens_per_s"),
                       Panel("", "peak memory increase, MiB (lower is smaller)", "peak_mib")),
              title=lambda c: f"training through fairseq's trainer, {c['dtype']}, {c['device']}",
              group=lambda row: row["method"]),
)
