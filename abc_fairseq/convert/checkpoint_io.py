"""Reading a fairseq checkpoint for conversion and writing the converted one.

Reading uses torch's weights-only loader (tensors, containers, ``argparse.Namespace`` and the
other globals ``checkpoint_compat`` allows); ``trust=True`` unpickles anything, for a file the
user trusts. Writing never replaces a file the converter did not write: the output must not
exist, or (``force``) must hold this converter's record (``CONVERSION_KEY``). The file is written
under a fresh temporary name beside the output, read back with the weights-only loader and
compared tensor for tensor before it takes the output's name.
"""

import argparse
import copy
import os
import tempfile

import torch

from ..checkpoint_compat import allow_fairseq_checkpoints, load_error_detail, refused_global
from ..checkpoint_integrity import damage_report, is_damaged

# The record a converted checkpoint carries (plain types only): source, family, attention, added keys.
CONVERSION_KEY = "abc_conversion"


class ConversionError(RuntimeError):
    """The input cannot be converted; the message names the flag or the file at fault."""


def load_checkpoint(path: str, trust: bool = False, flag: str = "--input") -> dict:
    """The checkpoint as saved (no fairseq upgrade: the conversion applies the renames itself)."""
    allow_fairseq_checkpoints()
    if not os.path.isfile(path):
        raise ConversionError(f"{flag} {path}: no such file")
    try:
        return torch.load(path, map_location="cpu", weights_only=not trust)
    except Exception as e:  # torch raises UnpicklingError or RuntimeError for unknown globals
        if is_damaged(path):
            raise ConversionError(f"{flag} {damage_report(path)}") from e
        # Only a real checkpoint whose pickle names a refused global is worth trusting; a file
        # that is no pickle at all fails the same loader with another message.
        if not trust and refused_global(e):
            raise ConversionError(
                f"{flag} {path} holds Python objects torch's weights-only loader refuses "
                f"({load_error_detail(e)}); if you trust the file, re-run with --trust-checkpoint") from e
        raise ConversionError(f"{flag} {path} is not a torch checkpoint ({load_error_detail(e)})") from e


def model_args(state: dict) -> argparse.Namespace:
    """The model arguments of a fairseq checkpoint as a fresh Namespace (``args`` or ``cfg.model``)."""
    from omegaconf import OmegaConf

    if not isinstance(state, dict) or not isinstance(state.get("model"), dict):
        raise ConversionError("--input is not a fairseq checkpoint: it holds no 'model' state dict")
    if state.get("args") is not None:
        return copy.deepcopy(state["args"])
    cfg = state.get("cfg")
    if OmegaConf.is_config(cfg):
        cfg = OmegaConf.to_container(cfg, resolve=True)
    model_cfg = (cfg or {}).get("model")
    if model_cfg is None:
        raise ConversionError("--input records no model arguments (neither args nor cfg.model): "
                              "not a checkpoint written by fairseq")
    if isinstance(model_cfg, argparse.Namespace):
        return copy.deepcopy(model_cfg)
    return argparse.Namespace(**dict(model_cfg))


def task_value(state: dict, key: str):
    """A task setting of the checkpoint (``cfg.task`` or the old ``args``), or None."""
    from omegaconf import OmegaConf

    if state.get("args") is not None:
        return getattr(state["args"], key, None)
    cfg = state.get("cfg") or {}
    task = cfg.get("task") if isinstance(cfg, dict) or OmegaConf.is_config(cfg) else None
    if task is None:
        return None
    if isinstance(task, argparse.Namespace):
        return getattr(task, key, None)
    return task.get(key)


def with_model_args(state: dict, changes: dict) -> dict:
    """``state``'s ``args`` / ``cfg`` (whichever it has) with the model arguments ``changes`` set."""
    from omegaconf import OmegaConf

    new = {}
    if state.get("args") is not None:
        args = copy.deepcopy(state["args"])
        for key, value in changes.items():
            setattr(args, key, value)
        new["args"] = args
    if state.get("cfg") is not None:
        cfg = state["cfg"]
        cfg = OmegaConf.to_container(cfg, resolve=True) if OmegaConf.is_config(cfg) else copy.deepcopy(cfg)
        model_cfg = cfg.get("model")
        if isinstance(model_cfg, argparse.Namespace):
            for key, value in changes.items():
                setattr(model_cfg, key, value)
        elif isinstance(model_cfg, dict):
            model_cfg.update({k: v for k, v in changes.items() if k != "arch" or "arch" in model_cfg})
        new["cfg"] = cfg
    return new


def check_output(input_path: str, output: str, force: bool, tool: str = "the converter",
                 owner: str = "this converter", record_key: str = CONVERSION_KEY) -> None:
    """Refuse an output that is the input, a folder, or an existing file that ``owner`` did not
    write (its checkpoints carry ``record_key``); ``tool`` and ``owner`` name the writer in the
    messages (the converter's by default; attention transfer passes its own)."""
    if os.path.abspath(output) == os.path.abspath(input_path) or (
            os.path.exists(output) and os.path.exists(input_path) and os.path.samefile(output, input_path)):
        raise ConversionError(f"--output {output} is the --input file: {tool} never overwrites its input")
    if os.path.isdir(output):
        raise ConversionError(f"--output {output} is a directory: name the file to write")
    if not os.path.exists(output):
        return
    if not force:
        raise ConversionError(f"--output {output} exists; {tool} never overwrites a file (choose another "
                              f"name, or --force to replace an earlier output of {owner})")
    try:
        earlier = load_checkpoint(output, flag="--output")
    except ConversionError as e:
        raise ConversionError(f"--force replaces only an earlier output of {owner}; --output {output} "
                              f"is none ({e}): left as it is") from e
    if not isinstance(earlier, dict) or record_key not in earlier:
        raise ConversionError(f"--force replaces only an earlier output of {owner}; --output {output} "
                              f"carries no {record_key!r} record: left as it is")


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors hold the same dtype, shape and bits. Not ``torch.equal``: a NaN is not
    equal to itself, and fairseq models carry uninitialised buffers (the sinusoidal positions'
    ``_float_tensor``, ``torch.FloatTensor(1)``) whose bits may read as NaN."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.numel() == 0:
        return True
    flat = [t.detach().cpu().contiguous().reshape(-1) for t in (a, b)]
    return torch.equal(*(t.view(torch.uint8) for t in flat))


def write_checkpoint(state: dict, output: str) -> None:
    """Save ``state`` to ``output`` through a fresh temporary file, checked by reading it back."""
    folder = os.path.dirname(os.path.abspath(output))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(output)}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        torch.save(state, tmp)
        saved = torch.load(tmp, map_location="cpu", weights_only=True)["model"]
        for key, tensor in state["model"].items():
            if key not in saved or not same_bits(saved[key], tensor):
                raise ConversionError(f"--output {output}: {key} did not read back as written (disk full?)")
        os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
