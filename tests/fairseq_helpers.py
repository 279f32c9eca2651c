"""Shared by the tests that go through fairseq: dictionaries, parse-and-build as fairseq-train
does, and running a fairseq (or plugin) command line in a subprocess."""

import os
import subprocess
import sys

import torch
from fairseq import options, tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_dictionary(path, names=("dict.txt",), words: int = 30, prefix: str = "w") -> str:
    """Dictionaries of ``words`` entries (``w0 100``, ``w1 99``, ...) under ``path``; returns it."""
    for name in names:
        with open(os.path.join(path, name), "w") as f:
            f.write("".join(f"{prefix}{i} {100 - i}\n" for i in range(words)))
    return str(path)


def parse(argv):
    """fairseq-train's parser on ``argv`` (data dir first)."""
    return options.parse_args_and_arch(options.get_training_parser(), list(map(str, argv)))


def build(argv, seed: int = 1):
    """Parse and build as fairseq-train does (argparse -> omegaconf -> task.build_model): (task, model)."""
    cfg = convert_namespace_to_omegaconf(parse(argv))
    task = tasks.setup_task(cfg.task)
    torch.manual_seed(seed)
    return task, task.build_model(cfg.model)


def run_module(module, *args, check: bool = True, timeout: int = 300, stdin=None, env_extra=None):
    """``python -m module args`` from the repository root on one thread, warnings off (plus
    ``env_extra``), fed ``stdin``. Returns the log (stdout + stderr); with ``check=False``
    (returncode, log), else a failure raises."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", **(env_extra or {}))
    proc = subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT, env=env, input=stdin,
                          capture_output=True, text=True, timeout=timeout)
    log = proc.stdout + proc.stderr
    if check and proc.returncode != 0:
        raise AssertionError(f"{module} failed ({proc.returncode}):\n{log[-8000:]}")
    return log if check else (proc.returncode, log)


def fairseq(tool, *args, **kwargs):
    """A fairseq command line (``train``, ``preprocess``, ``generate``, ``eval_lm``...)."""
    return run_module(f"fairseq_cli.{tool}", *args, **kwargs)


def parse_error(argv, capsys) -> str:
    """fairseq-train's parser must refuse ``argv`` with argparse's usage error (exit code 2);
    returns what it printed on stderr."""
    import pytest

    with pytest.raises(SystemExit) as exit_info:
        parse(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err
