"""Shared by the tests that go through fairseq: dictionaries, parse-and-build as fairseq-train
does, and running a fairseq (or plugin) command line in a subprocess."""

import os
import shlex
import subprocess
import sys

import torch
from fairseq import options, tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf

import abc_fairseq.models  # noqa: F401 (--user-dir skips a package already imported: register here)

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


# fairseq's console scripts and modules -> the parser each one builds
_PARSERS = {"train": options.get_training_parser, "eval_lm": options.get_eval_lm_parser,
            "generate": options.get_generation_parser, "interactive": options.get_interactive_generation_parser}
_TOOLS = {f"fairseq-{name.replace('_', '-')}": name for name in _PARSERS}


def fairseq_command(line: str):
    """A printed launcher command (``fairseq-train ...``, ``torchrun ... fairseq-train ...``,
    ``python -m fairseq_cli.train ...``) -> (tool, its arguments), or None when it runs no fairseq tool."""
    words = shlex.split(line)
    for i, word in enumerate(words):
        script = words[i + 1].split() if word == "-c" and i + 2 < len(words) else []
        if script[:1] == ["exec"] and script[1] in _TOOLS:  # sh -c 'exec fairseq-train "$@" ...' NAME ARGS
            return _TOOLS[script[1]], words[i + 3:]
        if os.path.basename(word) in _TOOLS:
            return _TOOLS[os.path.basename(word)], words[i + 1:]
        if i and words[i - 1] == "-m" and word.startswith("fairseq_cli.") and word[12:] in _PARSERS:
            return word[12:], words[i + 1:]
    return None


def parse_command(line: str):
    """Parse a printed launcher command with the parser of the fairseq tool it runs, as that tool
    does (``--user-dir`` imported, the architecture's defaults applied): (tool, namespace)."""
    found = fairseq_command(line)
    assert found is not None, f"no fairseq command in: {line}"
    tool, argv = found
    return tool, options.parse_args_and_arch(_PARSERS[tool](), argv)


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
