"""The converted model (student), its softmax source (teacher) and what transfer trains.

Both are built as fairseq's tools build a checkpoint's model (``load_checkpoint_to_cpu``, the
task of its cfg, ``task.build_model``, a strict load). The teacher is the student's config with
every attention position softmax, loaded with the checkpoint's tensors less the ones the
conversion added: fairseq's softmax model of the source, parameter for parameter.
"""

import copy
from dataclasses import dataclass
from typing import Dict, List, Optional

import torch

from ..convert.checkpoint_io import CONVERSION_KEY, load_checkpoint, same_bits
from .errors import TransferError


@dataclass
class ModelPair:
    """raw: the ``--input`` checkpoint as saved (written back with the trained tensors).
    task: the checkpoint's fairseq task (dataset folder overridden by ``--data``).
    student: the converted model; teacher: its softmax source, frozen, in evaluation mode.
    modules: names of the converted attention modules (the same name in both models).
    trained: state-dict names of the tensors transfer trains (parameters of ``student``).
    """

    raw: dict
    task: object
    student: torch.nn.Module
    teacher: torch.nn.Module
    modules: List[str]
    trained: List[str]


def read_converted(path: str) -> dict:
    """The checkpoint as saved, refused unless the converter wrote it (its record names the
    tensors it added)."""
    raw = load_checkpoint(path, flag="--input")
    if not isinstance(raw, dict) or not isinstance(raw.get("model"), dict):
        raise TransferError(f"--input {path} is not a fairseq checkpoint: it holds no 'model' state dict")
    record = raw.get(CONVERSION_KEY)
    if not isinstance(record, dict) or "added" not in record:
        raise TransferError(f"--input {path} carries no {CONVERSION_KEY!r} record: transfer starts from a "
                            f"checkpoint written by python -m abc_fairseq.convert")
    return raw


def softmax_config(model_cfg):
    """``model_cfg`` (DictConfig or Namespace) with every attention position set to softmax."""
    from omegaconf import OmegaConf, open_dict

    from ..models.abc_options import POSITIONS

    twin = copy.deepcopy(model_cfg)
    keys = [p.attn_key for p in POSITIONS]
    if OmegaConf.is_config(twin):
        with open_dict(twin):
            for key in keys:
                if key in twin:
                    twin[key] = "softmax"
    else:
        for key in keys:
            if hasattr(twin, key):
                setattr(twin, key, "softmax")
    return twin


def attention_modules(student: torch.nn.Module, teacher: torch.nn.Module) -> List[str]:
    """Names of the student's converted attention modules; each is a softmax module in the teacher."""
    from fairseq.modules import MultiheadAttention

    from ..modules import ABCMultiheadAttention

    names = [name for name, module in student.named_modules() if isinstance(module, ABCMultiheadAttention)]
    for name in names:
        if not isinstance(teacher.get_submodule(name), MultiheadAttention):
            raise TransferError(f"the softmax twin's {name} is no softmax attention: the model changed under it")
    return names


def trained_names(student: torch.nn.Module, added: List[str], modules: List[str], train_qk: bool) -> List[str]:
    """The parameters transfer trains: those the conversion added, plus q/k with ``train_qk``."""
    params = dict(student.named_parameters())
    names = [key for key in added if key in params]
    if train_qk:
        names += [f"{m}.{proj}.{kind}" for m in modules for proj in ("q_proj", "k_proj")
                  for kind in ("weight", "bias") if f"{m}.{proj}.{kind}" in params]
    return names


def freeze_all_but(model: torch.nn.Module, names: List[str]) -> List[torch.nn.Parameter]:
    """requires_grad only for ``names``; returns those parameters in that order."""
    params = dict(model.named_parameters())
    for param in model.parameters():
        param.requires_grad_(False)
    chosen = [params[name] for name in names]
    for param in chosen:
        param.requires_grad_(True)
    return chosen


def without_fast_paths(model: torch.nn.Module) -> None:
    """Turn off fairseq 0.12's eval-mode encoder fast path, which runs softmax attention without
    calling the attention module (its forward hooks would never fire)."""
    for module in model.modules():
        for switch in ("can_use_fastpath", "load_to_BT"):
            if hasattr(module, switch):
                setattr(module, switch, False)


def load_pair(path: str, data: Optional[str], train_qk: bool, device: torch.device) -> ModelPair:
    """Read ``--input``, build student and teacher on ``device`` and choose the trained tensors."""
    from fairseq import checkpoint_utils, tasks

    import abc_fairseq.models  # noqa: F401 (registers the models and the weights-only allowlist)

    raw = read_converted(path)
    overrides = {"data": data} if data else None
    state = checkpoint_utils.load_checkpoint_to_cpu(path, arg_overrides=overrides)
    cfg = state["cfg"]
    try:
        task = tasks.setup_task(cfg.task)
    except FileNotFoundError as e:
        flag = "--data" if data else "--input (its task's data folder; give --data)"
        raise TransferError(f"{flag}: {e}") from e
    student = task.build_model(cfg.model)
    student.load_state_dict(state["model"], strict=True, model_cfg=cfg.model)
    added = list(raw[CONVERSION_KEY]["added"])
    teacher = task.build_model(softmax_config(cfg.model))
    teacher.load_state_dict({k: v for k, v in state["model"].items() if k not in added}, strict=True)
    without_fast_paths(teacher)
    modules = attention_modules(student, teacher)
    if not modules:
        raise TransferError(f"--input {path} has no converted attention (every position is softmax): nothing "
                            f"to transfer")
    trained = trained_names(student, added, modules, train_qk)
    if not trained:
        raise TransferError(f"--input {path}: its attention ({', '.join(sorted(set(_strategies(raw))))}) has no "
                            f"parameters of its own to train; add --train-qk to train the q/k projections")
    teacher.to(device).eval()
    student.to(device).eval()  # dropout off: the loss compares deterministic outputs
    for param in teacher.parameters():
        param.requires_grad_(False)
    return ModelPair(raw, task, student, teacher, modules, trained)


def _strategies(raw: dict) -> List[str]:
    attention = raw[CONVERSION_KEY].get("attention", {})
    return [str(v) for k, v in attention.items() if k.endswith("_attn") and v != "softmax"]


def changed_frozen(student: torch.nn.Module, raw_model: Dict[str, torch.Tensor], trained: List[str]) -> List[str]:
    """Names of the student's tensors outside ``trained`` that differ from the checkpoint's in any bit."""
    trained = set(trained)
    changed = []
    for key, tensor in student.state_dict().items():
        if key in trained:
            continue
        kept = raw_model.get(key)
        if kept is None or not same_bits(kept, tensor):
            changed.append(key)
    return changed
