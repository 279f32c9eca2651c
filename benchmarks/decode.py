"""``decode`` suite: greedy decoding speed and attention-state size of a translation model, softmax
against ABC and the kernel baselines RFA and T2R (the paper's Figures 1 and 2) on a synthetic task
(random weights and tokens: only speed and memory are measured); ``decode_model`` is the worker side.
The state is the bytes held in fairseq's incremental state after the last step, split into decoder
self and cross attention: softmax's grows with N, ABC's, RFA's and T2R's do not."""

import argparse
from typing import Dict, List, Optional, Tuple

from . import cli, report
from .probes import MIB
from .report import compare, measured
from .suite import Column, Measurement, Panel, Plot, Suite

DESCRIPTION = """\
Greedy decoding speed and attention-state memory: softmax vs ABC, RFA, T2R (Figures 1-2).

Decodes a batch of random sources for exactly N steps at each N (source length = target length),
each (method, N) in a fresh process, through fairseq's incremental decoder API (encoder once,
then decoder + argmax per step). Reports tokens per second, the bytes held by the attention
state in the incremental state at the end, and the peak memory increase while decoding. Prints a
Markdown table and PASS/FAIL targets (informational: the exit code is 0 unless the benchmark
itself crashes) and writes decode.json, decode.md and decode.png to --out-dir."""
DEFAULT_LENGTHS = [256, 512, 1024, 2048, 4096]
METHODS = ("softmax", "abc", "rfa", "t2r")
METHOD_NOTES = {
    "softmax": "fairseq `transformer`: softmax attention everywhere; its incremental state caches "
               "the keys and values of every decoded token and of the whole source.",
    "abc": "`abc_transformer`: ABC_MLP cross attention (--cross-memory slots) and causal self attention "
           "(--causal-memory slots), softmax encoder; constant-size state.",
    "rfa": "`abc_transformer --decoder-cross-attn rfa --decoder-self-attn rfa` (random feature attention) "
           "with --rfa-memory cross/causal features, softmax encoder; constant-size state S, z.",
    "t2r": "`abc_transformer --decoder-cross-attn t2r --decoder-self-attn t2r` (learned ReLU feature map) "
           "with --t2r-memory cross/causal features, softmax encoder; constant-size state S, z.",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lengths", type=cli.positive_int, nargs="+", default=DEFAULT_LENGTHS,
                        metavar="N", help="source = target lengths N; exactly N greedy steps are decoded")
    parser.add_argument("--batch", type=cli.positive_int, default=16, help="sentences decoded together")
    cli.add_model_flags(parser, 32768, "vocabulary size of the synthetic task (shared by source and target)",
                        {"--encoder-layers": 6, "--decoder-layers": 6}, embed_dim=512, heads=8, ffn_dim=2048)
    add_size_flags(parser)
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS),
                        metavar="METHOD", help=f"models to measure, from: {', '.join(METHODS)}")
    cli.add_run_flags(parser, "decode", repeats=1, warmup=0, max_seconds=1800.0, rounds=False, repeats_help=(
        "timed decodes per (method, N), after the untimed memory decode; the median is reported. 0: "
        "report the time of the memory decode itself (one decode per (method, N) instead of two; the "
        "default kernel high-water-mark probe costs nothing while it runs)"))
    parser.add_argument("--sample-steps", type=cli.non_negative_int, default=0, metavar="S",
                        help="0 (default): decode and time all N steps. S > 0: time --sample-windows "
                             "windows of S greedy steps centred on equal segments of 0..N, each "
                             "continuing a cache of its start length, and estimate the whole decode as "
                             "the first step + (N - 1) x the mean step time (exact for step costs "
                             "linear in the position, as softmax's are; for CPU runs where softmax "
                             "would decode for hours). N <= S x windows is decoded in full")
    parser.add_argument("--sample-windows", type=cli.positive_int, default=4, metavar="K",
                        help="windows of --sample-steps steps per (method, N)")
    cli.add_output_flags(parser, "decode")


def add_size_flags(parser: argparse.ArgumentParser) -> None:
    """The cross / causal memory sizes of ABC, RFA and T2R (decode and generate)."""
    parser.add_argument("--cross-memory", type=cli.positive_int, default=32,
                        help="ABC cross attention slots (--decoder-cross-memory)")
    parser.add_argument("--causal-memory", type=cli.positive_int, default=8,
                        help="ABC causal self attention slots (--decoder-self-memory)")
    for method, sizes in (("rfa", (256, 128)), ("t2r", (32, 4))):
        parser.add_argument(f"--{method}-memory", type=cli.positive_int, nargs=2, default=list(sizes),
                            metavar=("CROSS", "CAUSAL"),
                            help=f"{method.upper()}'s feature sizes in cross and causal self attention "
                                 "(the paper's Figures 1-2 use the defaults)")


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


MODEL_KEYS = ("vocab", "encoder_layers", "decoder_layers", "embed_dim", "heads", "ffn_dim", "dtype")


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
        # A sampled run (--sample-steps) reports its own estimate; its wall time includes the
        # untimed cache building.
        seconds = info.get("estimated_decode_s") or seconds
        tokens = info.get("tokens_decoded", row["batch"] * row["N"])
        row.update(decode_s=seconds, tokens_per_s=tokens / seconds, us_per_token=seconds * 1e6 / tokens,
                   ms_per_step=seconds * 1e3 / row["N"])
    if "state_bytes" in info:
        row["state_bytes"] = info["state_bytes"]
        row["state_mib"] = info["state_bytes"]["total"] / MIB
    if "encode_s" in info:
        row["encode_ms"] = info["encode_s"] * 1e3


def _mib(row: dict, part: str) -> Optional[float]:
    state = row.get("state_bytes")
    return None if state is None else state[part] / MIB


def _timing(config: dict) -> str:
    if config.get("sample_steps"):
        return (f"time estimated from {config['sample_windows']} windows of {config['sample_steps']} steps "
                f"per N (see notes)")
    if config["repeats"] == 0:
        return "timed: the (single) memory decode"
    return report.timing(config)


def sizes_note(config: dict, methods: List[str]) -> str:
    sizes = sizes_of(config)
    return ", ".join(f"{m.upper()} {'/'.join(map(str, sizes[m]))}"
                     for m in methods if m in sizes)


SAMPLED_NOTE = (
    "Exact for a step cost linear in the position; N <= steps x windows is decoded in full. It can "
    "understate softmax's cost (a cache grown step by step over a whole decode pays allocation "
    "and page-fault costs that a window does not), so check it against a full decode at one N "
    "before quoting speed-ups as more than low bounds.")


def _methods(rows: List[dict]) -> List[str]:
    return list(dict.fromkeys(row["method"] for row in rows))


def header(config: dict, rows: List[dict], env: dict) -> str:
    return (f"Batch {config['batch']}, source = target length N, exactly N steps; {config['encoder_layers']}+"
            f"{config['decoder_layers']} layers, dim {config['embed_dim']}, {config['heads']} heads, "
            f"FFN {config['ffn_dim']}, vocabulary {config['vocab']}; cross / causal sizes: "
            f"{sizes_note(config, _methods(rows)) or '-'}; {report.machine_note(config, rows, env, _timing(config))}")


def notes(config: dict, rows: List[dict], memory_probes: List[str]) -> List[str]:
    lines = [
        "- Timing: fairseq's incremental decoder API called directly (encoder once, then per step "
        "`model.decoder(tokens[:, :t+1], encoder_out, incremental_state)` and argmax), not "
        "SequenceGenerator, so the time is the model's; the encoder is timed separately (encode ms).",
        "- tokens/s = batch x N / decode time; ms/step = decode time / N; x softmax speed = softmax "
        "time / method time (above 1 is faster).",
    ]
    if config.get("sample_steps"):
        lines.append(
            f"- Sampled timing (--sample-steps {config['sample_steps']} --sample-windows "
            f"{config['sample_windows']}): decode time = first step + (N - 1) x the mean time of the "
            "steps in windows centred on equal segments of 0..N, each continuing a cache of its start "
            "length (softmax: its key/value cache grown to that length; the others: their constant-size "
            "state). " + SAMPLED_NOTE)
    lines += [
        "- state MiB: bytes of all tensors in the incremental state after the last step (self = "
        "decoder self attention, cross = encoder-decoder attention); x softmax state = method / softmax.",
        report.peak_note("model and encoder output exist", "decode", memory_probes,
                         "; it includes the one-off O(N) temporaries of projecting the encoder output for "
                         "cross attention"),
    ]
    return lines + report.method_notes(METHOD_NOTES, _methods(rows))


def _abc_flat(rows: Dict[Tuple[str, int], dict]) -> dict:
    abc_lengths = sorted(n for method, n in rows if method == "abc")
    longest = abc_lengths[-1] if abc_lengths else None
    name = f"abc time per token at the longest N ({longest}) within 1.2x of N=256"
    if ("abc", 256) not in rows or longest is None or longest <= 256:
        return {"name": name, "status": "SKIP", "detail": "needs abc at N=256 and at a longer N"}
    if not (measured(rows[("abc", 256)], "us_per_token") and measured(rows[("abc", longest)], "us_per_token")):
        return {"name": name, "status": "FAIL", "detail": f"abc has no time at N=256 or N={longest}"}
    value = rows[("abc", longest)]["us_per_token"] / rows[("abc", 256)]["us_per_token"]
    return report.verdict(name, value, 1.2, f"us/token at N={longest} / at N=256 = {value:.2f} (need <= 1.2)")


def _abc_constant_state(rows: Dict[Tuple[str, int], dict]) -> dict:
    name = "abc attention state the same size at every N"
    lengths = {n: rows[("abc", n)] for n in sorted(n for method, n in rows if method == "abc")}
    if len(lengths) < 2:
        return {"name": name, "status": "SKIP", "detail": "needs abc at two or more lengths"}
    if not all(measured(row, "state_bytes") for row in lengths.values()):
        return {"name": name, "status": "FAIL", "detail": "abc has no state size at some N"}
    sizes = {n: row["state_bytes"]["total"] for n, row in lengths.items()}
    return {"name": name, "status": "PASS" if len(set(sizes.values())) == 1 else "FAIL",
            "detail": "bytes by N: " + ", ".join(f"{n}: {b}" for n, b in sizes.items())}


def check_targets(rows: Dict[Tuple[str, int], dict]) -> List[dict]:
    """ABC's decoding targets (informational): PASS, FAIL, or SKIP when a needed (method, N) was
    not measured. ABC failing at a needed N is a FAIL; the softmax reference failing is a SKIP."""
    faster = compare("abc >= 3x faster than softmax at N=4096", rows.get(("abc", 4096)),
                     rows.get(("softmax", 4096)), "decode_s", 3.0, True, ("abc at N=4096", "softmax"))
    return [_abc_flat(rows), faster, _abc_constant_state(rows)]


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
             Column("self MiB", lambda row: _mib(row, "self"), ".3f"),
             Column("cross MiB", lambda row: _mib(row, "cross"), ".3f"),
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
