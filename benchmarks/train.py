"""``train`` suite: whole-model training throughput and peak memory through fairseq's own trainer,
ABC against softmax with the same dimensions and batch (issue 14).

Pairs: ``abc_lm_wiki103`` against ``transformer_lm_wiki103`` (samples of ``--lm-length`` = 512
tokens) and ``abc_transformer_wmt_en_de`` against ``transformer_wmt_en_de`` (``--mt-length``
source and target tokens per pair). Each case runs in a fresh process (``train_model`` is the
worker side): fairseq's training parser builds the model, criterion and optimizer as
``fairseq-train`` would (``--fp16`` on CUDA by default), then one untimed update measures the peak
memory increase over the baseline (model on the device, optimizer not yet built: its state is
part of the first update), ``--warmup`` untimed and ``--updates`` timed updates follow; the median
update time gives tokens per second (target tokens per update / time).

Outputs in --out-dir: train.json, train.md (the printed report) and train.png.
"""

import argparse
from typing import Dict, List

from . import cli, driver
from .plot import pyplot
from .probes import MIB, median
from .report import compare, failure_notes, format_targets, markdown_table, num, ratio, status_cell, threads_of

NAME = "train"
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
    """The suite's flags."""
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
    parser.add_argument("--layers", type=cli.positive_int, default=None,
                        help="override the architecture's layers (MT: encoder and decoder each)")
    parser.add_argument("--embed-dim", type=cli.positive_int, default=None, help="override the model dimension")
    parser.add_argument("--heads", type=cli.positive_int, default=None, help="override the attention heads")
    parser.add_argument("--ffn-dim", type=cli.positive_int, default=None, help="override the FFN hidden size")
    parser.add_argument("--lm-args", default="",
                        help="more fairseq-train flags for the LM cases, one shell-quoted string, e.g. "
                             "'--adaptive-input-cutoff 20,40 --adaptive-softmax-cutoff 20,40' with a small --vocab")
    parser.add_argument("--mt-args", default="",
                        help="more fairseq-train flags for the MT cases, one shell-quoted string")
    parser.add_argument("--updates", dest="repeats", metavar="UPDATES", type=cli.positive_int, default=10,
                        help="timed updates per case, after the untimed memory update and --warmup; the "
                             "median is reported")
    parser.add_argument("--rounds", type=cli.positive_int, default=1,
                        help="run every case this many times, round after round, each in a fresh process, and "
                             "pool the timed updates (shared machines drift; memory is the first round's)")
    parser.add_argument("--warmup", type=cli.non_negative_int, default=3,
                        help="untimed updates before the timed ones (after the memory update)")
    parser.add_argument("--dtype", choices=["float32", "float16"], default=None,
                        help="training precision: float16 = fairseq's --fp16 (fairseq 0.12's --bf16 means TPU, "
                             "so bfloat16 is not offered; default: float16 on cuda, float32 on cpu)")
    parser.add_argument("--fp16", dest="dtype", action="store_const", const="float16",
                        help="the same as --dtype float16")
    parser.add_argument("--device", default="cpu",
                        help="torch device: cpu, or cuda / cuda:I (memory from torch.cuda.max_memory_allocated)")
    parser.add_argument("--threads", type=cli.positive_int, default=None,
                        help="torch intra-op threads in each worker (default: torch's own default)")
    parser.add_argument("--seed", type=cli.non_negative_int, default=0, help="random seed of weights and batches")
    parser.add_argument("--max-seconds", type=cli.positive_float, default=600.0,
                        help="longest one update may take; a case over it is reported as timeout")
    cli.add_output_flags(parser, NAME, cpu_memory_probe="tensors")


def validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Checks that involve several flags or the machine; errors name the flag."""
    import shlex

    args.cases = list(dict.fromkeys(args.cases))
    if args.batch and args.tokens_per_batch != DEFAULT_TOKENS_PER_BATCH:
        parser.error("--batch and --tokens-per-batch set the same thing: give one of them")
    cli.check_device_and_memory(args, parser)
    on_cuda = args.device.startswith("cuda")
    if args.dtype is None:
        args.dtype = "float16" if on_cuda else "float32"
    if args.dtype != "float32" and not on_cuda:
        parser.error(f"--dtype {args.dtype} (fairseq's --fp16 trainer) needs --device cuda")
    if args.embed_dim and args.heads and args.embed_dim % args.heads:
        parser.error(f"--embed-dim {args.embed_dim} must be divisible by --heads {args.heads}")
    if args.vocab is not None and args.vocab < 8:
        parser.error(f"--vocab {args.vocab} is too small: fairseq reserves 4 special symbols")
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


def measurements(args: argparse.Namespace) -> List[driver.Measurement]:
    """One worker run per case, in --cases order."""

    def one(case: str) -> driver.Measurement:
        kind = CASES[case][0]
        batch, length = shape_of(args, kind)
        params = {key: getattr(args, key) for key in MODEL_KEYS}
        params.update(arch=case, kind=kind, batch=batch, length=length, vocab=args.vocab or DEFAULT_VOCAB[kind],
                      model_args=getattr(args, f"{kind}_args"))
        return driver.Measurement(f"{case} batch={batch} x {length}",
                                  driver.worker_spec(args, f"{__package__}.train_model:build_case", params),
                                  lambda result: make_row(case, kind, batch, length, result))

    return [one(case) for case in args.cases]


def make_row(case: str, kind: str, batch: int, length: int, result: dict) -> dict:
    """One JSON/table row from a worker result (``N`` is the sequence length, for the notes)."""
    row = {"method": case, "kind": kind, "N": length, "batch": batch, **result}
    times = result.get("times_s") or []
    if row.get("status") == "ok" and times:
        seconds = median(times)
        row.update(update_s=seconds, ms_per_update=seconds * 1e3, tokens_per_s=batch * length / seconds)
    if "peak_bytes" in result:
        row["peak_mib"] = result["peak_bytes"] / MIB
    return row


def describe(row: dict) -> str:
    return f"{row['tokens_per_s']:.0f} tokens/s, peak {row.get('peak_mib', 0):.1f} MiB"


def add_pair_ratios(rows: List[dict]) -> None:
    """ABC rows get speed_vs_softmax (tokens/s ratio) and memory_vs_softmax against their pair."""
    by_case = {row["method"]: row for row in rows}
    for row in rows:
        reference = by_case.get(CASES[row["method"]][1] or "") or {}
        for key, name in (("tokens_per_s", "speed_vs_softmax"), ("peak_mib", "memory_vs_softmax")):
            a, b = row.get(key), reference.get(key)
            row[name] = a / b if a is not None and b else None


def check_targets(rows: Dict[str, dict]) -> List[dict]:
    """Per pair: ABC's training throughput at least 0.85x softmax's (rows by case; informational)."""
    targets = []
    for case, (_, reference) in CASES.items():
        if reference is not None:
            targets.append(compare(f"{case} trains at >= {TARGET_SPEED}x {reference}'s throughput",
                                   rows.get(case), rows.get(reference), "update_s", TARGET_SPEED, True,
                                   (case, reference)))
    return targets


HEADERS = ("case", "sequences x tokens", "attention", "ms / update", "tokens/s", "speed vs softmax", "peak MiB",
           "memory vs softmax", "loss first -> last")


def attention_cell(row: dict) -> str:
    """ABC's attention modules in short (mode and memory size), or softmax."""
    modules = (row.get("info") or {}).get("attention") or []
    abc = [m.split("(", 1)[1].rstrip(")") for m in modules if m.startswith("ABC")]
    short = [", ".join(p for p in m.split(", ") if p.startswith(("mode", "memory"))) for m in abc]
    return "; ".join(short) or ("softmax" if modules else "-")


def loss_cell(row: dict) -> str:
    losses = (row.get("info") or {}).get("losses") or []
    return f"{losses[0]:.2f} -> {losses[-1]:.2f}" if losses else "-"


def report(rows: List[dict], env: dict, config: dict, memory_probes: List[str]) -> str:
    """The Markdown report: header, table, notes."""
    note_of, failures = failure_notes(rows)
    table_rows = [(
        row["method"], f"{row['batch']} x {row['N']}", attention_cell(row),
        status_cell(row, num(row.get("ms_per_update"), ".1f"), note_of, i), num(row.get("tokens_per_s"), ".0f"),
        ratio(row.get("speed_vs_softmax")), num(row.get("peak_mib"), ".1f"), ratio(row.get("memory_vs_softmax")),
        loss_cell(row),
    ) for i, row in enumerate(rows)]
    sizes = ", ".join(f"{flag} {config[key]}" for flag, key in (("layers", "layers"), ("dim", "embed_dim"),
                                                                 ("heads", "heads"), ("FFN", "ffn_dim"))
                      if config.get(key)) or "the architectures' own sizes"
    extra_flags = "".join(f"; {kind.upper()} flags `{config[kind + '_args']}`" for kind in ("lm", "mt")
                          if config.get(kind + "_args"))
    lines = [
        "# Training throughput through fairseq's trainer: ABC vs softmax",
        "",
        f"{sizes}; vocabulary {config.get('vocab') or 'per kind (see notes)'}"
        f"{extra_flags}; "
        f"{config['dtype']} on {config['device']}; median of {config['repeats']} updates after "
        f"{config['warmup']} warmup{driver.rounds_note(config)}; threads {threads_of(rows)}; "
        f"torch {env['torch']}; CPU {env['cpu_model']}.",
        "",
        markdown_table(HEADERS, table_rows, right_align=(False, True, False) + (True,) * 6),
        "",
        "Notes:",
        "",
        "- One update = `fairseq.trainer.Trainer.train_step([sample])` with the model, criterion and Adam "
        "built by fairseq's training parser (`--fp16` for half precision): forward, backward, "
        "loss scaling and the optimizer step. Random tokens, no padding.",
        "- tokens/s = target tokens per update / median update time; speed vs softmax = ABC's tokens/s / "
        "its softmax pair's (above 1 is faster); memory vs softmax = ABC's peak / softmax's (below 1 is smaller).",
        f"- peak MiB: peak memory increase over the baseline (model on the device) during the first, "
        f"untimed update, optimizer state included (probe: {', '.join(memory_probes) or '-'}).",
        f"- default vocabulary: {DEFAULT_VOCAB['lm']} for the LMs (WikiText-103), {DEFAULT_VOCAB['mt']} for MT "
        "(a joined BPE); loss: fairseq's logged training loss (base 2) of the first and last update.",
        f"- The {TARGET_SPEED}x target is for a GPU with `--fp16` at the architectures' own sizes; on a CPU or "
        "with smaller models it says nothing about the paper's claim.",
    ]
    return "\n".join(lines + failures)


def save_plot(path: str, rows: List[dict], title: str) -> None:
    """Tokens per second and peak memory, one bar per case."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    names = [row["method"] for row in rows]
    for ax, key, ylabel in ((axes[0], "tokens_per_s", "training tokens / s (higher is faster)"),
                            (axes[1], "peak_mib", "peak memory increase, MiB (lower is smaller)")):
        values = [row.get(key) or 0.0 for row in rows]
        bars = ax.bar(range(len(rows)), values, color=["C1" if CASES[n][1] else "C0" for n in names])
        for bar in bars:
            ax.annotate(f"{bar.get_height():.4g}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def summarise(rows: List[dict], env: dict, config: dict, memory_probes: List[str]) -> driver.Summary:
    """Pair ratios, the report, the targets and the bar chart."""
    add_pair_ratios(rows)
    targets = check_targets({row["method"]: row for row in rows})
    text = report(rows, env, config, memory_probes) + "\n\n" + format_targets(targets) + "\n"
    title = f"training through fairseq's trainer, {config['dtype']}, {config['device']}"
    return driver.Summary(text, targets, lambda path: save_plot(path, rows, title))
