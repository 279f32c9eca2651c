"""Transfer's own files: the run state in SAVE_DIR (resumable) and the output checkpoint.

SAVE_DIR/transfer_last.pt holds only plain types and tensors (read back with torch's
weights-only loader): the input it belongs to, the trained tensors, Adam's state, the data
iterator's position, the RNG states, the update and token counts and the wall time so far.
"""

import os
import tempfile
from typing import Optional

import torch

from ..convert.checkpoint_io import ConversionError, load_checkpoint
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
    """Refuse an output that is the input, a folder or an existing file; --force replaces only
    an earlier output of this tool."""
    if os.path.abspath(output) == os.path.abspath(input_path) or (
            os.path.exists(output) and os.path.exists(input_path) and os.path.samefile(output, input_path)):
        raise TransferError(f"--output {output} is the --input file: transfer never overwrites its input")
    if os.path.isdir(output):
        raise TransferError(f"--output {output} is a directory: name the file to write")
    if not os.path.exists(output):
        return
    if not force:
        raise TransferError(f"--output {output} exists; transfer never overwrites a file (choose another name, "
                            f"or --force to replace an earlier output of transfer)")
    try:
        earlier = load_checkpoint(output, flag="--output")
    except ConversionError as e:
        raise TransferError(f"--force replaces only an earlier output of transfer: {e}") from e
    if not isinstance(earlier, dict) or TRANSFER_KEY not in earlier:
        raise TransferError(f"--force replaces only an earlier output of transfer; --output {output} carries no "
                            f"{TRANSFER_KEY!r} record: left as it is")


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
