"""Shared by the strategy tests: tiny float64 problems (strategies built directly, their inputs,
step-by-step decoding) and the registered strategies by mode, read from the registry when a test
module is collected. Each strategy's oracle is its own ``naive`` method, beside it in the package.
The test files run on one thread (conftest's ``one_thread``, through ``pytestmark``): intra-op
parallelism only adds synchronisation at these sizes."""

import torch

from abc_fairseq.strategies import STRATEGIES, StrategyOptions, get_strategy

H, D, N_SLOTS, C_IN = 2, 4, 4, 6
OPTIONS = StrategyOptions(linformer_max_positions=24, compressive_ratio=2, sink_tokens=1)


def make(name, mode="causal", n=N_SLOTS, seed=0, options=OPTIONS, dropout=0.0):
    torch.manual_seed(seed)
    cls = get_strategy(name)
    shared = cls.build_shared(C_IN, H, n, options)
    strategy = cls(H, D, n, mode, shared=shared, options=options, dropout=dropout)
    if shared is not None:
        shared.double()
    return strategy.double().eval()


def inputs(B, N, seed=0, scale=1.5):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (scale * torch.randn(B, H, N, D, generator=g, dtype=torch.float64) for _ in range(3))
    x = scale * torch.randn(B, N, C_IN, generator=g, dtype=torch.float64)
    return q, k, v, x


def left_padded(B=3, N=9, pads=(0, 3, 1)):
    valid = torch.ones(B, N, dtype=torch.bool)
    for b, pad in enumerate(pads):
        valid[b, :pad] = False
    return valid


def steps(strategy, q, k, v, x, valid=None, state=None):
    outs = []
    for t in range(q.shape[2]):
        row = slice(t, t + 1)
        out, state = strategy.step(q[:, :, row], k[:, :, row], v[:, :, row], x[:, row],
                                   None if valid is None else valid[:, row], state)
        outs.append(out)
    return torch.cat(outs, dim=2), state


def supporting(mode):
    """The registered strategies that have ``mode``, in registration order."""
    return [name for name, cls in STRATEGIES.items() if mode in cls.modes]


CAUSAL = supporting("causal")
BIDIRECTIONAL = [(name, mode) for mode in ("encoder", "cross") for name in supporting(mode)]


def run_bidirectional(strategy, q, k, v, x, valid):
    if strategy.mode == "encoder":
        return strategy.encode(q, k, v, x, valid)
    return strategy.read(q, strategy.memory(k, v, x, valid))


def real_rows(out, valid):
    """out [B, H, N, d] with the rows of padding queries set to 0 (what they hold is unspecified)."""
    return out if valid is None else out.masked_fill(~valid[:, None, :, None], 0.0)
