"""``decode`` subcommand: greedy decoding speed and attention-state size of a translation model,
softmax against ABC (the paper's Figures 1 and 2).

A synthetic sequence-to-sequence task: random source tokens from a vocabulary of ``--vocab``
symbols, source and target of the same length N, random weights (only speed and memory are
measured). For each method and N, in a fresh process (``runner``):

1. build the model: fairseq's ``transformer`` (softmax everywhere) or ``abc_transformer`` (ABC
   cross attention with ``--cross-memory`` slots and causal self attention with
   ``--causal-memory``, softmax encoder), same dims for both;
2. encode the batch once (``encode ms``: reported, not part of the decoding time);
3. time greedy decoding of exactly N steps (no early stop at eos): fairseq's incremental decoder
   API called directly, ``model.decoder(tokens[:, :t + 1], encoder_out, incremental_state)`` and
   an argmax per step, as ``SequenceGenerator`` calls the decoder but without its beam
   bookkeeping, so the time is the decoder's (attention, FFN and output projection);
4. at the end of decoding, sum the bytes of every tensor held in the incremental state (each
   storage once), split into decoder self attention and cross attention. fairseq's softmax caches
   keys and values of every step and of the whole source, so this grows with N; ABC holds a
   constant-size causal state and the cross memory built once from the encoder output.

Outputs in --out-dir: decode.json, decode.md (the printed report) and decode.png.
"""

import argparse
import time
from typing import Dict, List, Optional, Tuple

from . import cli_types, driver
from .attention_methods import DTYPES
from .case import Case
from .environment import environment_info
from .memory import MIB
from .resources import add_output_flags, check_device_and_memory
from .plot import Panel, save_panels
from .table import markdown_table
from .timing import median

DESCRIPTION = """\
Greedy decoding speed and attention-state memory: softmax transformer vs ABC (Figures 1-2).

Decodes a batch of random sources for exactly N steps at each N (source length = target length),
each (method, N) in a fresh process, through fairseq's incremental decoder API (encoder once,
then decoder + argmax per step). Reports tokens per second, the bytes held by the attention
state in the incremental state at the end, and the peak memory increase while decoding. Prints a
Markdown table and PASS/FAIL targets (informational: the exit code is 0 unless the benchmark
itself crashes) and writes decode.json, decode.md and decode.png to --out-dir."""
PROG = "python -m abc_fairseq.benchmark"
DEFAULT_LENGTHS = [256, 512, 1024, 2048, 4096]
METHODS = ("softmax", "abc")
METHOD_NOTES = {
    "softmax": "fairseq `transformer`: softmax attention everywhere; its incremental state caches "
               "the keys and values of every decoded token and of the whole source.",
    "abc": "`abc_transformer`: ABC cross attention (--cross-memory slots) and causal self attention "
           "(--causal-memory slots), softmax encoder; constant-size state.",
}
STATE_PARTS = ("self", "cross", "other")


# ----------------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommand's flags."""
    parser.add_argument("--lengths", type=cli_types.positive_int, nargs="+", default=DEFAULT_LENGTHS,
                        metavar="N", help="source = target lengths N; exactly N greedy steps are decoded")
    parser.add_argument("--batch", type=cli_types.positive_int, default=16, help="sentences decoded together")
    parser.add_argument("--vocab", type=cli_types.positive_int, default=32768,
                        help="vocabulary size of the synthetic task (shared by source and target)")
    parser.add_argument("--encoder-layers", type=cli_types.positive_int, default=6, help="encoder layers")
    parser.add_argument("--decoder-layers", type=cli_types.positive_int, default=6, help="decoder layers")
    parser.add_argument("--embed-dim", type=cli_types.positive_int, default=512, help="model dimension")
    parser.add_argument("--heads", type=cli_types.positive_int, default=8, help="attention heads")
    parser.add_argument("--ffn-dim", type=cli_types.positive_int, default=2048, help="FFN hidden size")
    parser.add_argument("--cross-memory", type=cli_types.positive_int, default=32,
                        help="ABC cross attention slots (--decoder-cross-memory)")
    parser.add_argument("--causal-memory", type=cli_types.positive_int, default=8,
                        help="ABC causal self attention slots (--decoder-self-memory)")
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS),
                        metavar="METHOD", help=f"models to measure, from: {', '.join(METHODS)}")
    parser.add_argument("--repeats", type=cli_types.non_negative_int, default=1,
                        help="timed decodes per (method, N), after the untimed memory decode; the median "
                             "is reported. 0: report the time of the memory decode itself (one decode "
                             "per (method, N) instead of two; the default kernel high-water-mark probe "
                             "costs nothing while it runs)")
    parser.add_argument("--warmup", type=cli_types.non_negative_int, default=0,
                        help="untimed decodes before the timed ones (after the memory decode)")
    parser.add_argument("--sample-steps", type=cli_types.non_negative_int, default=0, metavar="S",
                        help="0 (default): decode and time all N steps. S > 0: time --sample-windows "
                             "windows of S greedy steps centred on equal segments of 0..N, each "
                             "continuing a cache of its start length, and estimate the whole decode as "
                             "the first step + (N - 1) x the mean step time (exact for step costs "
                             "linear in the position, as softmax's are; for CPU runs where softmax "
                             "would decode for hours). N <= S x windows is decoded in full")
    parser.add_argument("--sample-windows", type=cli_types.positive_int, default=4, metavar="K",
                        help="windows of --sample-steps steps per (method, N)")
    parser.add_argument("--threads", type=cli_types.positive_int, default=None,
                        help="torch intra-op threads in each worker (default: torch's own default)")
    parser.add_argument("--dtype", choices=list(DTYPES), default="float32", help="dtype of the weights")
    parser.add_argument("--device", default="cpu", help="torch device: cpu, or cuda / cuda:I")
    parser.add_argument("--seed", type=cli_types.non_negative_int, default=0, help="seed of weights and sources")
    parser.add_argument("--max-seconds", type=cli_types.positive_float, default=1800.0,
                        help="longest one whole decode may take; a method over it at some N is reported "
                             "as timeout for that N")
    add_output_flags(parser, "decode")


def validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Checks that involve several flags or the machine; errors name the flag."""
    args.lengths = sorted(set(args.lengths))
    args.methods = list(dict.fromkeys(args.methods))
    if args.embed_dim % args.heads:
        parser.error(f"--embed-dim {args.embed_dim} must be divisible by --heads {args.heads}")
    if args.vocab < 8:
        parser.error(f"--vocab {args.vocab} is too small: fairseq reserves 4 special symbols")
    check_device_and_memory(args, parser)


# ----------------------------------------------------------------------------- worker side
def synthetic_dictionary(size: int):
    """A fairseq Dictionary of exactly ``size`` symbols (4 specials + ``w0``, ``w1``, ...)."""
    from fairseq.data import Dictionary

    dictionary = Dictionary()
    for i in range(size - len(dictionary)):
        dictionary.add_symbol(f"w{i}")
    return dictionary


def build_model(params: dict, dictionary):
    """fairseq's ``transformer`` (method softmax) or ``abc_transformer`` (method abc) with the
    benchmark's dims, dropout 0, in eval mode, prepared for generation as fairseq-generate does."""
    from types import SimpleNamespace

    from fairseq.models.transformer import TransformerModel, base_architecture

    from abc_fairseq.models.abc_transformer import ABCTransformerModel, abc_transformer

    positions = params["length"] + 8
    args = argparse.Namespace(
        encoder_layers=params["encoder_layers"], decoder_layers=params["decoder_layers"],
        encoder_embed_dim=params["embed_dim"], decoder_embed_dim=params["embed_dim"],
        encoder_attention_heads=params["heads"], decoder_attention_heads=params["heads"],
        encoder_ffn_embed_dim=params["ffn_dim"], decoder_ffn_embed_dim=params["ffn_dim"],
        dropout=0.0, max_source_positions=positions, max_target_positions=positions,
    )
    task = SimpleNamespace(source_dictionary=dictionary, target_dictionary=dictionary)
    if params["method"] == "abc":
        args.decoder_cross_attn, args.decoder_cross_memory = "abc", params["cross_memory"]
        args.decoder_self_attn, args.decoder_self_memory = "abc", params["causal_memory"]
        args.encoder_attn = "softmax"
        abc_transformer(args)
        model = ABCTransformerModel.build_model(args, task)
    else:
        base_architecture(args)
        model = TransformerModel.build_model(args, task)
    model.eval()
    model.make_generation_fast_(need_attn=False)
    return model


def state_bytes(incremental_state: dict, decoder) -> Dict[str, int]:
    """Bytes of the tensors in fairseq's ``incremental_state`` (each storage counted once), by
    owner: ``self`` (decoder self attention), ``cross`` (encoder-decoder attention), ``other``."""
    import torch

    owner = {}
    for layer in decoder.layers:
        owner[layer.self_attn._incremental_state_id] = "self"
        if getattr(layer, "encoder_attn", None) is not None:
            owner[layer.encoder_attn._incremental_state_id] = "cross"
    totals = dict.fromkeys(STATE_PARTS, 0)
    seen = set()
    for key, buffer in incremental_state.items():
        part = owner.get(key.rsplit(".", 1)[0], "other")
        for tensor in (buffer or {}).values():
            if not isinstance(tensor, torch.Tensor):
                continue
            storage = tensor.untyped_storage()
            ident = (storage.data_ptr(), storage.nbytes())
            if ident not in seen:
                seen.add(ident)
                totals[part] += storage.nbytes()
    totals["total"] = sum(totals[part] for part in STATE_PARTS)
    return totals


def _new_tokens(encoder_out: dict, steps: int, bos: int):
    """[B, steps + 1] token buffer, all ``bos``, on the encoder output's device."""
    import torch

    memory = encoder_out["encoder_out"][0]
    return torch.full((memory.shape[1], steps + 1), bos, dtype=torch.long, device=memory.device)


def greedy_step(model, encoder_out: dict, tokens, t: int, incremental_state: dict, pad: int) -> None:
    """Decode position t + 1 from tokens[:, :t + 1] in place (argmax, never padding)."""
    logits, _ = model.decoder(tokens[:, : t + 1], encoder_out=encoder_out, incremental_state=incremental_state)
    scores = logits[:, -1]
    scores[:, pad] = float("-inf")
    tokens[:, t + 1] = scores.argmax(dim=-1)


def greedy_decode(model, encoder_out: dict, steps: int, bos: int, pad: int):
    """Decode exactly ``steps`` tokens per sentence, argmax each step, never stopping at eos;
    padding is never chosen (as in fairseq's SequenceGenerator).

    encoder_out: the encoder's output dict (``encoder_out[0]``: [S, B, C]).
    Returns (tokens [B, steps + 1] starting with ``bos``, the incremental state at the end).
    """
    tokens = _new_tokens(encoder_out, steps, bos)
    incremental_state: dict = {}
    for t in range(steps):
        greedy_step(model, encoder_out, tokens, t, incremental_state, pad)
    return tokens, incremental_state


def window_starts(length: int, steps: int, windows: int) -> List[int]:
    """First positions of ``windows`` windows of ``steps`` steps, centred on equal segments of
    0..length (the midpoint rule), inside 1..length - steps (step 0 is timed on its own)."""
    starts = []
    for j in range(windows):
        centre = (j + 0.5) * length / windows
        starts.append(int(min(max(1, round(centre - steps / 2)), length - steps)))
    return starts


def continue_cache(decoder, incremental_state: dict, length: int) -> None:
    """Make every softmax (fairseq MultiheadAttention) self-attention cache hold ``length`` past
    tokens, as after ``length`` decoding steps, by repeating the one it holds: the cost of a step
    depends on the cache's size, not its values. Constant-size (ABC) states are left as they are."""
    from fairseq.modules import MultiheadAttention

    for layer in decoder.layers:
        attention = layer.self_attn
        if type(attention) is not MultiheadAttention:
            continue
        buffer = attention._get_input_buffer(incremental_state)
        for name in ("prev_key", "prev_value"):
            buffer[name] = buffer[name][:, :, -1:].repeat(1, 1, length, 1)
        if buffer.get("prev_key_padding_mask") is not None:  # [B, T]: no padding in the prefix
            buffer["prev_key_padding_mask"] = buffer["prev_key_padding_mask"][:, -1:].repeat(1, length)
        attention._set_input_buffer(incremental_state, buffer)


def sampled_decode(model, encoder_out: dict, length: int, steps: int, windows: int, bos: int, pad: int,
                   synchronize=lambda: None) -> Tuple[float, int, dict]:
    """Estimate the time of a greedy decode of ``length`` steps from ``windows`` windows of
    ``steps`` steps (see ``window_starts``). Each window starts from a fresh incremental state:
    one real step (timed once, it also builds the cross-attention cache), then a cache grown to
    the window's start (``continue_cache``) and ``steps`` timed greedy steps.

    Returns (estimated seconds: first step + (length - 1) x mean step, steps timed, the
    incremental state after a final step at position ``length - 1``, i.e. holding ``length``
    tokens).
    """
    tokens = _new_tokens(encoder_out, length, bos)

    def step(t: int, state: dict) -> None:
        greedy_step(model, encoder_out, tokens, t, state, pad)

    first_s, timed_s, timed_steps = [], 0.0, 0
    for start in window_starts(length, steps, windows) + [length - 1]:
        state: dict = {}
        begin = time.perf_counter()
        step(0, state)
        synchronize()
        first_s.append(time.perf_counter() - begin)
        continue_cache(model.decoder, state, start)
        if start == length - 1:  # the final, untimed step: the state at the end of a decode
            step(start, state)
            break
        begin = time.perf_counter()
        for t in range(start, start + steps):
            step(t, state)
        synchronize()
        timed_s += time.perf_counter() - begin
        timed_steps += steps
    estimate = median(first_s) + (length - 1) * timed_s / timed_steps
    return estimate, timed_steps, state


def build_case(params: dict, device) -> Case:
    """The worker's entry point: model, sources and encoder output ready; ``run`` decodes.

    ``run`` stores the state sizes of its last decode in ``info["state_bytes"]`` (the worker
    reports ``info`` with the result, after the calls).
    """
    import torch

    dtype = DTYPES[params["dtype"]]
    dictionary = synthetic_dictionary(params["vocab"])
    model = build_model(params, dictionary).to(device=device, dtype=dtype)
    B, N = params["batch"], params["length"]
    src = torch.randint(dictionary.nspecial, len(dictionary), (B, N), device=device)
    src[:, -1] = dictionary.eos()
    src_lengths = torch.full((B,), N, dtype=torch.long, device=device)
    with torch.inference_mode():
        start = time.perf_counter()
        encoder_out = model.encoder(src, src_lengths=src_lengths)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        encode_s = time.perf_counter() - start
    info = {"batch": B, "length": N, "encode_s": encode_s,
            "parameters": sum(p.numel() for p in model.parameters())}

    steps, windows = params.get("sample_steps", 0), params.get("sample_windows", 1)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)

    def run() -> None:
        with torch.inference_mode():
            if steps and N > steps * windows:
                estimate, timed, incremental_state = sampled_decode(
                    model, encoder_out, N, steps, windows, dictionary.eos(), dictionary.pad(), sync)
                info.update(estimated_decode_s=estimate, steps_timed=timed)
                info["tokens_decoded"] = B * N
            else:
                tokens, incremental_state = greedy_decode(model, encoder_out, N, dictionary.eos(), dictionary.pad())
                info["tokens_decoded"] = int(tokens[:, 1:].numel())
            info["state_bytes"] = state_bytes(incremental_state, model.decoder)

    return Case(run, info)


def prime(params: dict, device) -> None:
    """A 4-step decode at the same dims, so thread pools and lazy kernels exist before the
    memory baseline."""
    build_case(dict(params, length=min(params["length"], 4), batch=1), device).run()


# ----------------------------------------------------------------------------- rows and report
def make_row(method: str, length: int, batch: int, result: dict) -> dict:
    """One JSON/table row from a worker result."""
    row = {"method": method, "N": length, "batch": batch, **result}
    info = result.get("info") or {}
    times = result.get("times_s") or []
    if row.get("status") == "ok" and times:
        # A sampled run (--sample-steps) reports its own estimate; its wall time includes the
        # untimed cache building.
        seconds = info.get("estimated_decode_s") or median(times)
        tokens = info.get("tokens_decoded", batch * length)
        row.update(decode_s=seconds, tokens_per_s=tokens / seconds, us_per_token=seconds * 1e6 / tokens,
                   ms_per_step=seconds * 1e3 / length)
    if "state_bytes" in info:
        row["state_bytes"] = info["state_bytes"]
        row["state_mib"] = info["state_bytes"]["total"] / MIB
    if "encode_s" in info:
        row["encode_ms"] = info["encode_s"] * 1e3
    if "peak_bytes" in result:
        row["peak_mib"] = result["peak_bytes"] / MIB
    return row


def add_relative(rows: List[dict]) -> None:
    """``speed_vs_softmax`` (softmax time / method time) and ``state_vs_softmax`` at the same N."""
    softmax = {row["N"]: row for row in rows if row["method"] == "softmax"}
    for row in rows:
        ref = softmax.get(row["N"]) or {}
        row["speed_vs_softmax"] = (ref["decode_s"] / row["decode_s"]
                                   if "decode_s" in ref and "decode_s" in row else None)
        row["state_vs_softmax"] = (row["state_mib"] / ref["state_mib"]
                                   if ref.get("state_mib") and row.get("state_mib") is not None else None)


def _num(value, spec: str) -> str:
    return "-" if value is None else f"{value:{spec}}"


def _ratio(value) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def _mib(row: dict, part: str) -> Optional[float]:
    state = row.get("state_bytes")
    return None if state is None else state[part] / MIB


def _timing(config: dict) -> str:
    if config.get("sample_steps"):
        return (f"time estimated from {config['sample_windows']} windows of {config['sample_steps']} steps "
                f"per N (see notes)")
    if config["repeats"] == 0:
        return "timed: the (single) memory decode"
    return f"median of {config['repeats']} after {config['warmup']} warmup"


HEADERS = ("N", "method", "tokens/s", "ms/step", "x softmax speed", "state MiB", "self MiB", "cross MiB",
           "x softmax state", "peak MiB", "encode ms")


def report(rows: List[dict], env: dict, config: dict, memory_probes: List[str]) -> str:
    """The Markdown report: header, table, notes."""
    table_rows, failures = [], []
    for row in rows:
        ok = row.get("status") == "ok"
        if not ok:
            failures.append(f"- {row['method']} N={row['N']}: {row.get('status')}: "
                            f"{' '.join(str(row.get('message', '')).split())[:300]}")
        table_rows.append((
            row["N"], row["method"],
            _num(row.get("tokens_per_s"), ".1f") if ok else f"{row.get('status')} [{len(failures)}]",
            _num(row.get("ms_per_step"), ".2f"), _ratio(row.get("speed_vs_softmax")),
            _num(row.get("state_mib"), ".3f"), _num(_mib(row, "self"), ".3f"), _num(_mib(row, "cross"), ".3f"),
            _ratio(row.get("state_vs_softmax")), _num(row.get("peak_mib"), ".1f"), _num(row.get("encode_ms"), ".1f"),
        ))
    threads = sorted({row["threads"] for row in rows if row.get("threads")})
    lines = [
        "# Greedy decoding, softmax vs ABC",
        "",
        f"Batch {config['batch']}, source = target length N, exactly N steps; {config['encoder_layers']}+"
        f"{config['decoder_layers']} layers, dim {config['embed_dim']}, {config['heads']} heads, "
        f"FFN {config['ffn_dim']}, vocabulary {config['vocab']}; ABC cross {config['cross_memory']} / causal "
        f"{config['causal_memory']} slots; {config['dtype']} on {config['device']}; {_timing(config)}; "
        f"threads {', '.join(map(str, threads)) or '-'}; "
        f"torch {env['torch']}; CPU {env['cpu_model']}.",
        "",
        markdown_table(HEADERS, table_rows, right_align=(True, False) + (True,) * 9),
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
        lines += [
            f"- Sampled timing (--sample-steps {config['sample_steps']} --sample-windows "
            f"{config['sample_windows']}): decode time = first step + (N - 1) x the mean time of the "
            "steps in windows centred on equal segments of 0..N, each continuing a cache of its start "
            "length (softmax: its key/value cache grown to that length; ABC: its constant-size state). "
            "Exact for a step cost linear in the position; N <= steps x windows is decoded in full. It can "
            "understate softmax's cost (a cache grown step by step over a whole decode pays allocation "
            "and page-fault costs that a window does not), so check it against a full decode at one N "
            "before quoting speed-ups as more than low bounds.",
        ]
    lines += [
        "- state MiB: bytes of all tensors in the incremental state after the last step (self = "
        "decoder self attention, cross = encoder-decoder attention); x softmax state = method / softmax.",
        f"- peak MiB: peak memory increase over the baseline (model and encoder output exist) during "
        f"the first, untimed decode, in a fresh process (probe: {', '.join(memory_probes) or '-'}); "
        "it includes the one-off O(N) temporaries of projecting the encoder output for cross attention.",
    ]
    methods = list(dict.fromkeys(row["method"] for row in rows))
    lines += [f"- {method}: {METHOD_NOTES[method]}" for method in methods]
    if failures:
        lines += ["", "Failures:", ""] + failures
    return "\n".join(lines)


def plot_panels(rows: List[dict]) -> Tuple[Panel, Panel, Panel]:
    """Tokens per second, attention state and peak memory against N, one line per method."""
    series: Tuple[Dict[str, list], Dict[str, list], Dict[str, list]] = ({}, {}, {})
    for row in rows:
        for panel, key in zip(series, ("tokens_per_s", "state_mib", "peak_mib")):
            if row.get("status") == "ok" and row.get(key) is not None:
                panel.setdefault(row["method"], []).append((row["N"], row[key]))
    return (
        Panel("Greedy decoding speed", "tokens per second (log)", series[0]),
        Panel("Attention state in the incremental state", "MiB (log)", series[1]),
        Panel("Peak memory increase while decoding", "MiB (log)", series[2]),
    )


# ----------------------------------------------------------------------------- targets
def _ok(row: Optional[dict], key: str) -> bool:
    return bool(row) and row.get("status") == "ok" and row.get(key) is not None


def check_targets(rows: Dict[Tuple[str, int], dict]) -> List[dict]:
    """ABC's decoding targets (informational): PASS, FAIL, or SKIP when a needed (method, N) was
    not measured. ABC failing at a needed N is a FAIL; the softmax reference failing is a SKIP."""
    targets = []
    abc_lengths = sorted(n for method, n in rows if method == "abc")
    longest = abc_lengths[-1] if abc_lengths else None

    name = f"abc time per token at the longest N ({longest}) within 1.2x of N=256"
    if ("abc", 256) not in rows or longest is None or longest <= 256:
        targets.append({"name": name, "status": "SKIP", "detail": "needs abc at N=256 and at a longer N"})
    elif not (_ok(rows[("abc", 256)], "us_per_token") and _ok(rows[("abc", longest)], "us_per_token")):
        targets.append({"name": name, "status": "FAIL", "detail": f"abc has no time at N=256 or N={longest}"})
    else:
        ratio = rows[("abc", longest)]["us_per_token"] / rows[("abc", 256)]["us_per_token"]
        targets.append({"name": name, "status": "PASS" if ratio <= 1.2 else "FAIL", "value": ratio,
                        "detail": f"us/token at N={longest} / at N=256 = {ratio:.2f} (need <= 1.2)"})

    name = "abc >= 3x faster than softmax at N=4096"
    abc, soft = rows.get(("abc", 4096)), rows.get(("softmax", 4096))
    if abc is None or soft is None:
        targets.append({"name": name, "status": "SKIP", "detail": "needs abc and softmax at N=4096"})
    elif not _ok(soft, "decode_s"):
        targets.append({"name": name, "status": "SKIP", "detail": f"softmax at N=4096: {soft.get('status')}"})
    elif not _ok(abc, "decode_s"):
        targets.append({"name": name, "status": "FAIL", "detail": f"abc at N=4096: {abc.get('status')}"})
    else:
        speedup = soft["decode_s"] / abc["decode_s"]
        targets.append({"name": name, "status": "PASS" if speedup >= 3 else "FAIL", "value": speedup,
                        "detail": f"abc decodes {speedup:.2f}x softmax's speed (need >= 3x)"})

    name = "abc attention state the same size at every N"
    measured = {n: rows[("abc", n)] for n in abc_lengths}
    if len(measured) < 2:
        targets.append({"name": name, "status": "SKIP", "detail": "needs abc at two or more lengths"})
    elif not all(_ok(row, "state_bytes") for row in measured.values()):
        targets.append({"name": name, "status": "FAIL", "detail": "abc has no state size at some N"})
    else:
        sizes = {n: row["state_bytes"]["total"] for n, row in measured.items()}
        same = len(set(sizes.values())) == 1
        targets.append({"name": name, "status": "PASS" if same else "FAIL",
                        "detail": "bytes by N: " + ", ".join(f"{n}: {b}" for n, b in sizes.items())})
    return targets


def format_targets(targets: List[dict]) -> str:
    lines = ["## Targets (informational)", ""]
    lines += [f"- {t['status']}: {t['name']} -- {t['detail']}" for t in targets]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- driver
MODEL_KEYS = ("vocab", "encoder_layers", "decoder_layers", "embed_dim", "heads", "ffn_dim", "cross_memory",
              "causal_memory", "dtype")


def _case(args: argparse.Namespace, method: str, length: int) -> driver.Measurement:
    params = {key: getattr(args, key) for key in MODEL_KEYS}
    params.update(method=method, length=length, batch=args.batch, sample_steps=args.sample_steps,
                  sample_windows=args.sample_windows)
    return driver.Measurement(f"{method} N={length} batch={args.batch}",
                       driver.worker_spec(args, f"{__name__}:build_case", params),
                       lambda result: make_row(method, length, args.batch, result))


def _describe(row: dict) -> str:
    return (f"{row['tokens_per_s']:.1f} tokens/s, state {row.get('state_mib', 0):.3f} MiB, "
            f"peak {row.get('peak_mib', 0):.1f} MiB")


def run(args: argparse.Namespace) -> int:
    """Measure every (method, N), print the report and targets, write the output files."""
    validate(args, args._parser)
    env = environment_info(PROG, args.argv, args.device)
    cases = [_case(args, method, length) for length in args.lengths for method in args.methods]
    record = driver.measure("decode", args, env, cases, _describe)
    rows = record["results"]
    add_relative(rows)
    targets = check_targets({(row["method"], row["N"]): row for row in rows})
    text = report(rows, env, record["config"], driver.memory_probes(rows)) + "\n\n" + format_targets(targets) + "\n"
    title = (f"greedy decoding, batch {args.batch}, {args.encoder_layers}+{args.decoder_layers} layers, "
             f"dim {args.embed_dim}, ABC {args.cross_memory}/{args.causal_memory}, {args.dtype}, {args.device}")
    driver.publish("decode", args, record, text, targets, lambda path: save_panels(
        path, plot_panels(rows), xlabel="source = target length N (log2)", title=title))
    return 0
