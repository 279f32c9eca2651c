"""The causal kernels' chunk chosen by measurement (``ops/triton/tuning.py``), under Triton's
interpreter: every candidate is timed once per size class on the call's own inputs, the fastest is
taken and kept, a candidate that cannot launch is skipped, and the results are exact whichever
chunk wins. Timings are faked (the interpreter's are not the GPU's); the candidates are set as a
GPU's would be (off CUDA the launcher has one)."""

import importlib.util

import pytest
import torch
from gsa_helpers import problem
from ops_helpers import random_inputs

from abc_fairseq.ops import causal_abc, reference_causal_abc
from abc_fairseq.ops.gsa import causal_gsa, reference_causal_gsa

if importlib.util.find_spec("triton") is None:  # not imported here: see triton_helpers
    pytest.skip("triton is not installed", allow_module_level=True)

pytestmark = pytest.mark.usefixtures("interpreted_kernels")


def _trainable(inputs):
    """Leaves requiring grad: the chunk reaches the autograd Function, where ``tuning`` records it
    (without a gradient to record the launchers skip the Function)."""
    return [x.requires_grad_() for x in inputs]


@pytest.fixture
def tuning(monkeypatch):
    """Candidates (32, 16) wherever the launchers ask; timings from ``times`` (seconds, in call
    order); every chunk that reaches the autograd Function recorded."""
    from abc_fairseq.ops.causal.triton import function
    from abc_fairseq.ops.triton import tuning

    tuning.forget()
    monkeypatch.setattr(function, "chunk_candidates", lambda chunk, *rest: (32, 16))
    state = {"times": [], "timed": 0, "applied": []}

    def fake_elapsed(fn, device):
        fn()
        state["timed"] += 1
        return state["times"].pop(0)

    monkeypatch.setattr(tuning, "_elapsed", fake_elapsed)
    real = function.TritonCausalABC.apply
    monkeypatch.setattr(function.TritonCausalABC, "apply", lambda *a: state["applied"].append(a[-3]) or real(*a))
    yield state
    tuning.forget()


def test_the_fastest_chunk_is_taken_kept_and_exact(tuning):
    tuning["times"] = [2.0, 2.5, 1.0, 1.5]  # chunk 32 twice, then 16 twice: 16 is faster
    inputs = _trainable(random_inputs(1, 2, 70, 16, 8, seed=3, dtype=torch.float32))
    out = causal_abc(*inputs, backend="triton").detach()
    assert tuning["applied"] == [16] and tuning["timed"] == 4
    expected = reference_causal_abc(*(x.detach().double() for x in inputs))
    torch.testing.assert_close(out.double(), expected, rtol=2e-5, atol=2e-5)
    causal_abc(*_trainable(random_inputs(1, 2, 80, 16, 8, seed=4, dtype=torch.float32)), backend="triton")
    assert tuning["applied"] == [16, 16] and tuning["timed"] == 4  # same size class: not measured again
    tuning["times"] = [1.0, 1.0, 3.0, 3.0]
    causal_abc(*_trainable(random_inputs(1, 2, 300, 16, 8, seed=5, dtype=torch.float32)), backend="triton")
    assert tuning["applied"][-1] == 32 and tuning["timed"] == 8  # a longer N is another class


def test_a_candidate_that_cannot_launch_is_skipped(tuning, monkeypatch):
    from triton.runtime.errors import OutOfResources

    from abc_fairseq.ops.causal.triton import function

    real = function.forward_kernels

    def refusing(*args, gated):
        if args[-2] == 32:  # the chunk (the last: the state dtype)
            raise OutOfResources(300_000, 232_448, "shared memory")
        return real(*args, gated=gated)

    monkeypatch.setattr(function, "forward_kernels", refusing)
    tuning["times"] = [1.0, 1.0]
    inputs = _trainable(random_inputs(1, 1, 40, 16, 8, seed=6, dtype=torch.float32))
    out = causal_abc(*inputs, backend="triton").detach()
    assert tuning["applied"] == [16] and tuning["timed"] == 2
    expected = reference_causal_abc(*(x.detach().double() for x in inputs))
    torch.testing.assert_close(out.double(), expected, rtol=2e-5, atol=2e-5)


def test_gsa_is_measured_on_its_own_normalisers(tuning, monkeypatch):
    """... with its gate kernel in every timed trial (each candidate's chunk)."""
    from abc_fairseq.ops.gsa.triton import function as gsa_function
    from abc_fairseq.ops.triton import tuning as tuning_module

    gate_chunks, real_gates = [], gsa_function._gate_grads
    monkeypatch.setattr(gsa_function, "_gate_grads", lambda *a: gate_chunks.append(a[-1]) or real_gates(*a))
    tuning["times"] = [1.0, 1.0, 2.0, 2.0]  # 32 wins
    q, k, v, _ = problem(1, 2, 40, 16, 8, seed=7, dtype=torch.float32)
    gates = torch.nn.functional.logsigmoid(torch.randn(1, 2, 40, 8, generator=torch.Generator().manual_seed(7))) / 8
    out = causal_gsa(q, k, v, gates, backend="triton")
    assert list(tuning_module.chosen().values()) == [32]
    # every trial of a candidate (the warm-up and the two timed) runs it, at that candidate's chunk
    assert sorted(set(gate_chunks)) == [16, 32] and gate_chunks.count(32) == gate_chunks.count(16) == 3
    ref = reference_causal_gsa(*(x.double() for x in (q, k, v, gates)))
    torch.testing.assert_close(out.double(), ref, rtol=1e-4, atol=1e-4)
