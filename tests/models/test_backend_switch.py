"""``--abc-backend`` on every ABC model: parsed and checked once, refused at parsing where it
cannot run, stored in the checkpoint, overridable with ``--model-overrides``, beaten by
``ABC_BACKEND``, and handed through the spec to the ops' ``backend=`` argument."""

import importlib.util
from argparse import Namespace

import pytest
import torch
from fairseq import tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq_helpers import build, parse, parse_error
from omegaconf import OmegaConf

import abc_fairseq.models  # noqa: F401 (registers the models)
import abc_fairseq.strategies.abc_mlp as abc_mlp
import abc_fairseq.strategies.gsa as gsa
from abc_fairseq.strategies import Strategy

LM = ["--task", "language_modeling", "--arch", "abc_lm_small", "--decoder-layers", "1", "--decoder-embed-dim",
      "32", "--decoder-ffn-embed-dim", "32", "--decoder-attention-heads", "2", "--decoder-self-memory", "4",
      "--tokens-per-sample", "32", "--dropout", "0"]
MT = ["--task", "translation", "-s", "src", "-t", "tgt", "--arch", "abc_transformer_tiny"]
MLM = ["--task", "masked_lm", "--arch", "abc_roberta_tiny"]


@pytest.fixture(autouse=True)
def no_backend_env(monkeypatch):
    monkeypatch.delenv("ABC_BACKEND", raising=False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)


def _argv(kind, lm_dir, mt_dir):
    return {"lm": [lm_dir, *LM], "mt": [mt_dir, *MT], "mlm": [lm_dir, *MLM]}[kind]


def _backends(model):
    return {m.backend for m in model.modules() if isinstance(m, Strategy)}


@pytest.mark.parametrize("kind", ["lm", "mt", "mlm"])
def test_flag_reaches_every_strategy(kind, lm_dir, mt_dir):
    argv = _argv(kind, lm_dir, mt_dir)
    assert _backends(build(argv)[1]) == {"auto"}  # the default
    assert _backends(build(argv + ["--abc-backend", "torch"])[1]) == {"torch"}


@pytest.mark.parametrize("kind", ["lm", "mt", "mlm"])
def test_triton_is_refused_at_parsing_without_cuda_or_interpreter(kind, lm_dir, mt_dir, capsys):
    if torch.cuda.is_available():
        pytest.skip("a CUDA device can run the kernels")
    message = parse_error(_argv(kind, lm_dir, mt_dir) + ["--abc-backend", "triton"], capsys)
    assert "--abc-backend" in message and "cannot run here" in message and "TRITON_INTERPRET=1" in message
    message = parse_error(_argv(kind, lm_dir, mt_dir) + ["--abc-backend", "cuda"], capsys)
    assert "argument --abc-backend: must be one of auto, torch, triton, got 'cuda'" in message


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton is not installed")
def test_triton_parses_under_the_interpreter(lm_dir, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert parse([lm_dir, *LM, "--abc-backend", "triton"]).abc_backend == "triton"


def test_environment_variable_wins_over_the_flag(lm_dir, mt_dir, monkeypatch):
    monkeypatch.setenv("ABC_BACKEND", "torch")
    assert _backends(build([lm_dir, *LM, "--abc-backend", "auto"])[1]) == {"torch"}
    assert _backends(build([mt_dir, *MT])[1]) == {"torch"}
    monkeypatch.setenv("ABC_BACKEND", "fast")
    with pytest.raises(ValueError, match="ABC_BACKEND must be one of auto, torch, triton, got 'fast'"):
        build([lm_dir, *LM])


def test_configs_that_skip_argparse_are_checked_at_build(lm_dir):
    """A checkpoint's config (or hydra's) never meets argparse: reading it checks the backend,
    and a config older than the option means auto."""
    cfg = convert_namespace_to_omegaconf(parse([lm_dir, *LM]))
    task = tasks.setup_task(cfg.task)
    cfg.model.abc_backend = "triton"
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="--abc-backend triton cannot run here"):
            task.build_model(cfg.model)
    older = OmegaConf.to_container(cfg.model)
    del older["abc_backend"]
    assert _backends(task.build_model(Namespace(**older))) == {"auto"}


def test_ops_receive_the_backend(lm_dir, monkeypatch):
    """The strategy hands its backend to every op call (training forward, decoding step)."""
    seen = []
    for name in ("causal_abc", "causal_abc_step"):
        real = getattr(abc_mlp, name)
        monkeypatch.setattr(abc_mlp, name, lambda *a, _real=real, _name=name, **kw: (
            seen.append((_name, kw["backend"])), _real(*a, **kw))[1])
    task, model = build([lm_dir, *LM, "--abc-backend", "torch"])
    tokens = torch.randint(4, 20, (2, 6))
    model.eval()
    model(tokens)
    model(tokens[:, :1], incremental_state={})
    assert ("causal_abc", "torch") in seen and ("causal_abc_step", "torch") in seen
    assert {backend for _, backend in seen} == {"torch"}


def test_gsa_hands_the_backend_to_its_op(lm_dir, monkeypatch):
    """GSA's training forward runs ``causal_gsa`` with the model's backend (on GPUs: ABC's kernels
    with GSA's gates)."""
    seen = []
    real = gsa.causal_gsa
    monkeypatch.setattr(gsa, "causal_gsa", lambda *a, **kw: (seen.append(kw["backend"]), real(*a, **kw))[1])
    task, model = build([lm_dir, *LM, "--decoder-self-attn", "gsa", "--abc-backend", "torch"])
    tokens = torch.randint(4, 20, (2, 6))
    model(tokens)
    assert seen == ["torch"]
