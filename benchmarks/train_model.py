"""Worker side of the ``train`` suite: one fairseq architecture trained through fairseq's own
``Trainer``, model, criterion and optimizer built by fairseq's training parser as ``fairseq-train``
builds them (``--fp16``, ``--cpu``), around a synthetic dictionary: nothing is read from disk. One
call is ``trainer.train_step([sample])``, on random batches built before the baseline: LM samples
[batch, length], target the next token; MT pairs of ``length`` source and target tokens (each
ending in ``</s>``), ``prev_output_tokens`` = ``</s>`` then the target shifted right."""

import shlex
from typing import List

from ._worker import Case
from .synthetic import synthetic_dictionary

# The fairseq flags of each kind of case beyond the architecture (fairseq's WikiText-103 and WMT recipes).
LM_FLAGS = ["--task", "language_modeling", "--criterion", "adaptive_loss", "--ddp-backend", "legacy_ddp"]
MT_FLAGS = ["--task", "translation", "--source-lang", "src", "--target-lang", "tgt", "--share-all-embeddings",
            "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1"]
OPTIMIZER_FLAGS = ["--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr", "1e-4", "--clip-norm", "0.0"]
HALF_FLAGS = {"float32": [], "float16": ["--fp16"]}
# Each model-size flag of the suite and the fairseq flags it sets (LM: decoder only).
SIZE_FLAGS = {
    "layers": {"lm": ["--decoder-layers"], "mt": ["--encoder-layers", "--decoder-layers"]},
    "embed_dim": {"lm": ["--decoder-embed-dim", "--decoder-input-dim", "--decoder-output-dim"],
                  "mt": ["--encoder-embed-dim", "--decoder-embed-dim"]},
    "heads": {"lm": ["--decoder-attention-heads"], "mt": ["--encoder-attention-heads", "--decoder-attention-heads"]},
    "ffn_dim": {"lm": ["--decoder-ffn-embed-dim"], "mt": ["--encoder-ffn-embed-dim", "--decoder-ffn-embed-dim"]},
}


def fairseq_argv(params: dict, on_cuda: bool) -> List[str]:
    """The case's ``fairseq-train`` command line (the synthetic task never reads its data folder)."""
    kind = params["kind"]
    argv = ["<synthetic>", "--arch", params["arch"], "--seed", str(params.get("seed", 1))]
    argv += LM_FLAGS + ["--tokens-per-sample", str(params["length"])] if kind == "lm" else MT_FLAGS
    argv += ["--max-source-positions", str(params["length"]), "--max-target-positions", str(params["length"])] \
        if kind == "mt" else []
    argv += OPTIMIZER_FLAGS + HALF_FLAGS[params["dtype"]] + ([] if on_cuda else ["--cpu"])
    for key, flags in SIZE_FLAGS.items():
        if params.get(key) is not None:
            for flag in flags[kind]:
                argv += [flag, str(params[key])]
    return argv + shlex.split(params.get("model_args") or "")


def build_task(cfg, params: dict):
    """The task of ``cfg`` around a synthetic dictionary of ``params['vocab']`` symbols."""
    from fairseq.tasks.language_modeling import LanguageModelingTask
    from fairseq.tasks.translation import TranslationTask

    dictionary = synthetic_dictionary(params["vocab"])
    if params["kind"] == "lm":
        return LanguageModelingTask(cfg.task, dictionary, dictionary)
    return TranslationTask(cfg.task, dictionary, dictionary)


def synthetic_sample(params: dict, dictionary, generator) -> dict:
    """One batch in fairseq's collated form, on the CPU (the trainer moves it, as real batches)."""
    import torch

    B, N = params["batch"], params["length"]
    tokens = torch.randint(dictionary.nspecial, len(dictionary), (B, N + 1), generator=generator)
    sample = {"id": torch.arange(B), "nsentences": B, "ntokens": B * N}
    if params["kind"] == "lm":
        sample.update(net_input={"src_tokens": tokens[:, :N].contiguous(), "src_lengths": torch.full((B,), N)},
                      target=tokens[:, 1:].contiguous())
        return sample
    source = torch.randint(dictionary.nspecial, len(dictionary), (B, N), generator=generator)
    source[:, -1] = dictionary.eos()
    target = tokens[:, 1:].clone()
    target[:, -1] = dictionary.eos()
    previous = torch.cat([torch.full((B, 1), dictionary.eos()), target[:, :-1]], dim=1)
    sample.update(net_input={"src_tokens": source, "src_lengths": torch.full((B,), N),
                             "prev_output_tokens": previous}, target=target)
    return sample


def attention_modules(model) -> List[str]:
    """Each distinct attention module of the model as ``Class(extra_repr)``: what was trained."""
    return sorted({type(module).__name__ + (f"({module.extra_repr()})" if module.extra_repr() else "")
                   for name, module in model.named_modules() if name.endswith(("self_attn", "encoder_attn"))})


def build_case(params: dict, device) -> Case:
    """The worker's entry point: trainer and two synthetic batches ready; ``run`` is one update."""
    import torch
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq.trainer import Trainer

    import abc_fairseq  # noqa: F401  (registers the ABC architectures)

    on_cuda = device.type == "cuda"
    argv = fairseq_argv(params, on_cuda)
    args = options.parse_args_and_arch(options.get_training_parser(), argv)
    cfg = convert_namespace_to_omegaconf(args)
    task = build_task(cfg, params)
    model = task.build_model(cfg.model)
    trainer = Trainer(cfg, task, model, task.build_criterion(cfg.criterion))
    generator = torch.Generator().manual_seed(int(params.get("seed", 0)))
    samples = [synthetic_sample(params, task.source_dictionary, generator) for _ in range(2)]
    watched = next(p for p in model.parameters() if p.requires_grad)
    initial = watched.detach().float().cpu().clone()
    info = {"arch": params["arch"], "fairseq_argv": argv, "attention": attention_modules(model),
            "parameters": sum(p.numel() for p in model.parameters()), "batch": params["batch"],
            "length": params["length"], "tokens_per_update": params["batch"] * params["length"],
            "losses": [], "overflows": 0}
    calls = [0]

    def run() -> None:
        log = trainer.train_step([samples[calls[0] % len(samples)]])
        calls[0] += 1
        if log is None:  # fp16 overflow: fairseq skipped the update and lowered the loss scale
            info["overflows"] += 1
        else:
            info["losses"].append(float(log["loss"]))
        info["parameters_changed"] = not torch.equal(watched.detach().float().cpu(), initial)
        scaler = getattr(trainer.optimizer, "scaler", None)  # fp16 only: fairseq's dynamic loss scaler
        info["loss_scale"] = float(scaler.loss_scale) if scaler is not None else None
    return Case(run, info)
