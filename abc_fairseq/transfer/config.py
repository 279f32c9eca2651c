"""The transfer run's settings: parsed and checked once by the command line, handed down whole."""

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class TransferConfig:
    """input: the converted checkpoint; output: the checkpoint to write; save_dir: the run state.
    data: the dataset folder (None: the checkpoint's task's); subset: the split trained on.
    max_updates, lr, max_tokens (per batch), seed (data order), train_qk (q/k trained too).
    log_interval / save_interval: updates between log lines / run-state saves.
    cpu: stay on CPU when CUDA is present; force: replace an earlier output of transfer."""

    input: str
    output: str
    save_dir: str
    data: Optional[str] = None
    subset: str = "train"
    max_updates: int = 1000
    lr: float = 1e-3
    max_tokens: int = 4096
    seed: int = 1
    train_qk: bool = False
    log_interval: int = 10
    save_interval: int = 100
    cpu: bool = False
    force: bool = False
