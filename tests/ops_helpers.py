"""Random inputs, a log-space step-by-step oracle and outputs with their gradients, for the op and kernel tests."""

import torch

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
