"""Random inputs, a log-space step-by-step oracle and outputs with their gradients, for the op and kernel tests."""

import contextlib
from unittest import mock

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from abc_fairseq.ops import causal_abc_step


def random_inputs(B, H, N, d, n, dtype=torch.float64, logit_scale=2.0, dv=None, seed=0):
    """q, k: [B, H, N, d]; v: [B, H, N, dv]; phi_logits: [B, H, N, n]."""
    gen = torch.Generator().manual_seed(seed)
    dv = d if dv is None else dv
    q = torch.randn(B, H, N, d, generator=gen, dtype=torch.float64)
    k = torch.randn(B, H, N, d, generator=gen, dtype=torch.float64)
    v = torch.randn(B, H, N, dv, generator=gen, dtype=torch.float64)
    logits = logit_scale * torch.randn(B, H, N, n, generator=gen, dtype=torch.float64)
    return tuple(x.to(dtype) for x in (q, k, v, logits))


def step_by_step(q, k, v, logits, scale=None):
    """Run causal_abc_step over the sequence; returns [B, H, N, dv]."""
    state, outs = None, []
    for t in range(q.shape[2]):
        row = slice(t, t + 1)
        out, state = causal_abc_step(q[:, :, row], k[:, :, row], v[:, :, row], logits[:, :, row],
                                     state, scale=scale)
        outs.append(out)
    return torch.cat(outs, dim=2)


def weighted_grads(fn, inputs, weight):
    """fn on fresh leaf copies of ``inputs``: (output, gradients of sum(output * weight)), the
    product taken in float64 so that every dtype is compared on the same loss."""
    leaves = [x.detach().clone().requires_grad_() for x in inputs]
    out = fn(*leaves)
    return out.detach(), torch.autograd.grad((out.double() * weight).sum(), leaves)


# What reads a tensor's value back to the host: on CUDA each is a synchronisation, which a CUDA
# graph cannot hold and which stalls the launch queue. aten ops seen by a dispatch mode (item(),
# bool() / int() of a tensor in a Python branch, torch.equal), and the Tensor methods that leave
# the device (on CPU tensors .cpu() dispatches nothing, so it is patched).
HOST_READS = ("_local_scalar_dense", "item", "is_nonzero", "equal", "allclose")
HOST_METHODS = ("item", "tolist", "cpu", "numpy")


class HostReadError(AssertionError):
    """A tensor's value was read back to the host where none may be."""


class _HostReads(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.overloadpacket.__name__ in HOST_READS:
            raise HostReadError(f"host read: aten.{func.overloadpacket.__name__}")
        if func.overloadpacket.__name__ in ("_to_copy", "to") and str(kwargs.get("device", "")) == "cpu":
            raise HostReadError(f"copy to the host: aten.{func.overloadpacket.__name__}")
        return func(*args, **kwargs)


def _refuse(name):
    def method(*args, **kwargs):
        raise HostReadError(f"host read: Tensor.{name}()")
    return method


@contextlib.contextmanager
def no_host_reads():
    """Raise HostReadError on any read of a tensor's value by the host inside the block."""
    with contextlib.ExitStack() as stack:
        for name in HOST_METHODS:
            stack.enter_context(mock.patch.object(torch.Tensor, name, _refuse(name)))
        stack.enter_context(_HostReads())
        yield


def kernel_problem(op: str, dtype=torch.float32, N: int = 100):
    """(the op, its inputs with gradients): causal_abc on random logits, causal_gsa on their logsigmoid."""
    from abc_fairseq.ops import causal_abc
    from abc_fairseq.ops.gsa import causal_gsa

    q, k, v, l = (x.to(dtype) for x in random_inputs(1, 2, N, 16, 8, seed=16))
    control = l if op == "causal_abc" else torch.nn.functional.logsigmoid(l.float()).to(dtype)
    return (causal_abc if op == "causal_abc" else causal_gsa), [x.requires_grad_() for x in (q, k, v, control)]
