"""Random inputs and a log-space step-by-step oracle for the op tests."""

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


def reference_causal_abc_with_dropout(q, k, v, phi_logits, keep, p, scale=None):
    """Naive causal ABC whose read goes through dropped slot weights, from the equations:
    out_t = V~_t^T (softmax(scale K~_t q_t) * keep_t / (1 - p)); keep: bool [B, H, N, n]."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    outputs = []
    for t in range(q.shape[2]):
        phi = torch.softmax(phi_logits[:, :, :t + 1], dim=2)  # exp(l_i) / sum_{i<=t} exp(l_i)
        K_mem = torch.einsum("bhin,bhid->bhnd", phi, k[:, :, :t + 1])
        V_mem = torch.einsum("bhin,bhid->bhnd", phi, v[:, :, :t + 1])
        attn = torch.softmax(scale * torch.einsum("bhnd,bhd->bhn", K_mem, q[:, :, t]), dim=-1)
        outputs.append(torch.einsum("bhn,bhnd->bhd", attn * keep[:, :, t] / (1 - p), V_mem))
    return torch.stack(outputs, dim=2)
