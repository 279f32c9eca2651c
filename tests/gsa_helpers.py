"""Shared by the GSA tests: random problems with gates in chosen regimes, step-by-step decoding of
the op, and a comparison relative to each output row's scale (gates near 1 write ~1e-30)."""

import torch

from abc_fairseq.ops.gsa import causal_gsa_step

TINY_FP32 = torch.finfo(torch.float32).tiny  # the smallest normal float32: a gate as close to 0 as fp32 holds
GATE_REGIMES = ("mixed", "near_one", "near_zero", "alternating")


def log_gates(shape, regime, generator, dtype=torch.float64):
    """log a of ``shape`` in a regime: ``mixed`` (logsigmoid of wide logits), ``near_one`` (1 - a
    from 1e-38 to 1e-6: a rounds to 1 in fp32), ``near_zero`` (a from the smallest normal fp32 up
    to 1e-30), ``alternating`` (each gate near 0 or near 1 at random: the cancellation case)."""
    u = torch.rand(shape, generator=generator, dtype=torch.float64)
    near_one = -(10.0 ** (-38 + 32 * u))  # g = log a in [-1e-6, -1e-38]
    lowest = float(torch.log(torch.tensor(TINY_FP32, dtype=torch.float64)))
    near_zero = lowest + (lowest / 87.0 * 69.0 - lowest) * u  # a in [TINY_FP32, ~1e-30]
    if regime == "mixed":
        g = torch.nn.functional.logsigmoid(4.0 * torch.randn(shape, generator=generator, dtype=torch.float64))
    elif regime == "near_one":
        g = near_one
    elif regime == "near_zero":
        g = near_zero
    elif regime == "alternating":
        g = torch.where(torch.rand(shape, generator=generator) < 0.5, near_one, near_zero)
    else:
        raise KeyError(regime)
    return g.to(dtype)


def problem(B, H, N, d, n, regime="mixed", dv=None, seed=0, dtype=torch.float64):
    """q, k [B, H, N, d]; v [B, H, N, dv]; log gates [B, H, N, n]."""
    gen = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(B, H, N, d, generator=gen, dtype=torch.float64).to(dtype) for _ in range(2))
    v = torch.randn(B, H, N, d if dv is None else dv, generator=gen, dtype=torch.float64).to(dtype)
    return q, k, v, log_gates((B, H, N, n), regime, gen, dtype)


def step_by_step(q, k, v, g, state=None, scale=None):
    """causal_gsa_step over the sequence: outputs [B, H, N, dv] and the final state."""
    outs = []
    for t in range(q.shape[2]):
        row = slice(t, t + 1)
        out, state = causal_gsa_step(q[:, :, row], k[:, :, row], v[:, :, row], g[:, :, row], state, scale=scale)
        outs.append(out)
    return torch.cat(outs, dim=2), state


def assert_rows_close(got, expected, tol):
    """|got - expected| <= tol * (largest |expected| of the row) elementwise, rows over the last dim:
    a relative test that still sees an output of size 1e-30 computed as 0."""
    scale = expected.abs().amax(-1, keepdim=True)
    error = (got - expected).abs()
    assert torch.isfinite(got).all() and (error <= tol * scale).all(), \
        f"max row-relative error {(error / scale.clamp_min(1e-300)).max().item():.3e} > {tol}"
