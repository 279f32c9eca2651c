"""``decode`` suite: greedy decoding speed and attention-state size of a translation model,
softmax against ABC and the kernel baselines RFA and T2R (the paper's Figures 1 and 2).

A synthetic sequence-to-sequence task: random source tokens from a vocabulary of ``--vocab``
symbols, source and target of the same length N, random weights (only speed and memory are
measured). For each method and N, in a fresh process (``decode_model`` is the worker side):

1. build the model: fairseq's ``transformer`` (softmax everywhere) or ``abc_transformer`` whose
   decoder cross and causal self attention use the method's strategy with the paper's sizes
   (ABC_MLP 32/8, RFA 256/128, T2R 32/4 as cross/causal slots or features), softmax encoder;
   same dims for all;
2. encode the batch once (``encode ms``: reported, not part of the decoding time);
3. time greedy decoding of exactly N steps (no early stop at eos): fairseq's incremental decoder
   API called directly, ``model.decoder(tokens[:, :t + 1], encoder_out, incremental_state)`` and
   an argmax per step, as ``SequenceGenerator`` calls the decoder but without its beam
   bookkeeping, so the time is the decoder's (attention, FFN and output projection);
4. at the end of decoding, sum the bytes of every tensor held in the incremental state (each
   storage once), split into decoder self attention and cross attention. fairseq's softmax caches
   keys and values of every step and of the whole source, so this grows with N; ABC, RFA and T2R
   hold a constant-size causal state and a cross memory built once from the encoder output.
"""

import argparse
from typing import Dict, List, Optional, Tuple

from . import cli, driver, report
from .plot import Panel, save_panels, series
from .probes import MIB
from .report import add_relative, compare, measured, num, ratio, result_row, status_cell

NAME = "decode"
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
    """The suite's flags."""
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
    cli.add_output_flags(parser, NAME)


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
    """Checks that involve several flags or the machine; errors name the flag."""
    args.lengths = sorted(set(args.lengths))
    args.methods = list(dict.fromkeys(args.methods))
    cli.check_model_flags(args, parser)
    check_sizes(args, parser)
    cli.check_device_and_memory(args, parser)


def sizes_of(config: dict) -> Dict[str, List[int]]:
    """Method -> [cross, causal] memory (slots or features) of every non-softmax method."""
    return {"abc": [config["cross_memory"], config["causal_memory"]],
            "rfa": list(config["rfa_memory"]), "t2r": list(config["t2r_memory"])}


MODEL_KEYS = ("vocab", "encoder_layers", "decoder_layers", "embed_dim", "heads", "ffn_dim", "dtype")


def measurements(args: argparse.Namespace) -> List[driver.Measurement]:
    """One worker run per (method, N), N outermost."""
    params = {key: getattr(args, key) for key in MODEL_KEYS}
    params.update(batch=args.batch, sizes=sizes_of(vars(args)), sample_steps=args.sample_steps,
                  sample_windows=args.sample_windows)

    def one(method: str, length: int) -> driver.Measurement:
        spec = driver.worker_spec(args, f"{__package__}.decode_model:build_case",
                                  dict(params, method=method, length=length))
        return driver.Measurement(f"{method} N={length} batch={args.batch}", spec,
                                  lambda result: make_row(method, length, args.batch, result))

    return [one(method, length) for length in args.lengths for method in args.methods]


def describe(row: dict) -> str:
    return (f"{row['tokens_per_s']:.1f} tokens/s, state {row.get('state_mib', 0):.3f} MiB, "
            f"peak {row.get('peak_mib', 0):.1f} MiB")


def make_row(method: str, length: int, batch: int, result: dict) -> dict:
    """One JSON/table row from a worker result."""
    row, seconds = result_row({"method": method, "N": length, "batch": batch}, result)
    info = result.get("info") or {}
    if seconds is not None:
        # A sampled run (--sample-steps) reports its own estimate; its wall time includes the
        # untimed cache building.
        seconds = info.get("estimated_decode_s") or seconds
        tokens = info.get("tokens_decoded", batch * length)
        row.update(decode_s=seconds, tokens_per_s=tokens / seconds, us_per_token=seconds * 1e6 / tokens,
                   ms_per_step=seconds * 1e3 / length)
    if "state_bytes" in info:
        row["state_bytes"] = info["state_bytes"]
        row["state_mib"] = info["state_bytes"]["total"] / MIB
    if "encode_s" in info:
        row["encode_ms"] = info["encode_s"] * 1e3
    return row


def _mib(row: dict, part: str) -> Optional[float]:
    state = row.get("state_bytes")
    return None if state is None else state[part] / MIB


def _timing(config: dict) -> str:
    if config.get("sample_steps"):
        return (f"time estimated from {config['sample_windows']} windows of {config['sample_steps']} steps "
                f"per N (see notes)")
    if config["repeats"] == 0:
        return "timed: the (single) memory decode"
    return driver.header_timing(config)


def sizes_note(config: dict, methods: List[str]) -> str:
    sizes = sizes_of(config)
    return ", ".join(f"{m.upper() if m != 'abc' else 'ABC'} {'/'.join(map(str, sizes[m]))}"
                     for m in methods if m in sizes)


HEADERS = ("N", "method", "tokens/s", "ms/step", "x softmax speed", "state MiB", "self MiB", "cross MiB",
           "x softmax state", "peak MiB", "encode ms")
SAMPLED_NOTE = (
    "Exact for a step cost linear in the position; N <= steps x windows is decoded in full. It can "
    "understate softmax's cost (a cache grown step by step over a whole decode pays allocation "
    "and page-fault costs that a window does not), so check it against a full decode at one N "
    "before quoting speed-ups as more than low bounds.")


def markdown(rows: List[dict], env: dict, config: dict, memory_probes: List[str]) -> str:
    """The Markdown report: header, table, notes."""
    note_of, failures = report.failure_notes(rows)
    table_rows = [(
        row["N"], row["method"], status_cell(row, num(row.get("tokens_per_s"), ".1f"), note_of, i),
        num(row.get("ms_per_step"), ".2f"), ratio(row.get("speed_vs_softmax")),
        num(row.get("state_mib"), ".3f"), num(_mib(row, "self"), ".3f"), num(_mib(row, "cross"), ".3f"),
        ratio(row.get("state_vs_softmax")), num(row.get("peak_mib"), ".1f"), num(row.get("encode_ms"), ".1f"),
    ) for i, row in enumerate(rows)]
    methods = list(dict.fromkeys(row["method"] for row in rows))
    lines = [
        "# Greedy decoding, softmax vs " + (", ".join(m.upper() for m in methods if m != "softmax") or "-"),
        "",
        f"Batch {config['batch']}, source = target length N, exactly N steps; {config['encoder_layers']}+"
        f"{config['decoder_layers']} layers, dim {config['embed_dim']}, {config['heads']} heads, "
        f"FFN {config['ffn_dim']}, vocabulary {config['vocab']}; cross / causal sizes: "
        f"{sizes_note(config, methods) or '-'}; {report.machine_note(config, rows, env, _timing(config))}",
        "",
        report.markdown_table(HEADERS, table_rows, right_align=(True, False) + (True,) * 9),
        "",
        "Notes:",
        "",
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
        f"- peak MiB: peak memory increase over the baseline (model and encoder output exist) during "
        f"the first, untimed decode, in a fresh process (probe: {', '.join(memory_probes) or '-'}); "
        "it includes the one-off O(N) temporaries of projecting the encoder output for cross attention.",
    ]
    lines += [f"- {method}: {METHOD_NOTES[method]}" for method in methods]
    return "\n".join(lines + failures)


def plot_panels(rows: List[dict]) -> Tuple[Panel, Panel]:
    """The paper's Figures 1 and 2: decoding speed and attention memory against N, a line per method."""
    return (Panel("Greedy decoding speed (Figure 1)", "tokens per second (log)", series(rows, "tokens_per_s")),
            Panel("Attention memory: incremental state (Figure 2)", "MiB (log)", series(rows, "state_mib")))


def _abc_flat(rows: Dict[Tuple[str, int], dict]) -> dict:
    abc_lengths = sorted(n for method, n in rows if method == "abc")
    longest = abc_lengths[-1] if abc_lengths else None
    name = f"abc time per token at the longest N ({longest}) within 1.2x of N=256"
    if ("abc", 256) not in rows or longest is None or longest <= 256:
        return {"name": name, "status": "SKIP", "detail": "needs abc at N=256 and at a longer N"}
    if not (measured(rows[("abc", 256)], "us_per_token") and measured(rows[("abc", longest)], "us_per_token")):
        return {"name": name, "status": "FAIL", "detail": f"abc has no time at N=256 or N={longest}"}
    value = rows[("abc", longest)]["us_per_token"] / rows[("abc", 256)]["us_per_token"]
    return {"name": name, "status": "PASS" if value <= 1.2 else "FAIL", "value": value,
            "detail": f"us/token at N={longest} / at N=256 = {value:.2f} (need <= 1.2)"}


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


def summarise(rows: List[dict], env: dict, config: dict, memory_probes: List[str]) -> driver.Summary:
    """Ratios against softmax, the report, the targets and the two-panel plot."""
    add_relative(rows, "softmax", (("decode_s", "speed_vs_softmax", True),
                                          ("state_mib", "state_vs_softmax", False)))
    targets = check_targets({(row["method"], row["N"]): row for row in rows})
    text = markdown(rows, env, config, memory_probes) + "\n\n" + report.format_targets(targets) + "\n"
    title = (f"greedy decoding, batch {config['batch']}, {config['encoder_layers']}+{config['decoder_layers']} "
             f"layers, dim {config['embed_dim']}, {config['dtype']}, {config['device']}")
    return driver.Summary(text, targets, lambda path: save_panels(
        path, plot_panels(rows), xlabel="source = target length N (log2)", title=title))
