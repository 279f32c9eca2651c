"""Checkpoints written before the strategy/spec refactor still load: strictly (same state-dict
names and shapes) and with the same outputs.

``fixtures/pre_refactor_models.pt`` holds, for abc_transformer with each strategy at every
position that supports it (softmax elsewhere) and for abc_roberta with ABC, the float64 state
dict and the outputs of a fixed batch, written by this file's ``build`` with the code of commit
cdf8d97 (``python tests/models/test_pre_refactor_checkpoints.py``; regenerating it with later code
would make the test vacuous).
"""

import os
import sys

import pytest
import torch
from fairseq import options, tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf

import abc_fairseq.models  # noqa: F401 (registers the models)

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "pre_refactor_models.pt")
MT = ["--task", "translation", "-s", "src", "-t", "tgt", "--arch", "abc_transformer_tiny",
      "--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "8", "--decoder-embed-dim", "8",
      "--encoder-ffn-embed-dim", "8", "--decoder-ffn-embed-dim", "8", "--encoder-attention-heads", "2",
      "--decoder-attention-heads", "2", "--dropout", "0", "--encoder-memory", "4", "--decoder-cross-memory", "4",
      "--decoder-self-memory", "2", "--compressive-ratio", "2", "--max-source-positions", "16",
      "--max-target-positions", "16"]
ROBERTA = ["--task", "masked_lm", "--arch", "abc_roberta_tiny", "--encoder-layers", "1", "--encoder-embed-dim", "8",
           "--encoder-ffn-embed-dim", "8", "--encoder-attention-heads", "2", "--encoder-memory", "4",
           "--tokens-per-sample", "16", "--dropout", "0"]


def _strategies(saved=None):
    """Each registered strategy with a case in ``saved`` (the fixture's keys; None: every one) and the
    modes it had when it first shipped: a mode added later (``Strategy.added_modes``: window's cross
    attention) is a new model, not an old checkpoint, so those cases keep softmax there. A strategy
    registered after the fixture was written (gsa) has no case: no checkpoint of it predates the
    refactor."""
    from abc_fairseq.strategies import STRATEGIES
    return {name: sorted(cls.modes - cls.added_modes) for name, cls in STRATEGIES.items()
            if saved is None or f"mt-{name}" in saved}


def _mt_flags(name, modes):
    return ["--encoder-attn", name if "encoder" in modes else "softmax",
            "--decoder-self-attn", name if "causal" in modes else "softmax",
            "--decoder-cross-attn", name if "cross" in modes else "softmax"]


def _dictionaries(path):
    for name in ("dict.src.txt", "dict.tgt.txt", "dict.txt"):
        with open(os.path.join(path, name), "w") as f:
            f.write("".join(f"w{i} {100 - i}\n" for i in range(20)))


def build(data_dir, flags, seed=1):
    parser = options.get_training_parser()
    cfg = convert_namespace_to_omegaconf(options.parse_args_and_arch(parser, [data_dir, *flags]))
    task = tasks.setup_task(cfg.task)
    torch.manual_seed(seed)
    return task.build_model(cfg.model).double().eval()


def outputs(model, kind):
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(4, 20, (2, 7), generator=g)
    tokens[0, :2] = 1  # left padding in the first row
    with torch.no_grad():
        if kind == "roberta":
            return model(torch.randint(4, 20, (2, 7), generator=g))[0]
        prev = torch.randint(4, 20, (2, 5), generator=g)
        return model(tokens, torch.tensor([5, 7]), prev)[0]


# Every op of these models runs in float64 except two that fairseq computes in float32 on purpose, so
# the saved outputs carry the float32 rounding of the CPU that wrote them (an Intel Xeon), and another
# CPU (AMD EPYC: another vectorised erf / sin) rounds those ops differently in the last bit. The
# tolerances are fitted to that float32 stage, not to float64:
# - roberta: fairseq's gelu is F.gelu(x.float()); one float32 ulp of the FFN activations reaches the
#   logits (|y| <= 0.17) as at most a few 1e-8 (2.45e-8 was seen between Intel and AMD): 2e-7 is 8x that.
# - mt: the sinusoidal position table is built in float32 (sin, cos, exp) and cast; one ulp of it (6e-8)
#   reaches the outputs (|y| <= 3) as at most a few 1e-7: 1e-6.
# A real change moves the outputs by far more: test_a_changed_weight_fails_the_comparison perturbs one
# weight by 1e-3 and needs the comparison to fail (the smallest effect of that is 2.2e-6, roberta).
ATOL = {"roberta": 2e-7, "mt": 1e-6}


def matches_fixture(model, kind, saved_outputs):
    """True when the model's outputs equal the saved ones within the kind's cross-CPU tolerance."""
    try:
        torch.testing.assert_close(outputs(model, kind), saved_outputs, rtol=0, atol=ATOL[kind])
    except AssertionError:
        return False
    return True


def cases(saved=None):
    yield "roberta", "roberta", ROBERTA
    for name, modes in _strategies(saved).items():
        yield f"mt-{name}", "mt", MT + _mt_flags(name, modes)


SAVED_KEYS = sorted(torch.load(FIXTURE, weights_only=True))
SAVED_CASES = list(cases(SAVED_KEYS))


def test_every_saved_case_runs():
    """No saved case is left out (a strategy removed or renamed would drop its old checkpoints)."""
    assert sorted(key for key, _, _ in SAVED_CASES) == SAVED_KEYS


@pytest.mark.parametrize("key,kind,flags", SAVED_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_old_state_dict_loads_strictly_with_the_same_outputs(tmp_path, key, kind, flags):
    saved = torch.load(FIXTURE, weights_only=True)[key]
    _dictionaries(str(tmp_path))
    model = build(str(tmp_path), flags, seed=2)  # other initial values: the load must set them all
    model.load_state_dict(saved["state_dict"], strict=True)
    torch.testing.assert_close(outputs(model, kind), saved["outputs"], rtol=0, atol=ATOL[kind])


@pytest.mark.parametrize("key,kind,flags", SAVED_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_a_changed_weight_fails_the_comparison(tmp_path, key, kind, flags):
    """The tolerance is no blanket: one attention weight moved by 1e-3 is caught in every case."""
    saved = torch.load(FIXTURE, weights_only=True)[key]
    _dictionaries(str(tmp_path))
    model = build(str(tmp_path), flags, seed=2)
    state = {name: value.clone() for name, value in saved["state_dict"].items()}
    changed = [name for name in state if name.endswith("self_attn.out_proj.weight")][-1]
    state[changed].view(-1)[0] += 1e-3
    model.load_state_dict(state, strict=True)
    assert not matches_fixture(model, kind, saved["outputs"]), changed


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _dictionaries(tmp)
        fixture = {}
        for key, kind, flags in cases():
            model = build(tmp, flags)
            fixture[key] = {"state_dict": model.state_dict(), "outputs": outputs(model, kind)}
        torch.save(fixture, sys.argv[1] if len(sys.argv) > 1 else FIXTURE)
