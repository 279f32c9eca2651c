"""Shared by the strategy tests: tiny float64 problems (strategies built directly, their inputs,
step-by-step decoding) and the naive reference of every strategy, written from its paper. The
test files run on one thread (conftest's ``one_thread``, through ``pytestmark``): intra-op
parallelism only adds synchronisation at these sizes."""

import torch

from abc_fairseq.ops import reference_causal_abc
from abc_fairseq.ops.gated import reference_causal_gsa
from abc_fairseq.strategies import STRATEGIES, StrategyOptions, get_strategy
from abc_fairseq.strategies import reference as ref
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


SLOTS = ("linformer", "random", "global", "cluster")  # explicit control vectors phi (``_slots``)
ABC_FAMILY = ("abc", "abc-relu", "abc-sigmoid")


def _t2r(strategy, x):
    return torch.relu(torch.einsum("bhnd,hmd->bhnm", x, strategy.feature_weight) + strategy.feature_bias[:, None])


def _rfa(strategy, x):
    x = x / x.norm(dim=-1, keepdim=True)
    inverse_sigma = strategy.log_inverse_sigma.exp()[:, None, None]
    angles = torch.einsum("bhnd,hmd->bhnm", x, strategy.omega.double()) * inverse_sigma
    return torch.cat([angles.sin(), angles.cos()], dim=-1) / (strategy.memory_size / 2) ** 0.5


# Feature maps written from each paper: (f(q), f(k), values written).
KERNEL_FEATURES = {
    "elu": lambda s, q, k, v: (torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1, v),
    "rfa": lambda s, q, k, v: (_rfa(s, q), _rfa(s, k), v),
    "t2r": lambda s, q, k, v: (_t2r(s, q), _t2r(s, k), v),
    "linear": lambda s, q, k, v: (q * s.scale, k, v),
    "gated-linear": lambda s, q, k, v: (q * s.scale, gate(s, k) * k, gate(s, k) * v),
}


def naive_reference(name, strategy, q, k, v, x, valid, keep=None, p=0.0):
    """The naive form of strategy ``name`` in the strategy's mode (the ABC family and the kernel
    attentions: causal, without dropout), its read probabilities times ``keep`` / (1 - p) when a
    dropout keep mask is given."""
    mode, scale = strategy.mode, strategy.scale
    if name in ABC_FAMILY:
        assert valid is None and keep is None and mode == "causal"
        B, N = x.shape[:2]
        logits = strategy.shared(x).view(B, N, H, N_SLOTS).permute(0, 2, 1, 3)
        return reference_causal_abc(q, k, v, strategy.log_alpha(logits), scale=scale)
    if name in KERNEL_FEATURES:
        assert keep is None and mode == "causal"
        fq, fk, values = KERNEL_FEATURES[name](strategy, q, k, v)
        if valid is not None:
            fk, values = fk * valid[:, None, :, None], values * valid[:, None, :, None]
        return ref.reference_kernel_causal(fq, fk, values, strategy.normalized, strategy.denominator)
    if name in SLOTS:
        phi = reference_phi(name, strategy, x, valid, k)
        flags = dict(normalize=name == "cluster", mask_empty=name != "linformer", keep=keep, p=p)
        if mode == "causal":
            return ref.reference_slot_causal(q, k, v, phi, scale, **flags)
        return ref.reference_slot_bidirectional(q, k, v, phi, scale, **flags)
    if name == "window":
        form = {"causal": ref.reference_window_causal, "encoder": ref.reference_local_window,
                "cross": ref.reference_window_cross}[mode]
        return form(q, k, v, valid, N_SLOTS, scale, keep, p)
    if name == "compressive" and mode == "causal":
        return ref.reference_compressive_causal(q, k, v, valid, N_SLOTS, OPTIONS.values["compressive_ratio"], scale,
                                                keep, p)
    if name == "gsa":
        return reference_causal_gsa(q, k, v, gsa_log_gates(strategy, x, valid), scale, dropout_p=p, dropout_mask=keep)
    if name == "compressive":
        return ref.reference_compressive_bidirectional(q, k, v, valid, N_SLOTS, scale, keep, p)
    raise KeyError(name)
