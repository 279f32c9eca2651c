"""Transfer's own files: the run state in SAVE_DIR (resumable) and the output checkpoint.

SAVE_DIR/transfer_last.pt holds only plain types and tensors (read back with torch's
weights-only loader): the input it belongs to, the trained tensors, Adam's state, the data
iterator's position, the RNG states, the update and token counts and the wall time so far.
"""

import os
import tempfile
from typing import Optional

import torch

from ..convert.checkpoint_io import ConversionError, check_output
from .errors import TransferError

STATE_FILE = "transfer_last.pt"
TRANSFER_KEY = "abc_transfer"  # the record an output of this tool carries


def claim_save_dir(save_dir: str) -> Optional[str]:
    """The run state's path when ``save_dir`` holds one (a run to resume), else None; a folder
    holding other files and no run state is refused."""
    path = os.path.join(save_dir, STATE_FILE)
    if os.path.isfile(path):
        return path
    if os.path.exists(save_dir) and not os.path.isdir(save_dir):
        raise TransferError(f"--save-dir {save_dir} is a file: name a folder")
    if os.path.isdir(save_dir) and os.listdir(save_dir):
        raise TransferError(f"--save-dir {save_dir} holds other files and no transfer run ({STATE_FILE}): "
                            f"give a new or empty folder")
    return None


def read_state(path: str, input_path: str, train_qk: bool) -> dict:
    """A saved run state, refused when it belongs to another ``--input`` or ``--train-qk`` choice."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise TransferError(f"--save-dir: {path} cannot be read ({e}): not this tool's run state?") from e
    if state.get("input") != os.path.abspath(input_path):
        raise TransferError(f"--save-dir {os.path.dirname(path)} holds the transfer of --input "
                            f"{state.get('input')}, not of {os.path.abspath(input_path)}")
    if bool(state.get("train_qk")) != train_qk:
        raise TransferError(f"--train-qk: the run in --save-dir {os.path.dirname(path)} was started "
                            f"{'with' if state.get('train_qk') else 'without'} it")
    return state


def atomic_save(obj, path: str) -> None:
    """``torch.save`` under a fresh temporary name beside ``path``, then renamed onto it."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def check_transfer_output(input_path: str, output: str, force: bool) -> None:
    """The converter's refusals of --output (the input, a folder, an existing file), in transfer's
    words; --force replaces only an earlier output of this tool."""
    check_output(input_path, output, force, tool="transfer", owner="transfer", record_key=TRANSFER_KEY)


def write_output(raw: dict, trained: dict, record: dict, output: str) -> None:
    """``raw`` (the input as saved) with the ``trained`` tensors replaced and the record added,
    written through a temporary file that is read back and compared before it takes the name."""
    from ..convert.checkpoint_io import write_checkpoint

    model = dict(raw["model"])
    for key, tensor in trained.items():
        model[key] = tensor.detach().to("cpu", model[key].dtype).clone()
    state = dict(raw, model=model)
    state[TRANSFER_KEY] = record
    try:
        write_checkpoint(state, output)
    except ConversionError as e:
        raise TransferError(str(e)) from e
