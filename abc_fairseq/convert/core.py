"""The conversion itself, the same for every family, in memory.

1. The family is the one ``--family`` names, or the one the checkpoint's architecture (else its
   parameter names) tells; a checkpoint of another family is refused.
2. fairseq's own renames of old layouts (fused ``in_proj`` -> ``q/k/v_proj``, ``layer_norms.N``,
   RoBERTa's ``decoder.*``) are applied by the *softmax twin*: the target model with every
   position softmax, which is fairseq's model parameter for parameter. Its state must then match
   the checkpoint name for name and shape for shape (else the file is damaged or mislabelled).
3. The target model (the chosen strategies, seeded by ``seed``) keeps every checkpoint tensor and
   adds only what it has beyond the twin: the control tensors (W_phi, the Linformer matrix, GSA's
   gate projection, ...: parameters of a ``ControlModule``). It loads the result strictly.
"""

import argparse
import copy
from typing import Dict, List, NamedTuple

import torch

from ..models.abc_options import POSITIONS
from ..strategies import ControlModule, all_settings
from .checkpoint_io import CONVERSION_KEY, ConversionError, model_args, with_model_args
from .families import Family, architecture, detect, target_architecture
from .lm import LM
from .mt import MT
from .roberta import ROBERTA

FAMILIES: Dict[str, Family] = {family.name: family for family in (LM, MT, ROBERTA)}


class Converted(NamedTuple):
    """The checkpoint to write, the strictly loaded model, the names of the tensors added."""

    state: dict
    model: torch.nn.Module
    family: Family
    added: List[str]


def attention_settings(family: Family, flags: dict) -> dict:
    """The model arguments the attention flags set for ``family`` (``flags``: parsed values by
    argument name, None where not given): every position of the family (its default where unset),
    ``untie_phi``, ``abc_backend`` and the strategy settings given. A position the family lacks
    is refused, naming its flag."""
    chosen = {}
    for position in POSITIONS:
        given = [flag for flag, key in ((position.attn_flag, position.attn_key),
                                        (position.memory_flag, position.memory_key)) if flags.get(key) is not None]
        if position not in family.positions:
            if given:
                raise ConversionError(f"{given[0]}: a {family.label} has no {position.description}")
            continue
        attn, memory = family.defaults[position]
        chosen[position.attn_key] = flags.get(position.attn_key) or attn
        chosen[position.memory_key] = flags.get(position.memory_key) or memory
    chosen["untie_phi"] = bool(flags.get("untie_phi", False))
    chosen["abc_backend"] = flags.get("abc_backend") or "auto"
    chosen.update({s.key: flags[s.key] for s in all_settings() if flags.get(s.key) is not None})
    return chosen


def choose_family(name, args: argparse.Namespace, model_state) -> Family:
    """The family to convert with: ``name`` (checked against the checkpoint) or the detected one."""
    detected, why = detect(args, model_state, FAMILIES)
    if name is None:
        if detected is None:
            raise ConversionError(f"cannot tell the checkpoint's family: {why}; give --family "
                                  f"{'|'.join(FAMILIES)}")
        return detected
    family = FAMILIES[name]
    if detected is not family and (detected is not None or architecture(args) is not None):
        hint = f"; --family {detected.name} converts it" if detected is not None else ""
        raise ConversionError(f"--family {name}: not a {family.label} checkpoint: {why}{hint}")
    return family


def fill_config_defaults(args: argparse.Namespace, family: Family) -> None:
    """A dataclass model's defaults for what ``args`` lacks (a Namespace written by fairseq-train
    holds only the options given), after the architecture's own defaults, as fairseq fills them."""
    from fairseq.models import MODEL_DATACLASS_REGISTRY

    config = MODEL_DATACLASS_REGISTRY.get(family.target_model)
    if config is None:
        return
    defaults = config()
    for name in config.__dataclass_fields__:
        value = getattr(defaults, name)
        if not hasattr(args, name) and not (isinstance(value, str) and value.startswith("${")):
            setattr(args, name, value)


def build(family: Family, args: argparse.Namespace, task, seed: int):
    """The target model of ``args`` (its architecture's defaults filled), seeded."""
    from fairseq import utils as fairseq_utils
    from fairseq.models import ARCH_CONFIG_REGISTRY, MODEL_REGISTRY

    ARCH_CONFIG_REGISTRY[args.arch](args)
    fill_config_defaults(args, family)
    fairseq_utils.set_torch_seed(seed)
    try:
        return MODEL_REGISTRY[family.target_model].build_model(args, task)
    except ValueError as e:  # the options' checks: the message names the flag
        raise ConversionError(str(e)) from e


def control_keys(model: torch.nn.Module) -> List[str]:
    """State-dict names of every tensor held by a ``ControlModule`` (what softmax lacks)."""
    keys = []
    for name, module in model.named_modules():
        if isinstance(module, ControlModule):
            keys += [f"{name}.{key}" if name else key for key in module.state_dict()]
    return keys


def check_positions(chosen: dict, args: argparse.Namespace, family: Family) -> None:
    """Refuse a setting sized by positions (linformer's N_max) below the checkpoint's positions."""
    from ..strategies import get_strategy

    for position in family.positions:
        name = chosen[position.attn_key]
        if name == "softmax":
            continue
        bound = next((getattr(args, k) for k in position.max_positions_keys if getattr(args, k, None)), None)
        for setting in get_strategy(name, flag=position.attn_flag).settings:
            value = chosen.get(setting.key)
            if setting.default_is_max_positions and value is not None and bound and value < bound:
                raise ConversionError(
                    f"{setting.flag} {value} is below the checkpoint's {bound} positions: "
                    f"{position.attn_flag} {name} could not read its longer inputs (give at least {bound}, "
                    f"or leave the flag out)")


def upgraded_source(family: Family, args: argparse.Namespace, task, model_state) -> dict:
    """The checkpoint's tensors under fairseq's current names, checked against the softmax twin."""
    twin_args = copy.deepcopy(args)
    for position in family.positions:
        setattr(twin_args, position.attn_key, "softmax")
    twin = build(family, twin_args, task, seed=0)
    state = dict(model_state)
    try:
        twin.upgrade_state_dict(state)
    except ValueError as e:  # RoBERTa's own check of its names and shapes
        raise ConversionError(str(e)) from e
    own = twin.state_dict()
    missing = sorted(k for k in own if k not in state)
    shapes = [f"{k}: checkpoint {tuple(state[k].shape)}, model {tuple(v.shape)}"
              for k, v in own.items() if k in state and state[k].shape != v.shape]
    if missing or shapes:
        listed = "; ".join(([f"missing {', '.join(missing[:6])}" + (" ..." if len(missing) > 6 else "")]
                            if missing else []) + shapes[:6])
        raise ConversionError(f"--input does not match the {family.label} its own configuration describes "
                              f"({listed}): a damaged or hand-edited checkpoint?")
    return state


def convert(state: dict, family_name, flags: dict, seed: int = 1, source: str = "") -> Converted:
    """Convert a loaded fairseq checkpoint ``state`` (see the module docstring)."""
    import abc_fairseq.models  # noqa: F401 (registers the models and architectures)

    args = model_args(state)
    args.load_checkpoint_heads = True  # RoBERTa: keep a fine-tuned checkpoint's classification heads
    family = choose_family(family_name, args, state["model"])
    task = family.task_for(state["model"], args)
    chosen = attention_settings(family, flags)
    arch = target_architecture(architecture(args), family)
    args.arch = args._name = arch
    model_state = upgraded_source(family, args, task, state["model"])
    target_args = copy.deepcopy(args)
    for key, value in chosen.items():
        setattr(target_args, key, value)
    model = build(family, target_args, task, seed)  # fills the maximum positions a config may lack
    check_positions(chosen, target_args, family)
    control = set(control_keys(model))
    own = model.state_dict()
    foreign = sorted(k for k in model_state if k not in own)
    resized = sorted(k for k in own if k in model_state and model_state[k].shape != own[k].shape)
    if foreign or resized:
        flags_named = ", ".join(p.attn_flag for p in family.positions)
        raise ConversionError(
            f"the checkpoint's control tensors do not fit the chosen attention ({', '.join((foreign + resized)[:6])}): "
            f"give its own strategies and memory sizes ({flags_named} and their -memory flags)")
    added = [k for k in own if k not in model_state]
    if not set(added) <= control:  # the twin's check leaves only control tensors: a model change broke it
        raise ConversionError(f"the converted model has parameters no checkpoint supplies and no strategy "
                              f"owns: {', '.join(sorted(set(added) - control))}")
    new_model_state = dict(model_state)
    for key in added:
        new_model_state[key] = own[key].detach().clone()
    model.load_state_dict(new_model_state, strict=True, model_cfg=target_args)
    new_state = {k: v for k, v in state.items() if k not in ("model", "last_optimizer_state", "args", "cfg")}
    new_state.update(with_model_args(state, dict(chosen, arch=arch, _name=arch)))
    new_state.update(model=new_model_state, last_optimizer_state=None)
    if "optimizer" in new_state:  # very old layout: fairseq moves it to last_optimizer_state
        new_state["optimizer"] = None
    history = [{k: v for k, v in entry.items() if k != "optimizer"} for entry in state.get("optimizer_history") or []]
    if history:
        new_state["optimizer_history"] = history
    new_state[CONVERSION_KEY] = {"source": source, "family": family.name, "arch": arch, "added": list(added),
                                 "attention": {k: v for k, v in chosen.items()}, "seed": seed}
    return Converted(new_state, model, family, added)
