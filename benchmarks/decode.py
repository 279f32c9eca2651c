"""``decode`` suite: greedy decoding speed and attention-state size of a translation model, softmax
against ABC and the kernel baselines RFA and T2R (the paper's Figures 1-2), random weights and
tokens; ``decode_model`` is the worker side. The state is the bytes of fairseq's incremental state
after the last step, decoder self and cross attention apart: softmax's grows with N, the others' not."""

import argparse
from typing import Dict, List, Optional, Tuple

from . import cli, report
from .probes import MIB
from .report import compare, measured
from .suite import Column, Measurement, Panel, Plot, Suite

DESCRIPTION = """\
Greedy decoding speed and attention-state memory: softmax vs ABC, RFA, T2R (Figures 1-2).

Decodes random sources for exactly N steps at each N (source = target length), each (method, N) in
a fresh process, through fairseq's incremental decoder API. Details: docs/benchmarks.md."""
DEFAULT_LENGTHS = [256, 512, 1024, 2048, 4096]
METHODS = ("softmax", "abc", "rfa", "t2r")
METHOD_NOTES = {
    "softmax": "fairseq `transformer`; its state caches keys and values of every decoded and source token.",
    "abc": "`abc_transformer`, ABC_MLP cross and causal self attention, softmax encoder; constant-size state.",
    "rfa": "`abc_transformer`, random feature attention in the decoder, softmax encoder; constant-size state.",
    "t2r": "`abc_transformer`, T2R (learned ReLU features) in the decoder, softmax encoder; constant-size state.",
}
MODEL_KEYS = ("vocab", "encoder_layers", "decoder_layers", "embed_dim", "heads", "ffn_dim", "dtype")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    cli.add_flags(parser, ("--lengths", cli.positive_int, DEFAULT_LENGTHS, "source = target lengths N; N steps each",
                           {"nargs": "+", "metavar": "N"}),
                  ("--batch", cli.positive_int, 16, "sentences decoded together"))
    cli.add_model_flags(parser, 32768, "vocabulary size of the synthetic task (source and target)",
                        {"--encoder-layers": 6, "--decoder-layers": 6}, embed_dim=512, heads=8, ffn_dim=2048)
    add_size_flags(parser)
    cli.add_flags(parser, cli.methods_flag(METHODS, list(METHODS), "models to measure"))
    cli.add_run_flags(parser, "decode", repeats=1, warmup=0, max_seconds=1800.0, rounds=False,
                      repeats_help="timed decodes per (method, N) after the untimed memory decode; 0: time the "
                                   "memory decode itself")
    cli.add_flags(parser, ("--sample-steps", cli.non_negative_int, 0, "S > 0: time --sample-windows windows of S "
                           "steps and estimate the decode from them (docs/benchmarks.md); 0: time every step",
                           {"metavar": "S"}),
                  ("--sample-windows", cli.positive_int, 4, "windows of --sample-steps steps per (method, N)",
                   {"metavar": "K"}))
    cli.add_output_flags(parser, "decode")


def add_size_flags(parser: argparse.ArgumentParser) -> None:
    """The cross / causal memory sizes of ABC, RFA and T2R (decode and generate)."""
    cli.add_flags(parser, ("--cross-memory", cli.positive_int, 32, "ABC cross attention slots"),
                  ("--causal-memory", cli.positive_int, 8, "ABC causal self attention slots"),
                  *((f"--{method}-memory", cli.positive_int, list(sizes), f"{method.upper()}'s cross and causal "
                     "feature sizes", {"nargs": 2, "metavar": ("CROSS", "CAUSAL")})
                    for method, sizes in (("rfa", (256, 128)), ("t2r", (32, 4)))))


def check_sizes(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    if "rfa" in args.methods and any(size % 2 for size in args.rfa_memory):
        parser.error(f"--rfa-memory {args.rfa_memory}: RFA's feature sizes must be even (sin and cos)")


def validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    cli.check_model_flags(args, parser)
    check_sizes(args, parser)


def sizes_of(config: dict) -> Dict[str, List[int]]:
    """Method -> [cross, causal] memory (slots or features) of every non-softmax method."""
    return {"abc": [config["cross_memory"], config["causal_memory"]],
            "rfa": list(config["rfa_memory"]), "t2r": list(config["t2r_memory"])}


def sizes_note(config: dict, methods: List[str]) -> str:
    sizes = sizes_of(config)
    return ", ".join(f"{m.upper()} {'/'.join(map(str, sizes[m]))}" for m in methods if m in sizes)


def measurements(args: argparse.Namespace) -> List[Measurement]:
    """One worker run per (method, N), N outermost."""
    params = {key: getattr(args, key) for key in MODEL_KEYS}
    params.update(batch=args.batch, sizes=sizes_of(vars(args)), sample_steps=args.sample_steps,
                  sample_windows=args.sample_windows)
    return [Measurement(f"{method} N={length} batch={args.batch}", f"{__package__}.decode_model:build_case",
                        dict(params, method=method, length=length),
                        {"method": method, "N": length, "batch": args.batch})
            for length in args.lengths for method in args.methods]


def derive(row: dict, seconds: Optional[float]) -> None:
    info = row.get("info") or {}
    if seconds is not None:
        seconds = info.get("estimated_decode_s") or seconds  # a sampled run's estimate (--sample-steps)
        tokens = info.get("tokens_decoded", row["batch"] * row["N"])
        row.update(decode_s=seconds, tokens_per_s=tokens / seconds, us_per_token=seconds * 1e6 / tokens,
                   ms_per_step=seconds * 1e3 / row["N"])
    if "state_bytes" in info:
        row.update(state_bytes=info["state_bytes"], state_mib=info["state_bytes"]["total"] / MIB)
    if "encode_s" in info:
        row["encode_ms"] = info["encode_s"] * 1e3


def _mib(part: str):
    return lambda row: None if row.get("state_bytes") is None else row["state_bytes"][part] / MIB


def header(config: dict, rows: List[dict], env: dict) -> str:
    if config.get("sample_steps"):
        timing = f"time estimated from {config['sample_windows']} windows of {config['sample_steps']} steps per N"
    else:
        timing = "timed: the (single) memory decode" if config["repeats"] == 0 else report.timing(config)
    methods = list(dict.fromkeys(row["method"] for row in rows))
    return (f"Batch {config['batch']}, source = target length N, exactly N steps; {config['encoder_layers']}+"
            f"{config['decoder_layers']} layers, dim {config['embed_dim']}, {config['heads']} heads, "
            f"FFN {config['ffn_dim']}, vocabulary {config['vocab']}; cross / causal sizes: "
            f"{sizes_note(config, methods) or '-'}; {report.machine_note(config, rows, env, timing)}")


def notes(config: dict, rows: List[dict], memory_probes: List[str]) -> List[str]:
    lines = ["- Timing: fairseq's incremental decoder API (encoder once, timed apart as encode ms; then decoder "
             "and argmax per step); tokens/s = batch x N / decode time; x softmax = softmax time / method time."]
    if config.get("sample_steps"):
        lines.append(f"- Sampled timing (--sample-steps {config['sample_steps']} --sample-windows "
                     f"{config['sample_windows']}): first step + (N - 1) x the mean step of windows centred on "
                     "equal segments of 0..N; a low bound for softmax (docs/benchmarks.md).")
    lines += ["- state MiB: tensors in the incremental state after the last step (self / cross attention); "
              "x softmax state = method / softmax.",
              report.peak_note("model and encoder output exist", "decode", memory_probes)]
    return lines + report.method_notes(METHOD_NOTES, (row["method"] for row in rows))


def check_targets(rows: Dict[Tuple[str, int], dict]) -> List[dict]:
    """ABC's decoding targets (informational); ABC failing at a needed N is a FAIL, softmax a SKIP."""
    abc = {n: row for (method, n), row in sorted(rows.items(), key=lambda item: item[0][1]) if method == "abc"}
    longest = max(abc, default=None)
    flat = f"abc time per token at the longest N ({longest}) within 1.2x of N=256"
    if 256 not in abc or longest is None or longest <= 256:
        flat = {"name": flat, "status": "SKIP", "detail": "needs abc at N=256 and at a longer N"}
    elif not (measured(abc[256], "us_per_token") and measured(abc[longest], "us_per_token")):
        flat = {"name": flat, "status": "FAIL", "detail": f"abc has no time at N=256 or N={longest}"}
    else:
        value = abc[longest]["us_per_token"] / abc[256]["us_per_token"]
        flat = report.verdict(flat, value, 1.2, f"us/token at N={longest} / at N=256 = {value:.2f} (need <= 1.2)")
    faster = compare("abc >= 3x faster than softmax at N=4096", abc.get(4096), rows.get(("softmax", 4096)),
                     "decode_s", 3.0, True, ("abc at N=4096", "softmax"))
    state = {"name": "abc attention state the same size at every N", "status": "SKIP",
             "detail": "needs abc at two or more lengths"}
    if len(abc) >= 2 and not all(measured(row, "state_bytes") for row in abc.values()):
        state.update(status="FAIL", detail="abc has no state size at some N")
    elif len(abc) >= 2:
        sizes = {n: row["state_bytes"]["total"] for n, row in abc.items()}
        state.update(status="PASS" if len(set(sizes.values())) == 1 else "FAIL",
                     detail="bytes by N: " + ", ".join(f"{n}: {b}" for n, b in sizes.items()))
    return [flat, faster, state]


SUITE = Suite(
    name="decode", description=DESCRIPTION, add_arguments=add_arguments, validate=validate,
    measurements=measurements, derive=derive,
    progress="{tokens_per_s:.1f} tokens/s, state {state_mib:.3f} MiB, peak {peak_mib:.1f} MiB",
    title=lambda config: "Greedy decoding, softmax vs " + (
        ", ".join(m.upper() for m in config["methods"] if m != "softmax") or "-"),
    header=header,
    columns=(Column("N", "N"), Column("method", "method", right=False),
             Column("tokens/s", "tokens_per_s", ".1f", status=True), Column("ms/step", "ms_per_step", ".2f"),
             Column("x softmax speed", "speed_vs_softmax", "x"), Column("state MiB", "state_mib", ".3f"),
             Column("self MiB", _mib("self"), ".3f"), Column("cross MiB", _mib("cross"), ".3f"),
             Column("x softmax state", "state_vs_softmax", "x"), Column("peak MiB", "peak_mib", ".1f"),
             Column("encode ms", "encode_ms", ".1f")),
    notes=notes, targets=lambda rows, config: check_targets({(row["method"], row["N"]): row for row in rows}),
    relative=[("softmax", (("decode_s", "speed_vs_softmax", True), ("state_mib", "state_vs_softmax", False)))],
    plot=Plot("lines", (Panel("Greedy decoding speed (Figure 1)", "tokens per second (log)", "tokens_per_s"),
                        Panel("Attention memory: incremental state (Figure 2)", "MiB (log)", "state_mib")),
              title=lambda c: (f"greedy decoding, batch {c['batch']}, {c['encoder_layers']}+{c['decoder_layers']} "
                               f"layers, dim {c['embed_dim']}, {c['dtype']}, {c['device']}"),
              xlabel="source = target length N (log2)"),
)
