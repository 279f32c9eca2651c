"""Shared by the strategy tests: tiny float64 problems (strategies built directly, their inputs,
step-by-step decoding). The test files run on one thread (conftest's ``one_thread``, through
``pytestmark``): intra-op parallelism only adds synchronisation at these sizes."""

import torch

from abc_fairseq.strategies import STRATEGIES, StrategyOptions, get_strategy
from abc_fairseq.strategies.random_slots import hashed_slots

H, D, N_SLOTS, C_IN = 2, 4, 4, 6
OPTIONS = StrategyOptions(linformer_max_positions=24, compressive_ratio=2)


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
    return [name for name, cls in STRATEGIES.items() if mode in cls.modes]


CAUSAL = supporting("causal")
BIDIRECTIONAL = [(name, mode) for mode in ("encoder", "cross") for name in supporting(mode)]


def run_bidirectional(strategy, q, k, v, x, valid):
    if strategy.mode == "encoder":
        return strategy.encode(q, k, v, x, valid)
    return strategy.read(q, strategy.memory(k, v, x, valid))


def gate(strategy, k):
    """Gated linear attention's gate sigmoid(W k + b), from de Brebisson & Vincent."""
    return torch.sigmoid(torch.einsum("bhnd,hed->bhne", k, strategy.gate_weight) + strategy.gate_bias[:, None])


def gsa_log_gates(strategy, x, valid):
    """log a = log(sigmoid(W_alpha x) ** (1 / tau)) per head and slot, 0 (a = 1) at padding."""
    B, N = x.shape[:2]
    logits = strategy.shared(x).view(B, N, H, N_SLOTS).permute(0, 2, 1, 3)
    log_gates = (torch.sigmoid(logits) ** (1.0 / strategy.temperature)).log()
    return log_gates if valid is None else log_gates.masked_fill(~valid[:, None, :, None], 0.0)


def reference_phi(name, strategy, x, valid, k):
    """phi [B, H, N, n] computed position by position from the strategy's definition."""
    B, N = x.shape[:2]
    phi = torch.zeros(B, H, N, N_SLOTS, dtype=torch.float64)
    for b in range(B):
        rank = 0
        for t in range(N):
            if valid is not None and not valid[b, t]:
                continue
            for h in range(H):
                if name == "linformer":
                    phi[b, h, t] = strategy.shared.weight[h, :, rank]
                elif name == "random":
                    slot = hashed_slots(torch.tensor([[rank]]), H, N_SLOTS, strategy.slot_seed)[0, h, 0]
                    phi[b, h, t, slot] = 1.0
                elif name == "global" and rank < N_SLOTS:
                    phi[b, h, t, rank] = 1.0
                elif name == "cluster":
                    similarity = strategy.centroids[h].double() @ (k[b, h, t] / k[b, h, t].norm())
                    phi[b, h, t, similarity.argmax()] = 1.0
            rank += 1
    return phi
