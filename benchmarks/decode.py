"""Greedy decoding speed and attention-state memory: softmax vs ABC, RFA, T2R (Figures 1-2).

Decodes random sources for exactly N steps at each N (source = target length) with random weights
through fairseq's incremental decoder API as SequenceGenerator calls it, without its beam
bookkeeping. The state is the bytes of fairseq's incremental state after the last step (decoder
self and cross attention apart in the JSON): softmax's grows with N, the others' do not."""

import argparse
from typing import Dict, List, Optional

from . import flags
from .fairseq_models import build_model, size_flags
from .harness import Case, Measurement, Suite
from .report import MIB, Column, Panel, Plot, compare, spread

DEFAULT_LENGTHS = [256, 512, 1024, 2048, 4096]
METHODS = ("softmax", "abc", "rfa", "t2r")
MODEL_KEYS = ("vocab", "encoder_layers", "decoder_layers", "embed_dim", "heads", "ffn_dim", "dtype")
STATE_PARTS = ("self", "cross", "other")
# Untimed steps decoded when a case is built: with --repeats 0 the timed call is the first one, and
# without them it would include the Triton kernels' compilation (the H100 run's ABC row at N = 512).
PRIMING_STEPS = 2


def add_size_flags(parser: argparse.ArgumentParser) -> None:
    """The cross / causal memory sizes of ABC, RFA and T2R (decode and generate)."""
    flags.add_flags(parser, ("--cross-memory", flags.positive_int, 32, "ABC cross attention slots"),
                    ("--causal-memory", flags.positive_int, 8, "ABC causal self attention slots"),
                    *((f"--{method}-memory", flags.positive_int, list(sizes), f"{method.upper()}'s cross and causal "
                       "feature sizes", {"nargs": 2, "metavar": ("CROSS", "CAUSAL")})
                      for method, sizes in (("rfa", (256, 128)), ("t2r", (32, 4)))))


def check_sizes(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    if "rfa" in args.methods and any(size % 2 for size in args.rfa_memory):
        parser.error(f"--rfa-memory {args.rfa_memory}: RFA's feature sizes must be even (sin and cos)")


def sizes_of(config: dict) -> Dict[str, List[int]]:
    """Method -> [cross, causal] memory (slots or features) of every non-softmax method."""
    return {"abc": [config["cross_memory"], config["causal_memory"]],
            "rfa": list(config["rfa_memory"]), "t2r": list(config["t2r_memory"])}


def sizes_note(config: dict, methods: List[str]) -> str:
    sizes = sizes_of(config)
    return ", ".join(f"{m.upper()} {'/'.join(map(str, sizes[m]))}" for m in methods if m in sizes)


def build_translation_model(params: dict):
    """(model, dictionary): fairseq's ``transformer`` (softmax) or ``abc_transformer`` with the method
    in decoder self and cross attention and a softmax encoder, eval mode, ready for generation."""
    method, length = params["method"], str(params["length"] + 8)
    argv = ["--task", "translation", "--arch", "transformer" if method == "softmax" else "abc_transformer",
            "--max-source-positions", length, "--max-target-positions", length,
            *size_flags(["encoder", "decoder"], None, params["embed_dim"], params["heads"], params["ffn_dim"]),
            "--encoder-layers", str(params["encoder_layers"]), "--decoder-layers", str(params["decoder_layers"])]
    if method != "softmax":
        cross, causal = params["sizes"][method]
        argv += ["--encoder-attn", "softmax", "--decoder-cross-attn", method, "--decoder-cross-memory", str(cross),
                 "--decoder-self-attn", method, "--decoder-self-memory", str(causal)]
    model, task = build_model(argv, params["vocab"])
    model.make_generation_fast_(need_attn=False)
    return model, task.target_dictionary


def state_bytes(incremental_state: dict, decoder) -> Dict[str, int]:
    """Bytes of the tensors in ``incremental_state`` (each storage once) by owner: ``self`` (decoder
    self attention), ``cross`` (encoder-decoder attention) or ``other``, and their ``total``."""
    import torch

    owner = {layer.self_attn._incremental_state_id: "self" for layer in decoder.layers}
    owner.update({layer.encoder_attn._incremental_state_id: "cross" for layer in decoder.layers
                  if getattr(layer, "encoder_attn", None) is not None})
    totals, seen = dict.fromkeys(STATE_PARTS, 0), set()
    for key, buffer in incremental_state.items():
        for tensor in (buffer or {}).values():
            if isinstance(tensor, torch.Tensor):
                storage = tensor.untyped_storage()
                if (storage.data_ptr(), storage.nbytes()) not in seen:
                    seen.add((storage.data_ptr(), storage.nbytes()))
                    totals[owner.get(key.rsplit(".", 1)[0], "other")] += storage.nbytes()
    totals["total"] = sum(totals[part] for part in STATE_PARTS)
    return totals


def greedy_step(model, tokens, t: int, encoder_out: dict, state: dict, pad: int) -> None:
    """Decode step t: the next token of every sentence, written to ``tokens[:, t + 1]`` (never
    padding), the incremental ``state`` advanced."""
    logits, _ = model.decoder(tokens[:, : t + 1], encoder_out=encoder_out, incremental_state=state)
    scores = logits[:, -1]
    scores[:, pad] = float("-inf")
    tokens[:, t + 1] = scores.argmax(dim=-1)


def greedy_decode(model, encoder_out: dict, steps: int, bos: int, pad: int):
    """Exactly ``steps`` greedy tokens per sentence, never stopping at eos, never padding (as
    SequenceGenerator); returns (tokens [B, steps + 1] from ``bos``, the incremental state)."""
    import torch

    memory = encoder_out["encoder_out"][0]
    tokens = torch.full((memory.shape[1], steps + 1), bos, dtype=torch.long, device=memory.device)
    state: dict = {}
    for t in range(steps):
        greedy_step(model, tokens, t, encoder_out, state, pad)
    return tokens, state


def check_targets(rows: dict) -> List[dict]:
    """ABC's decoding targets (informational); ``rows`` by (method, N)."""
    abc = [row for (method, _), row in sorted(rows.items(), key=lambda item: item[0][1]) if method == "abc"]
    flat = spread("abc time per token flat within 1.2x from N=256 to the longest N", [r for r in abc if r["N"] >= 256],
                  "us_per_token", 1.2, ends=(256,))
    faster = compare("abc >= 3x faster than softmax at N=4096", rows.get(("abc", 4096)), rows.get(("softmax", 4096)),
                     "decode_s", 3.0, True, ("abc at N=4096", "softmax"))
    return [flat, faster, spread("abc attention state the same size at every N", abc, "state_mib", 1.0)]


class DecodeSuite(Suite):
    name, description = "decode", __doc__
    progress = "{tokens_per_s:.1f} tokens/s, state {state_mib:.3f} MiB"
    call, baseline, cpu_peak = "decode", "model and encoder output exist", False
    tiny = {"length": 4, "batch": 1}
    columns = (Column("N", "N"), Column("method", "method", right=False),
               Column("tokens/s", "tokens_per_s", ".1f", status=True), Column("ms/step", "ms_per_step", ".2f"),
               Column("x softmax speed", "speed_vs_softmax", "x"), Column("state MiB", "state_mib", ".3f"),
               Column("x softmax state", "state_vs_softmax", "x"), Column("peak MiB", "peak_mib", ".1f"))
    relative = [("softmax", (("decode_s", "speed_vs_softmax", True), ("state_mib", "state_vs_softmax", False)))]
    plot = Plot("lines", (Panel("Greedy decoding speed (Figure 1)", "tokens per second (log)", "tokens_per_s"),
                          Panel("Attention memory: incremental state (Figure 2)", "MiB (log)", "state_mib")),
                xlabel="source = target length N (log2)")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        flags.add_flags(parser, ("--lengths", flags.positive_int, DEFAULT_LENGTHS, "source = target lengths N; N "
                                 "steps each", {"nargs": "+", "metavar": "N"}),
                        ("--batch", flags.positive_int, 16, "sentences decoded together"))
        flags.add_model_flags(parser, 32768, "vocabulary size of the synthetic task (source and target)",
                              {"--encoder-layers": 6, "--decoder-layers": 6}, embed_dim=512, heads=8, ffn_dim=2048)
        add_size_flags(parser)
        flags.add_flags(parser, flags.methods_flag(METHODS, list(METHODS), "models to measure"))
        flags.add_common_flags(parser, self, repeats=1, warmup=0, max_seconds=1800.0)
        parser.add_argument("--cuda-graph", action="store_true",
                            help="CUDA only: replay every decoder step after the first two from one CUDA graph "
                            "(all layers and the output projection; the embedding runs eagerly), for every "
                            "method but softmax, whose growing key / value cache a graph cannot hold "
                            "(benchmarks/graph_step.py)")

    def validate(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
        flags.check_model_flags(args, parser)
        check_sizes(args, parser)
        if args.cuda_graph and not args.device.startswith("cuda"):
            parser.error(f"--cuda-graph captures CUDA kernels: it needs --device cuda, got --device {args.device}")

    def measurements(self, args: argparse.Namespace) -> List[Measurement]:
        """One case per (method, N), N outermost."""
        params = dict({key: getattr(args, key) for key in MODEL_KEYS}, batch=args.batch, sizes=sizes_of(vars(args)),
                      cuda_graph=args.cuda_graph)
        return [Measurement(f"{method} N={length} batch={args.batch}", dict(params, method=method, length=length),
                            {"method": method, "N": length, "batch": args.batch})
                for length in args.lengths for method in args.methods]

    def build_case(self, params: dict, device) -> Case:
        """Model, sources and encoder output ready, the kernels compiled by ``PRIMING_STEPS`` untimed steps; the
        call decodes N steps and records the state's size."""
        import torch

        model, dictionary = build_translation_model(params)
        model = model.to(device=device, dtype=flags.DTYPES[params["dtype"]])
        B, N = params["batch"], params["length"]
        src = torch.randint(dictionary.nspecial, len(dictionary), (B, N), device=device)
        src[:, -1] = dictionary.eos()
        with torch.inference_mode():
            encoder_out = model.encoder(src, src_lengths=torch.full((B,), N, dtype=torch.long, device=device))
        with torch.inference_mode():  # compiles the kernels (and wakes cuBLAS) before any timed call
            greedy_decode(model, encoder_out, PRIMING_STEPS, dictionary.eos(), dictionary.pad())
        graph = bool(params.get("cuda_graph")) and params["method"] != "softmax"
        info = {"batch": B, "length": N, "parameters": sum(p.numel() for p in model.parameters()),
                "cuda_graph": graph}
        if graph:
            from .graph_step import graph_decode as decode
        else:
            decode = greedy_decode

        def run() -> None:
            with torch.inference_mode():
                tokens, state = decode(model, encoder_out, N, dictionary.eos(), dictionary.pad())
            info.update(tokens_decoded=int(tokens[:, 1:].numel()), state_bytes=state_bytes(state, model.decoder))

        return Case(run, info)

    def derive(self, row: dict, seconds: Optional[float]) -> None:
        info = row.get("info") or {}
        if seconds is not None:
            tokens = info.get("tokens_decoded", row["batch"] * row["N"])
            row.update(decode_s=seconds, tokens_per_s=tokens / seconds, us_per_token=seconds * 1e6 / tokens,
                       ms_per_step=seconds * 1e3 / row["N"])
        if "state_bytes" in info:
            row.update(state_bytes=info["state_bytes"], state_mib=info["state_bytes"]["total"] / MIB)

    def header(self, config: dict) -> str:
        return (f"Batch {config['batch']}, source = target length N, exactly N steps; {config['encoder_layers']}+"
                f"{config['decoder_layers']} layers, dim {config['embed_dim']}, {config['heads']} heads, "
                f"FFN {config['ffn_dim']}, vocabulary {config['vocab']}; cross / causal sizes: "
                f"{sizes_note(config, config['methods']) or '-'};")

    def notes(self, config: dict, rows: List[dict]) -> List[str]:
        return ["- Timing: fairseq's incremental decoder API (the encoder runs once before, untimed; then decoder "
                "and argmax per step); tokens/s = batch x N / decode time; x softmax = softmax time / method time.",
                "- state MiB: tensors in the incremental state after the last step (the JSON splits self and cross "
                "attention); x softmax state = method / softmax."] + (
                    ["- --cuda-graph: every step after the first two replayed from one CUDA graph (all layers and "
                     "the output projection), softmax eager (its cache grows)."] if config.get("cuda_graph") else [])

    def targets(self, rows: List[dict], config: dict) -> List[dict]:
        return check_targets({(row["method"], row["N"]): row for row in rows})


SUITE = DecodeSuite()
