"""Convert a pretrained fairseq RoBERTa checkpoint into an ``abc_roberta`` checkpoint.

    python -m abc_fairseq.convert_roberta --input roberta.base/model.pt --output abc_model.pt \\
        --encoder-attn abc --encoder-memory 64

Every pretrained tensor is kept under its name and bit for bit (after the renames fairseq's own
RoBERTa loader applies to old checkpoints: ``decoder.*`` -> ``encoder.*``, ``emb_layer_norm`` ->
``layernorm_embedding``, fused ``in_proj`` -> ``q/k/v_proj``). The control parameters the
checkpoint lacks (W_phi, ``encoder.sentence_encoder.self_attn_phi.weight``: [heads * n, dim], and
the parameters of other strategies) are initialised as a freshly built ``abc_roberta`` initialises
them (seeded by ``--seed``) and listed on stdout. The converted model is loaded back strictly
before anything is written. The output keeps the input's layout (``args`` or ``cfg``), with the
architecture set to ``abc_roberta_*`` and the attention flags recorded; the optimizer state and
the data-loader position are dropped, so continue with ``fairseq-train --user-dir abc_fairseq
--restore-file abc_model.pt --reset-optimizer --reset-dataloader --reset-meters`` (or skip this
tool and pass the original ``model.pt`` to ``--restore-file`` with ``--arch abc_roberta_base``:
the model adds W_phi while loading).

Only tensors, containers and ``argparse.Namespace`` are unpickled (torch's weights-only loader);
``--trust-checkpoint`` allows arbitrary pickles for a file you trust.
"""

import argparse
import copy
import logging
import os
import sys
from typing import Dict, List, Optional

import torch

from .checkpoint_compat import load_error_detail, refused_global
from .checkpoint_integrity import damage_report, is_damaged

logger = logging.getLogger("abc_fairseq.convert_roberta")

# RoBERTa presets by (layers, dim): the abc_roberta architecture recorded in the output.
_PRESETS = {(12, 768): "abc_roberta_base", (24, 1024): "abc_roberta_large"}


class ConversionError(RuntimeError):
    """The input cannot be converted (not a RoBERTa checkpoint, bad flags, unreadable file)."""


def _load(path: str, trust: bool) -> dict:
    """The checkpoint as saved (no fairseq upgrade: the model applies the renames it needs)."""
    import abc_fairseq.models  # noqa: F401 (registers the safe globals and the models)

    if not os.path.isfile(path):
        raise ConversionError(f"--input {path}: no such file")
    try:
        return torch.load(path, map_location="cpu", weights_only=not trust)
    except Exception as e:  # torch raises UnpicklingError or RuntimeError for unknown globals
        if is_damaged(path):
            raise ConversionError(f"--input {damage_report(path)}") from e
        # Only a real checkpoint whose pickle names a refused global is worth trusting; a file
        # that is no pickle at all fails the same loader with another message.
        if not trust and refused_global(e):
            raise ConversionError(
                f"--input {path} holds Python objects torch's weights-only loader refuses "
                f"({load_error_detail(e)}); if you trust the file, re-run with --trust-checkpoint") from e
        raise ConversionError(
            f"--input {path} is not a torch checkpoint ({load_error_detail(e)})") from e


def _model_args(state: dict) -> argparse.Namespace:
    """The model arguments of a fairseq checkpoint as a Namespace (from ``args`` or ``cfg.model``)."""
    from omegaconf import OmegaConf

    if state.get("args") is not None:
        return copy.deepcopy(state["args"])
    model_cfg = (state.get("cfg") or {}).get("model")
    if model_cfg is None:
        raise ConversionError("the checkpoint records no model arguments (neither args nor cfg.model)")
    if isinstance(model_cfg, argparse.Namespace):
        return copy.deepcopy(model_cfg)
    if OmegaConf.is_config(model_cfg):
        model_cfg = OmegaConf.to_container(model_cfg, resolve=True)
    return argparse.Namespace(**dict(model_cfg))


class _Task:
    """The little of a fairseq task ``abc_roberta.build_model`` reads: a dictionary of the
    checkpoint's vocabulary size (RoBERTa's pad index 1) and the maximum positions."""

    def __init__(self, vocab_size: int, max_positions: int):
        from fairseq.data import Dictionary

        self.source_dictionary = Dictionary()
        while len(self.source_dictionary) < vocab_size:
            self.source_dictionary.add_symbol(f"madeupword{len(self.source_dictionary):06d}")
        self._max_positions = max_positions

    def max_positions(self):
        return self._max_positions


def _embedding(model_state: Dict[str, torch.Tensor]) -> torch.Tensor:
    for key in ("encoder.sentence_encoder.embed_tokens.weight", "decoder.sentence_encoder.embed_tokens.weight"):
        if key in model_state:
            return model_state[key]
    raise ConversionError("not a RoBERTa checkpoint: no encoder.sentence_encoder.embed_tokens.weight "
                          "(nor decoder.sentence_encoder.*) in its model state")


def convert(state: dict, encoder_attn: str, encoder_memory: Optional[int], seed: int = 1,
            extra_model_args: Optional[dict] = None):
    """Convert a loaded RoBERTa checkpoint ``state`` (fairseq layout) in memory.

    Returns ``(new_state, model, added)``: the checkpoint dict to save, the strictly loaded
    ``abc_roberta`` model, and the state-dict names of the control tensors that were added.
    """
    from fairseq import utils as fairseq_utils

    import abc_fairseq.models  # noqa: F401

    from .models.abc_options import ENCODER_SELF, abc_memory_size
    from .models.abc_roberta import ABCRobertaModel, RobertaCheckpointError

    if not isinstance(state, dict) or "model" not in state:
        raise ConversionError("not a fairseq checkpoint: no 'model' state dict")
    args = _model_args(state)
    arch = getattr(args, "arch", None) or getattr(args, "_name", None)
    if arch is not None and not str(arch).startswith(("roberta", "abc_roberta")):
        raise ConversionError(f"not a RoBERTa checkpoint: its architecture is {arch!r}")
    embed = _embedding(state["model"])
    args.encoder_attn = encoder_attn
    if encoder_memory is not None:
        args.encoder_memory = encoder_memory
    for key, value in (extra_model_args or {}).items():
        setattr(args, key, value)
    try:
        abc_memory_size(args, ENCODER_SELF)
    except ValueError as e:
        raise ConversionError(str(e)) from e
    layers = getattr(args, "encoder_layers", None)
    args.arch = _PRESETS.get((layers, embed.shape[1]), "abc_roberta")
    args._name = args.arch
    max_positions = getattr(args, "max_positions", None) or getattr(args, "tokens_per_sample", 512)
    fairseq_utils.set_torch_seed(seed)
    model = ABCRobertaModel.build_model(args, _Task(embed.shape[0], max_positions))
    model_state = dict(state["model"])
    try:
        model.load_state_dict(model_state, strict=True, model_cfg=args)
    except RobertaCheckpointError as e:
        raise ConversionError(str(e)) from e
    added = model.added_control_keys
    new_model_state = dict(model_state)  # upgraded in place by load_state_dict: the loaded tensors
    for key, tensor in model.state_dict().items():
        if key not in new_model_state:
            new_model_state[key] = tensor
    # Everything but the model and the optimizer state is kept: fairseq's loader expects the
    # training metadata (optimizer_history, extra_state) and upgrades old layouts itself.
    new_state = {k: v for k, v in state.items() if k not in ("model", "last_optimizer_state")}
    history = [{k: v for k, v in entry.items() if k != "optimizer"}
               for entry in state.get("optimizer_history") or []]
    new_state.update(model=new_model_state, last_optimizer_state=None)
    if "optimizer" in new_state:  # very old layout: fairseq moves it to last_optimizer_state
        new_state["optimizer"] = None
    if history:
        new_state["optimizer_history"] = history
    if state.get("args") is not None:
        new_state["args"] = _updated_namespace(state["args"], args)
    if state.get("cfg") is not None:
        new_state["cfg"] = _updated_cfg(state["cfg"], args)
    return new_state, model, added


def _updated_namespace(old: argparse.Namespace, model_args: argparse.Namespace) -> argparse.Namespace:
    new = copy.deepcopy(old)
    for key in ("arch", "_name", "encoder_attn", "encoder_memory", "linformer_max_positions",
                "compressive_ratio"):
        if hasattr(model_args, key):
            setattr(new, key, getattr(model_args, key))
    return new


def _updated_cfg(cfg, model_args: argparse.Namespace):
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(cfg, resolve=True) if OmegaConf.is_config(cfg) else copy.deepcopy(cfg)
    model_cfg = cfg.get("model")
    if isinstance(model_cfg, argparse.Namespace):
        cfg["model"] = _updated_namespace(model_cfg, model_args)
    elif isinstance(model_cfg, dict):
        updated = _updated_namespace(argparse.Namespace(**model_cfg), model_args)
        cfg["model"] = vars(updated)
    return cfg


def build_parser() -> argparse.ArgumentParser:
    from .models.abc_options import ATTENTION_CHOICES, positive_int

    parser = argparse.ArgumentParser(
        prog="python -m abc_fairseq.convert_roberta",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", required=True, metavar="MODEL_PT",
                        help="fairseq RoBERTa checkpoint (e.g. roberta.base/model.pt)")
    parser.add_argument("--output", required=True, metavar="ABC_MODEL_PT", help="converted checkpoint to write")
    parser.add_argument("--encoder-attn", default="abc", choices=ATTENTION_CHOICES,
                        help="attention of the encoder layers (default: abc)")
    parser.add_argument("--encoder-memory", type=positive_int, default=64, metavar="N",
                        help="memory slots n (the paper uses 64 and 128; default: 64)")
    parser.add_argument("--linformer-max-positions", type=positive_int, metavar="N",
                        help="N_max of --encoder-attn linformer (default: the checkpoint's max positions)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the new parameters' initialisation")
    parser.add_argument("--trust-checkpoint", action="store_true",
                        help="unpickle arbitrary objects (only for files you trust)")
    parser.add_argument("--force", action="store_true", help="overwrite --output if it exists")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if os.path.abspath(args.input) == os.path.abspath(args.output):
        parser.error("--output must differ from --input")
    if os.path.exists(args.output) and not args.force:
        parser.error(f"--output {args.output} exists (use --force to overwrite)")
    extra = {}
    if args.linformer_max_positions is not None:
        extra["linformer_max_positions"] = args.linformer_max_positions
    try:
        state = _load(args.input, args.trust_checkpoint)
        new_state, model, added = convert(state, args.encoder_attn, args.encoder_memory, args.seed, extra)
    except ConversionError as e:
        print(f"convert_roberta: error: {e}", file=sys.stderr)
        return 1
    out_dir = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(out_dir, exist_ok=True)
    tmp = args.output + ".tmp"
    torch.save(new_state, tmp)
    os.replace(tmp, args.output)
    kept = len(new_state["model"]) - len(added)
    renamed = "" if kept == len(state["model"]) and all(k in new_state["model"] for k in state["model"]) else \
        f" (the checkpoint's {len(state['model'])} entries, under fairseq's current names)"
    print(f"converted {args.input} -> {args.output}: arch {new_state_arch(new_state)}, "
          f"--encoder-attn {args.encoder_attn} --encoder-memory {args.encoder_memory}")
    print(f"kept {kept} pretrained tensors with their values unchanged{renamed}; "
          f"added {len(added)} new control tensors:")
    for key in added:
        tensor = new_state["model"][key]
        print(f"  {key} {tuple(tensor.shape)} ({tensor.numel()} parameters, std {tensor.float().std():.4f})")
    return 0


def new_state_arch(state: dict) -> str:
    if state.get("args") is not None:
        return getattr(state["args"], "arch", "?")
    model_cfg = (state.get("cfg") or {}).get("model")
    if isinstance(model_cfg, argparse.Namespace):
        return getattr(model_cfg, "arch", "?")
    return (model_cfg or {}).get("arch", (model_cfg or {}).get("_name", "?"))


if __name__ == "__main__":
    sys.exit(main())
