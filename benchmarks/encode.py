"""``encode`` suite: RoBERTa-base text encoding, softmax (fused and unfused) against Linformer and
ABC with the same dimensions (the paper's Table 4, efficiency columns); ``encode_model`` is the
worker side. Every sequence is exactly N tokens (no padding)."""

import argparse
from typing import Dict, List, Optional, Tuple

from . import cli, report
from .report import compare
from .suite import Column, Measurement, Panel, Plot, Suite

DESCRIPTION = """\
Text-encoding speed and peak memory: RoBERTa-base encoder, softmax vs Linformer vs ABC.

Runs batches of random sequences of each of --lengths tokens (the same tokens per batch at every
length) through the encoder (random weights, eval mode, inference mode), each (method, N) in a
fresh process: softmax (fairseq's RoBERTa on the fused kernel), softmax-unfused (the same model on
fairseq's own attention path, the paper's baseline), Linformer and ABC with each of --memories
slots, same dimensions. Reports sequences per second, peak memory increase and both relative to
softmax and softmax-unfused. Prints a Markdown table and PASS/FAIL targets (informational: the
exit code is 0 unless the benchmark itself crashes) and writes encode.json, encode.md and
encode.png to --out-dir."""
DEFAULT_LENGTHS = [512, 2048, 4096]
KINDS = ("softmax", "softmax-unfused", "linformer", "abc")
KIND_NOTES = {
    "softmax": "fairseq's RoBERTa encoder (softmax attention, fairseq's MultiheadAttention); with torch 2 "
               "its inference goes through F.multi_head_attention_forward and the fused "
               "scaled_dot_product_attention kernel, which never holds the [B, H, N, N] weights.",
    "softmax-unfused": "the same model with fairseq's MultiheadAttention on its own bmm / softmax / bmm "
                       "path (`skip_embed_dim_check`): the [B, H, N, N] attention weights are materialised, "
                       "as every softmax implementation did before fused kernels (the paper's baseline).",
    "linformer": "`abc_roberta --encoder-attn linformer --encoder-memory n`: a learned n x N projection "
                 "shared by all layers compresses keys and values.",
    "abc": "`abc_roberta --encoder-attn abc --encoder-memory n`: ABC_MLP, W_phi shared by all layers.",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lengths", "--length", type=cli.positive_int, nargs="+", default=DEFAULT_LENGTHS,
                        metavar="N", help="tokens per sequence N, one or more")
    parser.add_argument("--batch", type=cli.positive_int, default=16,
                        help="sequences per batch at the shortest N; every N encodes the same tokens per "
                             "batch (batch x shortest N), in batch x shortest N // N sequences")
    parser.add_argument("--memories", type=cli.positive_int, nargs="+", default=[64, 128], metavar="n",
                        help="memory sizes of Linformer and ABC")
    parser.add_argument("--methods", nargs="+", choices=list(KINDS), default=list(KINDS), metavar="METHOD",
                        help=f"attention kinds to measure, from: {', '.join(KINDS)}")
    cli.add_model_flags(parser, 50265, "vocabulary size (RoBERTa's is 50265)", {"--layers": 12},
                        embed_dim=768, heads=12, ffn_dim=3072)
    cli.add_run_flags(parser, "forward", repeats=5, warmup=1, max_seconds=600.0)
    # Models whose peaks are a few percent apart need a probe that does not vary by 10-20% between
    # runs: the peak of bytes held in tensors (CUDA's own probe is the same kind).
    cli.add_output_flags(parser, "encode", cpu_memory_probe="tensors")


def validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    cli.check_model_flags(args, parser)
    if args.batch * args.lengths[0] < args.lengths[-1]:
        parser.error(f"--batch {args.batch} x the shortest of --lengths ({args.lengths[0]}) is fewer tokens "
                     f"than one sequence of the longest ({args.lengths[-1]})")


def batch_at(args: argparse.Namespace, length: int) -> int:
    """Sequences per batch at N = ``length``: the same tokens per batch at every N."""
    return args.batch * args.lengths[0] // length


def method_list(args: argparse.Namespace) -> List[Tuple[str, str, Optional[int]]]:
    """(label, kind, memory) for every measured model: softmax once, the others per memory size."""
    methods = []
    for kind in args.methods:
        if kind.startswith("softmax"):
            methods.append((kind, kind, None))
        else:
            methods += [(f"{kind}-{n}", kind, n) for n in args.memories]
    return methods


MODEL_KEYS = ("vocab", "layers", "embed_dim", "heads", "ffn_dim", "dtype")


def measurements(args: argparse.Namespace) -> List[Measurement]:
    """One worker run per (method, N), N outermost; tokens [batch, N]."""
    items = []
    for length in args.lengths:
        batch = batch_at(args, length)
        for label, kind, memory in method_list(args):
            params = {key: getattr(args, key) for key in MODEL_KEYS}
            params.update(kind=kind, memory=memory, length=length, batch=batch)
            items.append(Measurement(f"{label} batch={batch} N={length}", f"{__package__}.encode_model:build_case",
                                     params, {"method": label, "kind": kind, "memory": memory, "N": length,
                                              "batch": batch}))
    return items


def derive(row: dict, seconds: Optional[float]) -> None:
    if seconds is not None:
        row.update(encode_s=seconds, ms_per_batch=seconds * 1e3, sequences_per_s=row["batch"] / seconds,
                   tokens_per_s=row["batch"] * row["N"] / seconds)


def header(config: dict, rows: List[dict], env: dict) -> str:
    return (f"{config['batch'] * config['lengths'][0]} tokens per batch (batch {config['batch']} x "
            f"{config['lengths'][0]} tokens at the shortest N); {config['layers']} layers, dim {config['embed_dim']}, "
            f"{config['heads']} heads, FFN {config['ffn_dim']}, vocabulary {config['vocab']}; random weights; "
            f"{report.machine_note(config, rows, env, report.timing(config))}")


def notes(config: dict, rows: List[dict], memory_probes: List[str]) -> List[str]:
    return [
        "- One forward = `model(tokens, features_only=True)` under `torch.inference_mode()`: embeddings and "
        "every encoder layer, no LM head.",
        "- speed vs X = X's time / method time (above 1 is faster); memory vs X = method peak / X's peak "
        "(below 1 is smaller); X = softmax (fused) or softmax-unfused at the same N.",
        report.peak_note("model and tokens exist", "forward", memory_probes),
    ] + report.method_notes(KIND_NOTES, (row["kind"] for row in rows))


def check_targets(rows: Dict[str, dict]) -> List[dict]:
    """ABC-64 faster than softmax and using less peak memory, and than softmax-unfused when it was
    measured, at one N (rows by method; informational): PASS, FAIL, or SKIP when abc-64 or the
    reference was not measured (the reference failing is a SKIP, abc-64 failing a FAIL)."""
    targets = []
    references = ["softmax"] + (["softmax-unfused"] if "softmax-unfused" in rows else [])
    for reference in references:
        for name, key, faster, bound in ((f"abc-64 encodes faster than {reference}", "encode_s", True, 1 + 1e-9),
                                         (f"abc-64 peak memory below {reference}'s", "peak_mib", False, 1 - 1e-9)):
            targets.append(compare(name, rows.get("abc-64"), rows.get(reference), key, bound, faster,
                                   ("abc-64", reference)))
    return targets


def check_length_targets(rows: Dict[Tuple[str, int], dict]) -> List[dict]:
    """Issue 15's targets (rows by (method, N)): at 512 ABC-64 >= 1.15x faster than and at most
    0.6x the memory of softmax-unfused; at 4,096 ABC-64 faster than fused softmax."""
    def at(n: int, name: str, reference: str, key: str, bound: float, faster: bool) -> dict:
        return compare(name, rows.get(("abc-64", n)), rows.get((reference, n)), key, bound, faster,
                       (f"abc-64 at N={n}", reference))

    return [at(512, "abc-64 >= 1.15x faster than softmax-unfused at N=512", "softmax-unfused", "encode_s",
               1.15, True),
            at(512, "abc-64 peak memory <= 0.6x softmax-unfused's at N=512", "softmax-unfused", "peak_mib",
               0.6, False),
            at(4096, "abc-64 faster than fused softmax at N=4096", "softmax", "encode_s", 1 + 1e-9, True)]


def targets(rows: List[dict], config: dict) -> List[dict]:
    """At the shortest N, then issue 15's at N = 512 and 4,096."""
    shortest = min((row["N"] for row in rows), default=None)
    return (check_targets({row["method"]: row for row in rows if row["N"] == shortest})
            + check_length_targets({(row["method"], row["N"]): row for row in rows}))


SUITE = Suite(
    name="encode", description=DESCRIPTION, add_arguments=add_arguments, validate=validate,
    measurements=measurements, derive=derive, progress="{ms_per_batch:.1f} ms/batch, peak {peak_mib:.1f} MiB",
    title=lambda config: "Text encoding, RoBERTa-base encoder: softmax vs Linformer vs ABC", header=header,
    # Table 4's layout: speed and memory relative to softmax, fused and unfused.
    columns=(Column("N", "N"), Column("batch", "batch"), Column("method", "method", right=False),
             Column("n", "memory", "d"), Column("ms / batch", "ms_per_batch", ".1f", status=True),
             Column("sequences/s", "sequences_per_s", ".2f"),
             *(Column(f"{what} vs {ref}", f"{what}_vs_{ref}", "x") for ref in ("softmax", "unfused")
               for what in ("speed", "memory")),
             Column("peak MiB", "peak_mib", ".1f")),
    notes=notes, targets=targets,
    relative=[(reference, (("encode_s", f"speed_vs_{suffix}", True), ("peak_mib", f"memory_vs_{suffix}", False)))
              for reference, suffix in (("softmax", "softmax"), ("softmax-unfused", "unfused"))],
    plot=Plot("bars", (Panel("", "speed relative to softmax (higher is faster)", "speed_vs_softmax"),
                       Panel("", "peak memory relative to softmax (lower is smaller)", "memory_vs_softmax")),
              title=lambda c: (f"encoding {c['batch'] * c['lengths'][0]} tokens per batch, {c['layers']} layers, "
                               f"dim {c['embed_dim']}, {c['dtype']}, {c['device']}"),
              baseline=1.0),
)
