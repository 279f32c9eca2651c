"""Text encoding, RoBERTa-base encoder: speed and peak memory of softmax, Linformer and ABC.

Encodes random sequences of each of --lengths tokens (the same tokens per batch at every length)
with random weights: one call is model(tokens [B, N], features_only=True) of abc_roberta under
torch.inference_mode(), eval mode, no padding, no LM head. The paper's Table 4, efficiency columns."""

import argparse
from typing import List, Optional

from . import flags
from .fairseq_models import build_model, size_flags
from .harness import Case, Measurement, Suite
from .report import Column, Panel, Plot, compare

DEFAULT_LENGTHS = [512, 2048, 4096]
KINDS = ("softmax", "softmax-unfused", "linformer", "abc")
MODEL_KEYS = ("vocab", "layers", "embed_dim", "heads", "ffn_dim", "dtype")


def fairseq_argv(params: dict) -> List[str]:
    """The ``fairseq-train`` flags of the case's ``abc_roberta`` (dropout 0)."""
    length, kind = params["length"], params["kind"]
    return ["--task", "masked_lm", "--arch", "abc_roberta_base", "--dropout", "0", "--attention-dropout", "0",
            "--tokens-per-sample", str(length), "--max-positions", str(length),
            "--encoder-attn", "softmax" if kind == "softmax-unfused" else kind,
            "--encoder-memory", str(params["memory"] or 1),
            *size_flags(["encoder"], params["layers"], params["embed_dim"], params["heads"], params["ffn_dim"])]


def build_encoder(params: dict):
    """The case's model; ``softmax-unfused`` on fairseq's own attention code instead of
    ``F.multi_head_attention_forward``."""
    model, _ = build_model(fairseq_argv(params), params["vocab"])
    for layer in model.encoder.sentence_encoder.layers if params["kind"] == "softmax-unfused" else ():
        layer.self_attn.skip_embed_dim_check = True
    return model


def check_targets(rows: dict) -> List[dict]:
    """At 512 ABC-64 >= 1.15x faster than and <= 0.6x the memory of softmax-unfused (the paper's
    baseline); at 4,096 faster than fused softmax; ``rows`` by (method, N)."""
    return [compare(name, rows.get(("abc-64", n)), rows.get((reference, n)), key, bound, faster,
                    (f"abc-64 at N={n}", reference)) for name, n, reference, key, bound, faster in (
        ("abc-64 >= 1.15x faster than softmax-unfused at N=512", 512, "softmax-unfused", "encode_s", 1.15, True),
        ("abc-64 peak memory <= 0.6x softmax-unfused's at N=512", 512, "softmax-unfused", "peak_mib", 0.6, False),
        ("abc-64 faster than fused softmax at N=4096", 4096, "softmax", "encode_s", 1 + 1e-9, True))]


class EncodeSuite(Suite):
    name, description, progress = "encode", __doc__, "{ms_per_batch:.1f} ms/batch, peak {peak_mib:.1f} MiB"
    call, baseline = "forward", "model and tokens exist"
    tiny = {"length": 16, "batch": 1, "vocab": 64}
    columns = (Column("N", "N"), Column("batch", "batch"), Column("method", "method", right=False),
               Column("n", "memory", "d"), Column("ms / batch", "ms_per_batch", ".1f", status=True),
               Column("sequences/s", "sequences_per_s", ".2f"),
               *(Column(f"{what} vs {ref}", f"{what}_vs_{ref}", "x") for ref in ("softmax", "unfused")
                 for what in ("speed", "memory")), Column("peak MiB", "peak_mib", ".1f"))
    relative = [(reference, (("encode_s", f"speed_vs_{suffix}", True), ("peak_mib", f"memory_vs_{suffix}", False)))
                for reference, suffix in (("softmax", "softmax"), ("softmax-unfused", "unfused"))]
    plot = Plot("lines", (Panel("Speed relative to softmax (higher: faster)", "ratio (log)", "speed_vs_softmax"),
                          Panel("Peak memory relative to softmax", "ratio (log)", "memory_vs_softmax")),
                xlabel="tokens per sequence N (log2)", baseline=1.0)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--lengths", "--length", type=flags.positive_int, nargs="+", default=DEFAULT_LENGTHS,
                            metavar="N", help="tokens per sequence N, one or more")
        flags.add_flags(parser, ("--batch", flags.positive_int, 16, "sequences per batch at the shortest N; every N "
                                 "encodes batch x shortest N tokens per batch"),
                        ("--memories", flags.positive_int, [64, 128], "memory sizes of Linformer and ABC",
                         {"nargs": "+", "metavar": "n"}),
                        flags.methods_flag(KINDS, list(KINDS), "attention kinds to measure"))
        flags.add_model_flags(parser, 50265, "vocabulary size (RoBERTa's is 50265)", {"--layers": 12},
                              embed_dim=768, heads=12, ffn_dim=3072)
        flags.add_common_flags(parser, self, repeats=5, warmup=1, max_seconds=600.0)

    def validate(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
        flags.check_model_flags(args, parser)
        if args.batch * args.lengths[0] < args.lengths[-1]:
            parser.error(f"--batch {args.batch} x the shortest of --lengths ({args.lengths[0]}) is fewer tokens "
                         f"than one sequence of the longest ({args.lengths[-1]})")

    def measurements(self, args: argparse.Namespace) -> List[Measurement]:
        """One case per (method, N), N outermost: softmax once, the others per memory size."""
        methods = [(kind, n) for kind in args.methods
                   for n in ([None] if kind.startswith("softmax") else args.memories)]
        items = []
        for length in args.lengths:
            batch = args.batch * args.lengths[0] // length  # the same tokens per batch at every N
            for kind, memory in methods:
                label = kind if memory is None else f"{kind}-{memory}"
                params = dict({key: getattr(args, key) for key in MODEL_KEYS}, kind=kind, memory=memory,
                              length=length, batch=batch)
                items.append(Measurement(f"{label} batch={batch} N={length}", params, {
                    "method": label, "kind": kind, "memory": memory, "N": length, "batch": batch}))
        return items

    def build_case(self, params: dict, device) -> Case:
        """Model and tokens [B, N] ready; the call encodes them once."""
        import torch

        model = build_encoder(params).to(device=device, dtype=flags.DTYPES[params["dtype"]])
        tokens = torch.randint(4, len(model.encoder.dictionary), (params["batch"], params["length"]), device=device)
        tokens[:, 0] = 0  # <s>
        info = {"batch": params["batch"], "length": params["length"],
                "parameters": sum(p.numel() for p in model.parameters())}

        def run() -> None:
            with torch.inference_mode():
                info["output_shape"] = list(model(tokens, features_only=True)[0].shape)

        return Case(run, info)

    def derive(self, row: dict, seconds: Optional[float]) -> None:
        if seconds is not None:
            row.update(encode_s=seconds, ms_per_batch=seconds * 1e3, sequences_per_s=row["batch"] / seconds,
                       tokens_per_s=row["batch"] * row["N"] / seconds)

    def header(self, config: dict) -> str:
        return (f"{config['batch'] * config['lengths'][0]} tokens per batch (batch {config['batch']} x "
                f"{config['lengths'][0]} tokens at the shortest N); {config['layers']} layers, dim "
                f"{config['embed_dim']}, {config['heads']} heads, FFN {config['ffn_dim']}, vocabulary "
                f"{config['vocab']}; random weights;")

    def notes(self, config: dict, rows: List[dict]) -> List[str]:
        return ["- One forward = `model(tokens, features_only=True)` under `torch.inference_mode()`, no LM head.",
                "- speed vs X = X's time / method time; memory vs X = method peak / X's peak; X = softmax (fused) or "
                "softmax-unfused at the same N."]

    def targets(self, rows: List[dict], config: dict) -> List[dict]:
        return check_targets({(row["method"], row["N"]): row for row in rows})


SUITE = EncodeSuite()
