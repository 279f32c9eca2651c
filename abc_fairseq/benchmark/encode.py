"""``encode`` subcommand: text-encoding speed and peak memory of a RoBERTa-base encoder, softmax
against Linformer and ABC with the same dimensions (the paper's text-encoding efficiency table).

Random weights (only speed and memory are measured), random tokens from a vocabulary of
``--vocab`` symbols, every sequence exactly ``--length`` tokens (no padding). For each method, in
a fresh process (``runner``):

1. build ``abc_roberta`` with ``--encoder-attn`` softmax (fairseq's RoBERTa, parameter for
   parameter), ``linformer`` or ``abc`` and ``--encoder-memory`` n, dropout 0, eval mode;
2. one untimed forward measures the peak memory increase over the baseline (model and input
   tokens exist), then ``--warmup`` untimed and ``--repeats`` timed forwards; the median is
   reported. A forward is ``model(tokens [B, N], features_only=True)`` under
   ``torch.inference_mode()``: embeddings and every encoder layer, no LM head.

Outputs in --out-dir: encode.json, encode.md (the printed report) and encode.png.
"""

import argparse
from typing import Dict, List, Optional, Tuple

from . import cli_types, driver
from .driver import rounds_note
from .attention_methods import DTYPES
from .case import Case
from .environment import environment_info
from .memory import MIB
from .plot import pyplot
from .resources import add_output_flags, check_device_and_memory
from .table import markdown_table
from .timing import median

DESCRIPTION = """\
Text-encoding speed and peak memory: RoBERTa-base encoder, softmax vs Linformer vs ABC.

Runs a batch of random sequences of --length tokens through the encoder (random weights, eval
mode, inference mode), each method in a fresh process: softmax (fairseq's RoBERTa), Linformer
and ABC with each of --memories slots, same dimensions. Reports sequences per second, peak memory
increase and both relative to softmax. Prints a Markdown table and PASS/FAIL targets
(informational: the exit code is 0 unless the benchmark itself crashes) and writes encode.json,
encode.md and encode.png to --out-dir."""
PROG = "python -m abc_fairseq.benchmark"
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


# ----------------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommand's flags."""
    parser.add_argument("--length", type=cli_types.positive_int, default=512, help="tokens per sequence N")
    parser.add_argument("--batch", type=cli_types.positive_int, default=16, help="sequences encoded together")
    parser.add_argument("--memories", type=cli_types.positive_int, nargs="+", default=[64, 128], metavar="n",
                        help="memory sizes of Linformer and ABC")
    parser.add_argument("--methods", nargs="+", choices=list(KINDS), default=list(KINDS), metavar="METHOD",
                        help=f"attention kinds to measure, from: {', '.join(KINDS)}")
    parser.add_argument("--vocab", type=cli_types.positive_int, default=50265,
                        help="vocabulary size (RoBERTa's is 50265)")
    parser.add_argument("--layers", type=cli_types.positive_int, default=12, help="encoder layers")
    parser.add_argument("--embed-dim", type=cli_types.positive_int, default=768, help="model dimension")
    parser.add_argument("--heads", type=cli_types.positive_int, default=12, help="attention heads")
    parser.add_argument("--ffn-dim", type=cli_types.positive_int, default=3072, help="FFN hidden size")
    parser.add_argument("--repeats", type=cli_types.positive_int, default=5,
                        help="timed forwards per method, after the untimed memory forward; the median is reported")
    driver.add_rounds_flag(parser)
    parser.add_argument("--warmup", type=cli_types.non_negative_int, default=1,
                        help="untimed forwards before the timed ones (after the memory forward)")
    parser.add_argument("--threads", type=cli_types.positive_int, default=None,
                        help="torch intra-op threads in each worker (default: torch's own default)")
    parser.add_argument("--dtype", choices=list(DTYPES), default="float32", help="dtype of the weights")
    parser.add_argument("--device", default="cpu", help="torch device: cpu, or cuda / cuda:I")
    parser.add_argument("--seed", type=cli_types.non_negative_int, default=0, help="seed of weights and tokens")
    parser.add_argument("--max-seconds", type=cli_types.positive_float, default=600.0,
                        help="longest one forward may take; a method over it is reported as timeout")
    # Models whose peaks are a few percent apart need a probe that does not vary by 10-20% between
    # runs: the peak of bytes held in tensors (CUDA's own probe is the same kind).
    add_output_flags(parser, "encode", cpu_memory_probe="tensors")


def validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Checks that involve several flags or the machine; errors name the flag."""
    args.memories = sorted(set(args.memories))
    args.methods = list(dict.fromkeys(args.methods))
    if args.embed_dim % args.heads:
        parser.error(f"--embed-dim {args.embed_dim} must be divisible by --heads {args.heads}")
    if args.vocab < 8:
        parser.error(f"--vocab {args.vocab} is too small: fairseq reserves 4 special symbols")
    check_device_and_memory(args, parser)


def method_list(args: argparse.Namespace) -> List[Tuple[str, str, Optional[int]]]:
    """(label, kind, memory) for every measured model: softmax once, the others per memory size."""
    methods = []
    for kind in args.methods:
        if kind.startswith("softmax"):
            methods.append((kind, kind, None))
        else:
            methods += [(f"{kind}-{n}", kind, n) for n in args.memories]
    return methods


# ----------------------------------------------------------------------------- worker side
def build_model(params: dict):
    """``abc_roberta`` with the benchmark's dims and attention kind, dropout 0, eval mode."""
    from types import SimpleNamespace

    from abc_fairseq.models.abc_roberta import ABCRobertaModel, abc_roberta_base

    from .decode import synthetic_dictionary

    length, unfused = params["length"], params["kind"] == "softmax-unfused"
    args = argparse.Namespace(
        encoder_layers=params["layers"], encoder_embed_dim=params["embed_dim"],
        encoder_attention_heads=params["heads"], encoder_ffn_embed_dim=params["ffn_dim"],
        dropout=0.0, attention_dropout=0.0, max_positions=length, tokens_per_sample=length,
        encoder_attn="softmax" if unfused else params["kind"], encoder_memory=params["memory"] or 1,
    )
    abc_roberta_base(args)
    task = SimpleNamespace(source_dictionary=synthetic_dictionary(params["vocab"]), max_positions=lambda: length)
    model = ABCRobertaModel.build_model(args, task).eval()
    if unfused:  # fairseq's own attention code instead of F.multi_head_attention_forward
        for layer in model.encoder.sentence_encoder.layers:
            layer.self_attn.skip_embed_dim_check = True
    return model


def build_case(params: dict, device) -> Case:
    """The worker's entry point: model and tokens [B, N] ready; ``run`` encodes them once."""
    import torch

    model = build_model(params).to(device=device, dtype=DTYPES[params["dtype"]])
    vocab = len(model.encoder.dictionary)
    B, N = params["batch"], params["length"]
    tokens = torch.randint(4, vocab, (B, N), device=device)
    tokens[:, 0] = 0  # <s>
    info = {"batch": B, "length": N, "parameters": sum(p.numel() for p in model.parameters())}

    def run() -> None:
        with torch.inference_mode():
            features, _ = model(tokens, features_only=True)
            info["output_shape"] = list(features.shape)

    return Case(run, info)


def prime(params: dict, device) -> None:
    """A short forward at the same dims, so thread pools and lazy kernels exist before the baseline."""
    build_case(dict(params, length=min(params["length"], 16), batch=1, vocab=min(params["vocab"], 64)), device).run()


# ----------------------------------------------------------------------------- rows and report
def make_row(label: str, kind: str, memory: Optional[int], config: dict, result: dict) -> dict:
    """One JSON/table row from a worker result."""
    row = {"method": label, "kind": kind, "memory": memory, "N": config["length"], "batch": config["batch"],
           **result}
    times = result.get("times_s") or []
    if row.get("status") == "ok" and times:
        seconds = median(times)
        row.update(encode_s=seconds, ms_per_batch=seconds * 1e3, sequences_per_s=config["batch"] / seconds,
                   tokens_per_s=config["batch"] * config["length"] / seconds)
    if "peak_bytes" in result:
        row["peak_mib"] = result["peak_bytes"] / MIB
    return row


def add_relative(rows: List[dict]) -> None:
    """``speed_vs_softmax`` (softmax time / method time) and ``memory_vs_softmax`` (method peak /
    softmax peak)."""
    ref = next((row for row in rows if row["kind"] == "softmax"), {})
    for row in rows:
        row["speed_vs_softmax"] = (ref["encode_s"] / row["encode_s"]
                                   if "encode_s" in ref and "encode_s" in row else None)
        row["memory_vs_softmax"] = (row["peak_mib"] / ref["peak_mib"]
                                    if ref.get("peak_mib") and row.get("peak_mib") is not None else None)


def _num(value, spec: str) -> str:
    return "-" if value is None else f"{value:{spec}}"


def _ratio(value) -> str:
    return "-" if value is None else f"{value:.2f}x"


HEADERS = ("method", "n", "ms / batch", "sequences/s", "speed vs softmax", "peak MiB", "memory vs softmax")


def report(rows: List[dict], env: dict, config: dict, memory_probes: List[str]) -> str:
    """The Markdown report: header, table (Table 6's layout: speed and memory relative to softmax), notes."""
    table_rows, failures = [], []
    for row in rows:
        ok = row.get("status") == "ok"
        if not ok:
            failures.append(f"- {row['method']}: {row.get('status')}: "
                            f"{' '.join(str(row.get('message', '')).split())[:300]}")
        table_rows.append((
            row["method"], _num(row.get("memory"), "d"),
            _num(row.get("ms_per_batch"), ".1f") if ok else f"{row.get('status')} [{len(failures)}]",
            _num(row.get("sequences_per_s"), ".2f"), _ratio(row.get("speed_vs_softmax")),
            _num(row.get("peak_mib"), ".1f"), _ratio(row.get("memory_vs_softmax")),
        ))
    threads = sorted({row["threads"] for row in rows if row.get("threads")})
    lines = [
        "# Text encoding, RoBERTa-base encoder: softmax vs Linformer vs ABC",
        "",
        f"Batch {config['batch']} x {config['length']} tokens; {config['layers']} layers, dim {config['embed_dim']}, "
        f"{config['heads']} heads, FFN {config['ffn_dim']}, vocabulary {config['vocab']}; random weights; "
        f"{config['dtype']} on {config['device']}; median of {config['repeats']} after {config['warmup']} warmup{rounds_note(config)}; "
        f"threads {', '.join(map(str, threads)) or '-'}; torch {env['torch']}; CPU {env['cpu_model']}.",
        "",
        markdown_table(HEADERS, table_rows, right_align=(False,) + (True,) * 6),
        "",
        "Notes:",
        "",
        "- One forward = `model(tokens, features_only=True)` under `torch.inference_mode()`: embeddings and "
        "every encoder layer, no LM head.",
        "- speed vs softmax = softmax time / method time (above 1 is faster); memory vs softmax = method peak / "
        "softmax peak (below 1 is smaller).",
        f"- peak MiB: peak memory increase over the baseline (model and tokens exist) during the first, "
        f"untimed forward, in a fresh process (probe: {', '.join(memory_probes) or '-'}).",
    ]
    kinds = list(dict.fromkeys(row["kind"] for row in rows))
    lines += [f"- {kind}: {KIND_NOTES[kind]}" for kind in kinds]
    if failures:
        lines += ["", "Failures:", ""] + failures
    return "\n".join(lines)


# ----------------------------------------------------------------------------- targets
def check_targets(rows: Dict[str, dict]) -> List[dict]:
    """ABC-64 faster than softmax and using less peak memory, and than softmax-unfused when it was
    measured (informational): PASS, FAIL, or SKIP when abc-64 or the reference was not measured
    (the reference failing is a SKIP, abc-64 failing a FAIL)."""
    targets = []
    abc = rows.get("abc-64")
    references = ["softmax"] + (["softmax-unfused"] if "softmax-unfused" in rows else [])
    for reference in references:
        soft = rows.get(reference)
        for name, key, better in ((f"abc-64 encodes faster than {reference}", "encode_s", "faster"),
                                  (f"abc-64 peak memory below {reference}'s", "peak_mib", "smaller")):
            if abc is None or soft is None:
                targets.append({"name": name, "status": "SKIP", "detail": f"needs abc with n=64 and {reference}"})
            elif soft.get(key) is None:
                targets.append({"name": name, "status": "SKIP", "detail": f"{reference}: {soft.get('status')}"})
            elif abc.get(key) is None:
                targets.append({"name": name, "status": "FAIL", "detail": f"abc-64: {abc.get('status')}"})
            else:
                ratio = soft[key] / abc[key] if abc[key] else float("inf")
                targets.append({"name": name, "status": "PASS" if ratio > 1 else "FAIL", "value": ratio,
                                "detail": f"{reference} / abc-64 = {ratio:.2f} (need > 1: {better})"})
    return targets


def format_targets(targets: List[dict]) -> str:
    lines = ["## Targets (informational)", ""]
    lines += [f"- {t['status']}: {t['name']} -- {t['detail']}" for t in targets]
    return "\n".join(lines)


def save_plot(path: str, rows: List[dict], title: str) -> None:
    """Two bar charts: speed and peak memory relative to softmax, one bar per method."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, key, ylabel in ((axes[0], "speed_vs_softmax", "speed relative to softmax (higher is faster)"),
                            (axes[1], "memory_vs_softmax", "peak memory relative to softmax (lower is smaller)")):
        labels = [row["method"] for row in rows]
        values = [row.get(key) or 0.0 for row in rows]
        bars = ax.bar(labels, values, color=["0.55" if row["kind"].startswith("softmax") else
                                             ("tab:orange" if row["kind"] == "linformer" else "tab:blue")
                                             for row in rows])
        for bar, value in zip(bars, values):
            ax.annotate(f"{value:.2f}x", (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ----------------------------------------------------------------------------- driver
MODEL_KEYS = ("vocab", "layers", "embed_dim", "heads", "ffn_dim", "dtype", "length", "batch")


def _case(args: argparse.Namespace, label: str, kind: str, memory: Optional[int]) -> driver.Measurement:
    params = {key: getattr(args, key) for key in MODEL_KEYS}
    params.update(kind=kind, memory=memory)
    config = driver.config_of(args)
    return driver.Measurement(f"{label} batch={args.batch} N={args.length}",
                       driver.worker_spec(args, f"{__name__}:build_case", params),
                       lambda result: make_row(label, kind, memory, config, result))


def _describe(row: dict) -> str:
    return f"{row['ms_per_batch']:.1f} ms/batch, peak {row.get('peak_mib', 0):.1f} MiB"


def run(args: argparse.Namespace) -> int:
    """Measure every method, print the report and targets, write the output files."""
    validate(args, args._parser)
    env = environment_info(PROG, args.argv, args.device)
    cases = [_case(args, label, kind, memory) for label, kind, memory in method_list(args)]
    record = driver.measure("encode", args, env, cases, _describe, rounds=args.rounds)
    rows = record["results"]
    add_relative(rows)
    targets = check_targets({row["method"]: row for row in rows})
    text = report(rows, env, record["config"], driver.memory_probes(rows)) + "\n\n" + format_targets(targets) + "\n"
    title = (f"encoding {args.batch} x {args.length} tokens, {args.layers} layers, dim {args.embed_dim}, "
             f"{args.dtype}, {args.device}")
    driver.publish("encode", args, record, text, targets, lambda path: save_plot(path, rows, title))
    return 0
