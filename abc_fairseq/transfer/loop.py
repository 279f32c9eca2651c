"""The transfer run: batches from fairseq's iterator, one Adam update each, logs, run state, output."""

import os
import time
from typing import Callable, Dict, Iterator, Optional

import torch

from .config import TransferConfig
from .errors import TransferError
from .models import ModelPair, changed_frozen, freeze_all_but, load_pair
from .objective import module_errors, teacher_calls, transfer_loss
from .run_state import (
    STATE_FILE,
    TRANSFER_KEY,
    atomic_save,
    check_transfer_output,
    claim_save_dir,
    read_state,
    write_output,
)


def batch_iterator(pair: ModelPair, config: TransferConfig, epoch: int = 1):
    """fairseq's EpochBatchIterator over ``config.subset`` of the checkpoint's task."""
    from fairseq import utils

    task = pair.task
    try:
        task.load_dataset(config.subset, combine=False, epoch=epoch)
    except (FileNotFoundError, KeyError) as e:
        flag = "--data" if config.data else "--data (the checkpoint's task's folder)"
        raise TransferError(f"--subset {config.subset} / {flag}: {e}") from e
    dataset = task.dataset(config.subset)
    max_positions = utils.resolve_max_positions(task.max_positions(), pair.student.max_positions())
    try:
        return task.get_batch_iterator(dataset=dataset, max_tokens=config.max_tokens, max_positions=max_positions,
                                       ignore_invalid_inputs=True, seed=config.seed, epoch=epoch, num_workers=0,
                                       disable_iterator_cache=True)
    except (AssertionError, ValueError) as e:  # batch_by_size: a sample longer than the batch
        raise TransferError(f"--max-tokens {config.max_tokens}: {e}") from e


def endless(epoch_itr) -> Iterator[dict]:
    """Batches, epoch after epoch (each epoch shuffled as fairseq-train shuffles it)."""
    while True:
        for sample in epoch_itr.next_epoch_itr(shuffle=True):
            if sample:  # fairseq's empty placeholder batches carry nothing to fit
                yield sample


def short_name(name: str) -> str:
    """``decoder.layers.0.self_attn`` -> ``decoder.0.self_attn`` (log lines)."""
    return name.replace(".layers.", ".").replace("sentence_encoder.", "")


class Window:
    """Per-module MSE summed over the updates since the last log line."""

    def __init__(self):
        self.sums: Dict[str, float] = {}
        self.count = 0

    def add(self, errors: Dict[str, torch.Tensor]) -> None:
        for name, value in errors.items():
            self.sums[name] = self.sums.get(name, 0.0) + float(value.detach())
        self.count += 1

    def means(self) -> Dict[str, float]:
        return {name: total / max(self.count, 1) for name, total in self.sums.items()}


def log_line(step: int, config: TransferConfig, means: Dict[str, float], tokens: int, seconds: float) -> str:
    mean = sum(means.values()) / max(len(means), 1)
    layers = " ".join(f"{short_name(name)} {value:.4g}" for name, value in means.items())
    return (f"transfer | update {step}/{config.max_updates} | mse {mean:.4g} | {layers} | tokens {tokens} | "
            f"{tokens / max(seconds, 1e-9):.0f} tok/s | {seconds:.1f} s")


def snapshot(pair: ModelPair, config: TransferConfig, optimizer, epoch_itr, progress: dict) -> dict:
    params = dict(pair.student.named_parameters())
    return {"input": os.path.abspath(config.input), "train_qk": config.train_qk, **progress,
            "trained": {name: params[name].detach().cpu().clone() for name in pair.trained},
            "optimizer": optimizer.state_dict(), "iterator": epoch_itr.state_dict(),
            "rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []}


def restore(pair: ModelPair, config: TransferConfig, optimizer, epoch_itr, saved: dict) -> dict:
    params = dict(pair.student.named_parameters())
    with torch.no_grad():
        for name in pair.trained:
            params[name].copy_(saved["trained"][name])
    optimizer.load_state_dict(saved["optimizer"])
    for group in optimizer.param_groups:
        group["lr"] = config.lr
    epoch_itr.load_state_dict(saved["iterator"])
    torch.set_rng_state(saved["rng"])
    if saved["cuda_rng"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(saved["cuda_rng"])
    return {key: saved[key] for key in ("step", "tokens", "seconds", "mse")}


def transfer(config: TransferConfig, after_update: Optional[Callable[[int], None]] = None) -> dict:
    """Run (or resume) the transfer of ``config`` and write its output; returns the output's record.
    ``after_update(step)`` is called after each update and its run-state save (tests interrupt there)."""
    check_transfer_output(config.input, config.output, config.force)
    state_path = claim_save_dir(config.save_dir)
    saved = read_state(state_path, config.input, config.train_qk) if state_path else None
    if saved is not None and saved["step"] > config.max_updates:
        raise TransferError(f"--max-updates {config.max_updates} is below the {saved['step']} updates the run in "
                            f"--save-dir {config.save_dir} has made")
    device = torch.device("cuda" if torch.cuda.is_available() and not config.cpu else "cpu")
    torch.manual_seed(config.seed)
    pair = load_pair(config.input, config.data, config.train_qk, device)
    optimizer = torch.optim.Adam(freeze_all_but(pair.student, pair.trained), lr=config.lr)
    epoch_itr = batch_iterator(pair, config, epoch=saved["iterator"]["epoch"] if saved else 1)
    progress = {"step": 0, "tokens": 0, "seconds": 0.0, "mse": {}}
    if saved is not None:
        progress = restore(pair, config, optimizer, epoch_itr, saved)
        print(f"transfer | resumed {config.save_dir} at update {progress['step']}", flush=True)
    else:
        print(f"transfer | {config.input}: training {len(pair.trained)} tensors "
              f"({sum(p.numel() for p in optimizer.param_groups[0]['params'])} parameters) against the softmax "
              f"attention of {len(pair.modules)} modules on {device}", flush=True)
    samples, window = endless(epoch_itr), Window()
    while progress["step"] < config.max_updates:
        start = time.perf_counter()
        sample = next(samples)
        if device.type == "cuda":
            from fairseq import utils

            sample = utils.move_to_cuda(sample)
        errors = module_errors(pair.student, teacher_calls(pair.teacher, pair.modules, sample["net_input"]))
        optimizer.zero_grad(set_to_none=True)
        transfer_loss(errors).backward()
        optimizer.step()
        window.add(errors)
        progress["step"] += 1
        progress["tokens"] += int(sample["ntokens"])
        step = progress["step"]
        if step % config.log_interval == 0 or step == config.max_updates:
            progress["mse"] = window.means()
            print(log_line(step, config, progress["mse"], progress["tokens"],
                           progress["seconds"] + time.perf_counter() - start), flush=True)
            window = Window()
        if step % config.save_interval == 0 or step == config.max_updates:
            saved_at = time.perf_counter()  # the save's own time counts in the next save's record
            atomic_save(snapshot(pair, config, optimizer, epoch_itr,
                                 dict(progress, seconds=progress["seconds"] + saved_at - start)),
                        os.path.join(config.save_dir, STATE_FILE))
        progress["seconds"] += time.perf_counter() - start
        if after_update is not None:
            after_update(step)
    return finish(pair, config, progress)


def finish(pair: ModelPair, config: TransferConfig, progress: dict) -> dict:
    """Check that nothing but the trained tensors moved, then write the output."""
    changed = changed_frozen(pair.student, pair.raw["model"], pair.trained)
    if changed:
        raise RuntimeError(f"frozen tensors changed during transfer: {', '.join(changed[:6])}")
    params = dict(pair.student.named_parameters())
    record = {"input": os.path.abspath(config.input), "updates": progress["step"], "tokens": progress["tokens"],
              "wall_seconds": round(progress["seconds"], 3), "lr": config.lr, "max_tokens": config.max_tokens,
              "seed": config.seed, "subset": config.subset, "train_qk": config.train_qk,
              "trained": list(pair.trained), "mse": {k: float(v) for k, v in progress["mse"].items()}}
    write_output(pair.raw, {name: params[name] for name in pair.trained}, record, config.output)
    print(f"transfer | wrote {config.output}: {progress['step']} updates, {progress['tokens']} tokens, "
          f"{progress['seconds']:.1f} s; {len(pair.trained)} tensors trained, every other tensor of --input "
          f"unchanged", flush=True)
    return record


__all__ = ["transfer", "TRANSFER_KEY"]
