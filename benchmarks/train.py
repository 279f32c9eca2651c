"""Training throughput through fairseq's trainer: ABC vs softmax LM and MT models (and, when named,
the quickstart's LM with ABC against the same with gated slot attention).

A few updates of each case with fairseq.trainer.Trainer: model, criterion and Adam come from
fairseq's own training flags as fairseq-train builds them (--fp16 on CUDA by default, --cpu); one
call is trainer.train_step([sample]) on random batches: LM samples [batch, length], target the
next token; MT pairs of length source and target tokens (each ending in </s>). The memory baseline
is the model before the optimizer exists, so the optimizer state counts. The size flags and
--lm-args / --mt-args shrink the models for CPU runs."""

import argparse
import shlex
from typing import List, NamedTuple, Optional, Tuple

from . import flags
from .fairseq_models import fairseq_setup, size_flags
from .harness import Case, Measurement, Suite
from .report import Column, Panel, Plot, compare

TARGET_SPEED = 0.85  # ABC's training throughput relative to softmax's
GSA_TARGET_SPEED = 1 / 1.2  # GSA's relative to ABC's: at most 1.2x its training time


class TrainCase(NamedTuple):
    kind: str  # "lm" or "mt"
    arch: str
    pair: Optional[str] = None  # the case its speed and memory are compared with (None: a reference)
    min_speed: float = TARGET_SPEED  # the target: its throughput over the pair's
    flags: Tuple[str, ...] = ()  # its own fairseq-train flags


CASES = {
    "abc_lm_wiki103": TrainCase("lm", "abc_lm_wiki103", "transformer_lm_wiki103"),
    "transformer_lm_wiki103": TrainCase("lm", "transformer_lm_wiki103"),
    "abc_transformer_wmt_en_de": TrainCase("mt", "abc_transformer_wmt_en_de", "transformer_wmt_en_de"),
    "transformer_wmt_en_de": TrainCase("mt", "transformer_wmt_en_de"),
    # The quickstart's model (no adaptive softmax): ABC, and GSA against it.
    "abc_lm_small": TrainCase("lm", "abc_lm_small", flags=("--criterion", "cross_entropy")),
    "gsa_lm_small": TrainCase("lm", "abc_lm_small", "abc_lm_small", GSA_TARGET_SPEED,
                              ("--criterion", "cross_entropy", "--decoder-self-attn", "gsa")),
}
DEFAULT_CASES = ("abc_lm_wiki103", "transformer_lm_wiki103", "abc_transformer_wmt_en_de", "transformer_wmt_en_de")
DEFAULT_VOCAB = {"lm": 267744, "mt": 32768}  # WikiText-103's word vocabulary; a joined WMT BPE
DEFAULT_TOKENS_PER_BATCH = 4096  # fairseq's WikiText-103 and WMT recipes' --max-tokens per GPU
KIND_FLAGS = {  # the fairseq flags of each kind beyond the architecture (fairseq's WikiText-103 and WMT recipes)
    "lm": ["--task", "language_modeling", "--criterion", "adaptive_loss", "--ddp-backend", "legacy_ddp"],
    "mt": ["--task", "translation", "--source-lang", "src", "--target-lang", "tgt", "--share-all-embeddings",
           "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1"]}
OPTIMIZER_FLAGS = ["--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr", "1e-4", "--clip-norm", "0.0"]
MODEL_KEYS = ("layers", "embed_dim", "heads", "ffn_dim", "dtype", "seed")


def fairseq_argv(params: dict, on_cuda: bool) -> List[str]:
    """The case's ``fairseq-train`` flags (the synthetic task never reads its data folder)."""
    kind, length = params["kind"], str(params["length"])
    case = CASES[params["case"]]
    argv = ["--arch", case.arch, "--seed", str(params.get("seed", 1)), *KIND_FLAGS[kind], *OPTIMIZER_FLAGS]
    argv += ["--tokens-per-sample", length] if kind == "lm" else \
        ["--max-source-positions", length, "--max-target-positions", length]
    argv += (["--fp16"] if params["dtype"] == "float16" else []) + ([] if on_cuda else ["--cpu"])
    sides = ["decoder"] if kind == "lm" else ["encoder", "decoder"]
    argv += size_flags(sides, params.get("layers"), params.get("embed_dim"), params.get("heads"), params.get("ffn_dim"))
    if kind == "lm" and params.get("embed_dim") is not None:  # the adaptive input and output follow the model
        argv += ["--decoder-input-dim", str(params["embed_dim"]), "--decoder-output-dim", str(params["embed_dim"])]
    return argv + list(case.flags) + shlex.split(params.get("model_args") or "")


def synthetic_sample(params: dict, dictionary, generator) -> dict:
    """One batch in fairseq's collated form, on the CPU (the trainer moves it, as real batches)."""
    import torch

    B, N = params["batch"], params["length"]
    tokens = torch.randint(dictionary.nspecial, len(dictionary), (B, N + 1), generator=generator)
    sample = {"id": torch.arange(B), "nsentences": B, "ntokens": B * N}
    if params["kind"] == "lm":
        return dict(sample, net_input={"src_tokens": tokens[:, :N].contiguous(), "src_lengths": torch.full((B,), N)},
                    target=tokens[:, 1:].contiguous())
    source = torch.randint(dictionary.nspecial, len(dictionary), (B, N), generator=generator)
    target = tokens[:, 1:].clone()
    source[:, -1] = target[:, -1] = dictionary.eos()
    previous = torch.cat([torch.full((B, 1), dictionary.eos()), target[:, :-1]], dim=1)
    return dict(sample, target=target, net_input={"src_tokens": source, "src_lengths": torch.full((B,), N),
                                                  "prev_output_tokens": previous})


def attention_modules(model) -> List[str]:
    """Each distinct attention module of the model as ``Class(extra_repr)``: what was trained."""
    return sorted({type(module).__name__ + (f"({module.extra_repr()})" if module.extra_repr() else "")
                   for name, module in model.named_modules() if name.endswith(("self_attn", "encoder_attn"))})


def loss_cell(row: dict) -> str:
    losses = (row.get("info") or {}).get("losses") or []
    return f"{losses[0]:.2f} -> {losses[-1]:.2f}" if losses else "-"


def check_targets(rows: dict) -> List[dict]:
    """Per pair (``rows`` by case): ABC's training throughput at least 0.85x softmax's for the
    default cases, GSA's at least 1 / 1.2 of ABC's where it ran."""
    return [compare(f"{name} trains at >= {case.min_speed:.3g}x {case.pair}'s throughput", rows.get(name),
                    rows.get(case.pair), "update_s", case.min_speed, True, (name, case.pair))
            for name, case in CASES.items() if case.pair is not None and (name in DEFAULT_CASES or name in rows)]


class TrainSuite(Suite):
    name, description, progress = "train", __doc__, "{tokens_per_s:.0f} tokens/s, peak {peak_mib:.1f} MiB"
    call, baseline = "update", "model on the device; the update's optimizer state counts"
    columns = (Column("case", "method", right=False),
               Column("sequences x tokens", lambda row: f"{row['batch']} x {row['N']}"),
               Column("ms / update", "ms_per_update", ".1f", status=True), Column("tokens/s", "tokens_per_s", ".0f"),
               Column("speed vs pair", "speed_vs_pair", "x"), Column("peak MiB", "peak_mib", ".1f"),
               Column("memory vs pair", "memory_vs_pair", "x"), Column("loss first -> last", loss_cell))
    # ABC rows against their softmax pair, GSA's against ABC (same N); the references have none.
    relative = [(lambda row: CASES[row["method"]].pair, (("tokens_per_s", "speed_vs_pair", False),
                                                         ("peak_mib", "memory_vs_pair", False)))]
    plot = Plot("bars", (Panel("", "training tokens / s (higher is faster)", "tokens_per_s"),
                         Panel("", "peak memory increase, MiB (lower is smaller)", "peak_mib")))

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(DEFAULT_CASES), metavar="CASE",
                            help=f"cases to train, from: {', '.join(CASES)} (default: {' '.join(DEFAULT_CASES)}; "
                                 "abc_lm_small and gsa_lm_small are the quickstart's model with ABC and GSA)")
        flags.add_flags(parser.add_mutually_exclusive_group(),
                        ("--tokens-per-batch", flags.positive_int, DEFAULT_TOKENS_PER_BATCH, "target tokens per "
                         "update, in sequences of each case's length (at least one); the same batch for ABC and its "
                         "softmax pair"), ("--batch", flags.positive_int, None, "sequences per update"))
        flags.add_flags(
            parser, ("--lm-length", flags.positive_int, 512, "tokens per LM sample"),
            ("--mt-length", flags.positive_int, 64, "source and target tokens per MT sentence pair (</s> in)"),
            ("--vocab", flags.positive_int, None, f"dictionary size (default: {DEFAULT_VOCAB['lm']} for the LMs, "
             f"{DEFAULT_VOCAB['mt']} for MT); a small one needs smaller LM cutoffs in --lm-args"),
            *((flag, flags.positive_int, None, f"override the {what}") for flag, what in (
                ("--layers", "architecture's layers (MT: encoder and decoder each)"),
                ("--embed-dim", "model dimension"), ("--heads", "attention heads"), ("--ffn-dim", "FFN size"))),
            ("--lm-args", None, "", "more fairseq-train flags for the LM cases, one shell-quoted string"),
            ("--mt-args", None, "", "more fairseq-train flags for the MT cases, one shell-quoted string"))
        flags.add_common_flags(parser, self, repeats=10, warmup=3, max_seconds=600.0,
                               dtypes=("float32", "float16"), dtype_default=None, dtype_help="float16 = fairseq's "
                               "--fp16 (its --bf16 means TPU; default: float16 on cuda, else float32)")

    def validate(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
        on_cuda = args.device.startswith("cuda")
        args.dtype = args.dtype or ("float16" if on_cuda else "float32")
        if args.dtype != "float32" and not on_cuda:
            parser.error(f"--dtype {args.dtype} (fairseq's --fp16 trainer) needs --device cuda")
        flags.check_model_flags(args, parser)
        for flag in ("lm_args", "mt_args"):
            try:
                shlex.split(getattr(args, flag))
            except ValueError as exc:
                parser.error(f"--{flag.replace('_', '-')} {getattr(args, flag)!r}: {exc}")

    def measurements(self, args: argparse.Namespace) -> List[Measurement]:
        """One case per architecture, in --cases order."""
        items = []
        for case in args.cases:
            kind = CASES[case].kind
            length = args.lm_length if kind == "lm" else args.mt_length
            batch = args.batch or max(1, args.tokens_per_batch // length)
            params = dict({key: getattr(args, key) for key in MODEL_KEYS}, case=case, kind=kind, batch=batch,
                          length=length, vocab=args.vocab or DEFAULT_VOCAB[kind],
                          model_args=getattr(args, f"{kind}_args"))
            items.append(Measurement(f"{case} batch={batch} x {length}", params,
                                     {"method": case, "kind": kind, "N": length, "batch": batch}))
        return items

    def build_case(self, params: dict, device) -> Case:
        """Trainer and two synthetic batches ready; the call is one update."""
        import torch
        from fairseq.trainer import Trainer

        argv = fairseq_argv(params, device.type == "cuda")
        cfg, task = fairseq_setup(argv, params["vocab"])
        model = task.build_model(cfg.model)
        trainer = Trainer(cfg, task, model, task.build_criterion(cfg.criterion))
        generator = torch.Generator().manual_seed(int(params.get("seed", 0)))
        samples = [synthetic_sample(params, task.source_dictionary, generator) for _ in range(2)]
        watched = next(p for p in model.parameters() if p.requires_grad)
        initial = watched.detach().float().cpu().clone()
        info = {"arch": CASES[params["case"]].arch, "fairseq_argv": argv, "attention": attention_modules(model),
                "parameters": sum(p.numel() for p in model.parameters()), "batch": params["batch"],
                "length": params["length"], "tokens_per_update": params["batch"] * params["length"],
                "losses": [], "overflows": 0}

        def run() -> None:
            log = trainer.train_step([samples[(len(info["losses"]) + info["overflows"]) % 2]])
            if log is None:  # fp16 overflow: fairseq skipped the update and lowered the loss scale
                info["overflows"] += 1
            else:
                info["losses"].append(float(log["loss"]))
            info["parameters_changed"] = not torch.equal(watched.detach().float().cpu(), initial)

        return Case(run, info)

    def derive(self, row: dict, seconds: Optional[float]) -> None:
        if seconds is not None:
            row.update(update_s=seconds, ms_per_update=seconds * 1e3, tokens_per_s=row["batch"] * row["N"] / seconds)

    def header(self, config: dict) -> str:
        sizes = ", ".join(f"{flag} {config[key]}" for flag, key in (("layers", "layers"), ("dim", "embed_dim"),
                                                                     ("heads", "heads"), ("FFN", "ffn_dim"))
                          if config.get(key)) or "the architectures' own sizes"
        extra = "".join(f"; {kind.upper()} flags `{config[kind + '_args']}`" for kind in ("lm", "mt")
                        if config.get(kind + "_args"))
        return f"{sizes}; vocabulary {config.get('vocab') or 'per kind (see notes)'}{extra};"

    def notes(self, config: dict, rows: List[dict]) -> List[str]:
        return [
            "- One update = `fairseq.trainer.Trainer.train_step([sample])`: forward, backward, loss scaling, Adam "
            "step; random tokens, no padding. speed / memory vs pair: the case's tokens/s / its pair's, its peak / "
            "its pair's (ABC's pair is softmax, GSA's is ABC).",
            f"- default vocabulary: {DEFAULT_VOCAB['lm']} (LMs), {DEFAULT_VOCAB['mt']} (MT); loss: fairseq's logged "
            f"training loss (base 2), first and last update. The {TARGET_SPEED}x target is for a GPU with `--fp16` "
            "at the architectures' own sizes."]

    def targets(self, rows: List[dict], config: dict) -> List[dict]:
        return check_targets({row["method"]: row for row in rows})


SUITE = TrainSuite()
