"""A kernel that cannot compile or launch: ``backend="auto"`` runs the PyTorch path for that op
(values and gradients equal to ``backend="torch"``) and warns once naming the op, the reason and
the switch; ``backend="triton"`` raises. The failure is forced under Triton's interpreter (CPU
tensors, how CI runs the kernels) by replacing a kernel launcher with one that raises the error
Triton raises when a kernel needs more shared memory than the device has; auto's usual device
rule (kernels only for CUDA tensors) is lifted for the test.
"""

import importlib
import importlib.util
import sys
import warnings

import pytest
import torch
from gsa_helpers import problem
from ops_helpers import random_inputs

from abc_fairseq.ops import ABCState, abc_memory, abc_read, causal_abc, causal_abc_step
from abc_fairseq.ops.gsa import causal_gsa

if importlib.util.find_spec("triton") is None:  # not imported here: see triton_helpers
    pytest.skip("triton is not installed", allow_module_level=True)

pytestmark = [pytest.mark.usefixtures("interpreted_kernels"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]
BACKEND = "abc_fairseq.ops.backend"


class _Failing:
    """Stands for a ``triton.jit`` kernel: launching it raises Triton's OutOfResources."""

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            from triton.runtime.errors import OutOfResources
            raise OutOfResources(262144, 232448, "shared memory")
        return launch


@pytest.fixture
def kernels_on_cpu(monkeypatch):
    """auto takes the kernels for CPU tensors too (the interpreter stands for the GPU); failures
    of earlier tests are forgotten."""
    backend = sys.modules[BACKEND]
    monkeypatch.setattr(backend, "AUTO_DEVICES", ("cuda", "cpu"))
    backend.reset_failures()
    yield
    backend.reset_failures()


def _grads(fn, inputs):
    leaves = [x.detach().clone().requires_grad_() for x in inputs]
    out = fn(*leaves)
    out = out if isinstance(out, tuple) else (out,)
    weights = [torch.randn(o.shape, generator=torch.Generator().manual_seed(i), dtype=o.dtype)
               for i, o in enumerate(out)]
    grads = torch.autograd.grad(sum((o * w).sum() for o, w in zip(out, weights)), leaves)
    return [o.detach() for o in out], grads


def _causal(backend):
    return lambda q, k, v, l: causal_abc(q, k, v, l, chunk_size=16, backend=backend)


def _gated(backend):
    return lambda q, k, v, g: causal_gsa(q, k, v, g, chunk_size=16, backend=backend)


def _gated_inputs(seed):
    """q, k, v and the strategy's usual log gates, logsigmoid(x) / 8: a failing backward leaves the
    kernels' forward in place, within 1e-6 of the PyTorch path's only for gates of that size."""
    q, k, v, _ = problem(2, 2, 40, 8, 6, seed=seed, dtype=torch.float32)
    x = torch.randn(2, 2, 40, 6, generator=torch.Generator().manual_seed(seed))
    return q, k, v, torch.nn.functional.logsigmoid(x) / 8.0


def _memory(backend):
    return lambda k, v, l: abc_memory(k, v, l, backend=backend)


def _read(backend):
    return lambda q, km, vm: abc_read(q, km, vm, backend=backend)


CASES = {
    # op: (module holding the launcher, the launcher, the op on the given backend, inputs)
    "causal_abc forward": ("causal.triton.function", "output_kernel", _causal,
                           lambda: random_inputs(2, 2, 40, 8, 6, seed=1, dtype=torch.float32)),
    "causal_abc backward": ("causal.triton.function", "rows_kernel", _causal,
                            lambda: random_inputs(2, 2, 40, 8, 6, seed=2, dtype=torch.float32)),
    "causal_gsa forward": ("causal.triton.function", "output_kernel", _gated,
                           lambda: _gated_inputs(1)),
    "causal_gsa backward": ("causal.triton.function", "rows_kernel", _gated,
                            lambda: _gated_inputs(2)),
    "abc_memory forward": ("bidirectional.triton.function", "memory_write_fwd", _memory,
                           lambda: random_inputs(2, 2, 20, 8, 6, seed=3, dtype=torch.float32)[1:]),
    "abc_memory backward": ("bidirectional.triton.function", "memory_write_bwd", _memory,
                            lambda: random_inputs(2, 2, 20, 8, 6, seed=4, dtype=torch.float32)[1:]),
    "abc_read backward": ("bidirectional.triton.function", "memory_read_bwd", _read,
                          lambda: [torch.randn(2, 2, 5, 8), torch.randn(2, 2, 6, 8), torch.randn(2, 2, 6, 8)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_auto_falls_back_to_torch_and_triton_raises(case, kernels_on_cpu, monkeypatch):
    module, launcher, op, make = CASES[case]
    inputs = make()
    expected, expected_grads = _grads(op("torch"), inputs)
    monkeypatch.setattr(importlib.import_module(f"abc_fairseq.ops.{module}"), launcher, _Failing())
    with pytest.warns(RuntimeWarning) as caught:
        out, grads = _grads(op("auto"), inputs)
    messages = [str(w.message) for w in caught if "Triton kernels cannot run" in str(w.message)]
    assert len(messages) == 1, messages
    name = case.split()[0]
    assert messages[0].startswith(f"{name}:") and "OutOfResources" in messages[0]
    assert sys.modules[BACKEND].switch_hint in messages[0]  # the ops' own, or the fairseq plugin's
    for got, want in zip(out + list(grads), expected + list(expected_grads)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    # Once failed, auto skips the kernels: no second warning.
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        _grads(op("auto"), inputs)
    assert not [w for w in again if "Triton kernels cannot run" in str(w.message)]
    from triton.runtime.errors import OutOfResources
    with pytest.raises(OutOfResources):
        _grads(op("triton"), inputs)


def test_step_falls_back_and_triton_raises(kernels_on_cpu, monkeypatch):
    q, k, v, logits = random_inputs(2, 2, 1, 8, 6, seed=5, dtype=torch.float32)
    state = ABCState(torch.randn(2, 2, 6, 8), torch.randn(2, 2, 6, 8), torch.randn(2, 2, 6))
    expected = causal_abc_step(q, k, v, logits, state, backend="torch")
    kernels = importlib.import_module("abc_fairseq.ops.causal.triton.recurrent")
    monkeypatch.setattr(kernels, "causal_step_kernel", _Failing())
    with pytest.warns(RuntimeWarning, match=r"causal_abc_step: the Triton kernels cannot run.*OutOfResources"):
        out, following = causal_abc_step(q, k, v, logits, state, backend="auto")
    torch.testing.assert_close(out, expected[0])
    for got, want in zip(following, expected[1]):
        torch.testing.assert_close(got, want)
    from triton.runtime.errors import OutOfResources
    with pytest.raises(OutOfResources):
        causal_abc_step(q, k, v, logits, state, backend="triton")


def test_errors_of_the_inputs_are_not_swallowed(kernels_on_cpu, monkeypatch):
    """Only a kernel failure falls back: an error that is no Triton or CUDA failure propagates."""
    def broken(*args, **kwargs):
        raise KeyError("a bug, not a device limit")

    monkeypatch.setattr(importlib.import_module("abc_fairseq.ops.causal.triton.function"), "triton_causal_abc", broken)
    with pytest.raises(KeyError):
        causal_abc(*random_inputs(1, 1, 16, 8, 4, seed=6, dtype=torch.float32), chunk_size=16, backend="auto")


def test_bidirectional_launchers_take_smaller_rows_when_the_device_refuses(monkeypatch):
    """A device whose blocks lack the shared memory for 64 or 32 rows, or for 16 rows at
    Triton's default pipelining depth (OutOfResources): the launcher retries with a shallower
    pipeline, then fewer rows per program, with exact results, and remembers its choice."""
    from triton.runtime.errors import OutOfResources

    module = importlib.import_module("abc_fairseq.ops.bidirectional.triton.function")
    real = module.memory_read_fwd
    tried = []

    class SmallDevice:
        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                tried.append((kwargs["BT"], kwargs["num_stages"]))
                if kwargs["BT"] > 16 or kwargs["num_stages"] > 2:
                    raise OutOfResources(kwargs["BT"] * 4096, 16 * 4096, "shared memory")
                return real[grid](*args, **kwargs)
            return launch

    monkeypatch.setattr(module, "memory_read_fwd", SmallDevice())
    q, key_memory, value_memory = torch.randn(2, 2, 40, 8), torch.randn(2, 2, 6, 8), torch.randn(2, 2, 6, 8)
    expected = abc_read(q, key_memory, value_memory, backend="torch")
    torch.testing.assert_close(abc_read(q, key_memory, value_memory, backend="triton"), expected)
    refused = [(bt, stages) for bt in (64, 32) for stages in (3, 2, 1)] + [(16, 3)]
    assert tried == refused + [(16, 2)]
    torch.testing.assert_close(abc_read(q, key_memory, value_memory, backend="triton"), expected)
    assert tried == refused + [(16, 2), (16, 2)]  # the device's choice is remembered


def test_bidirectional_launchers_raise_when_nothing_fits(monkeypatch):
    """Every rows block and depth refused: ``triton`` raises Triton's own error."""
    from triton.runtime.errors import OutOfResources

    module = importlib.import_module("abc_fairseq.ops.bidirectional.triton.function")

    class NoDevice:
        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                raise OutOfResources(1 << 20, 1 << 10, "shared memory")
            return launch

    monkeypatch.setattr(module, "memory_read_fwd", NoDevice())
    q, key_memory, value_memory = torch.randn(1, 1, 20, 8), torch.randn(1, 1, 6, 8), torch.randn(1, 1, 6, 8)
    with pytest.raises(OutOfResources):
        abc_read(q, key_memory, value_memory, backend="triton")
