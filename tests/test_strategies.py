"""Every registered strategy, in float64: parallel form = recurrent form = naive reference,
causality, padding never written, constant decoding state (``abc_fairseq.strategies``)."""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from abc_fairseq.ops import reference_abc, reference_causal_abc
from abc_fairseq.strategies import STRATEGIES, StrategyOptions, get_strategy
from abc_fairseq.strategies import reference as ref
from abc_fairseq.strategies.random_slots import hashed_slots
from strategies_helpers import one_thread  # noqa: F401 (autouse fixture)

H, D, N_SLOTS, C_IN = 2, 4, 4, 6
OPTIONS = StrategyOptions(linformer_max_positions=24, compressive_ratio=2)


def make(name, mode="causal", n=N_SLOTS, seed=0, options=OPTIONS):
    torch.manual_seed(seed)
    cls = get_strategy(name)
    shared = cls.build_shared(C_IN, H, n, options)
    strategy = cls(H, D, n, mode, shared=shared, options=options)
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


# ------------------------------------------------------------------------------------------ causal
@pytest.mark.parametrize("name", CAUSAL)
def test_parallel_equals_recurrent_with_padding(name):
    strategy = make(name)
    q, k, v, x = inputs(3, 9)
    valid = left_padded()
    full = strategy.causal(q, k, v, x, valid)
    inc, _ = steps(strategy, q, k, v, x, valid)
    torch.testing.assert_close(inc, full, rtol=0, atol=1e-10)
    assert torch.isfinite(full).all()
    # Several tokens per incremental call continue the same state.
    head, state = strategy.extend(q[:, :, :4], k[:, :, :4], v[:, :, :4], x[:, :4], valid[:, :4], None)
    tail, _ = strategy.extend(q[:, :, 4:], k[:, :, 4:], v[:, :, 4:], x[:, 4:], valid[:, 4:], state)
    torch.testing.assert_close(torch.cat([head, tail], dim=2), full, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", CAUSAL)
def test_future_does_not_leak(name):
    strategy = make(name)
    q, k, v, x = inputs(2, 10)
    changed = [t.clone() for t in (q, k, v)] + [x.clone()]
    for t in changed[:3]:
        t[:, :, 6:] = 40 * torch.randn_like(t[:, :, 6:])
    changed[3][:, 6:] = 40 * torch.randn_like(x[:, 6:])
    a, b = strategy.causal(q, k, v, x, None), strategy.causal(*changed, None)
    torch.testing.assert_close(a[:, :, :6], b[:, :, :6], rtol=0, atol=1e-12)
    assert not torch.allclose(a[:, :, 6:], b[:, :, 6:])


@pytest.mark.parametrize("name", CAUSAL)
def test_causal_padding_is_never_written(name):
    strategy = make(name)
    T, pad = 7, 3
    q, k, v, x = inputs(1, T)
    alone = strategy.causal(q, k, v, x, None)
    noise = inputs(1, pad, seed=5, scale=30.0)
    padded = [torch.cat([a, b], dim=2) for a, b in zip(noise[:3], (q, k, v))] + [torch.cat([noise[3], x], dim=1)]
    valid = torch.ones(1, T + pad, dtype=torch.bool)
    valid[0, :pad] = False
    out = strategy.causal(*padded, valid)
    torch.testing.assert_close(out[:, :, pad:], alone, rtol=0, atol=1e-10)
    other = [t.clone() for t in padded]
    for t in other[:3]:
        t[:, :, :pad] = -t[:, :, :pad]
    other[3][:, :pad] = -other[3][:, :pad]
    torch.testing.assert_close(strategy.causal(*other, valid)[:, :, pad:], alone, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", CAUSAL)
def test_gradients_are_finite_with_padding(name):
    strategy = make(name)
    q, k, v, x = (t.requires_grad_() for t in inputs(3, 9))
    strategy.causal(q, k, v, x, left_padded()).sum().backward()
    for t in (q, k, v):
        assert t.grad is not None and torch.isfinite(t.grad).all()
    assert x.grad is None or torch.isfinite(x.grad).all()  # x feeds only learned controls
    for p in list(strategy.parameters()) + (list(strategy.shared.parameters()) if strategy.shared else []):
        assert p.grad is not None and torch.isfinite(p.grad).all()


@pytest.mark.parametrize("name", CAUSAL)
def test_decoding_state_has_constant_size(name):
    strategy = make(name)
    q, k, v, x = inputs(2, 12)
    state, sizes = None, set()
    for t in range(12):
        row = slice(t, t + 1)
        _, state = strategy.step(q[:, :, row], k[:, :, row], v[:, :, row], x[:, row], None, state)
        sizes.add(tuple((key, tuple(value.shape)) for key, value in sorted(state.items())))
        assert all(value.shape[0] == 2 for value in state.values())  # batch first: reorderable
    assert len(sizes) == 1


# ------------------------------------------------------------------------ naive references (causal)
def _phi_reference(name, strategy, x, valid, k):
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


def reference_causal(name, strategy, q, k, v, x, valid):
    if name in ("abc", "abc-relu", "abc-sigmoid"):
        assert valid is None
        B, N = x.shape[:2]
        logits = strategy.shared(x).view(B, N, H, N_SLOTS).permute(0, 2, 1, 3)
        return reference_causal_abc(q, k, v, strategy.log_alpha(logits), scale=strategy.scale)
    if name in ("linformer", "random", "global", "cluster"):
        phi = _phi_reference(name, strategy, x, valid, k)
        return ref.reference_slot_causal(q, k, v, phi, strategy.scale, normalize=name == "cluster",
                                         mask_empty=name != "linformer")
    if name == "compressive":
        return ref.reference_compressive_causal(q, k, v, valid, N_SLOTS, OPTIONS.compressive_ratio,
                                                strategy.scale)
    if name == "window":
        return ref.reference_window_causal(q, k, v, valid, N_SLOTS, strategy.scale)
    if name in KERNEL_FEATURES:
        fq, fk, values = KERNEL_FEATURES[name](strategy, q, k, v)
        if valid is not None:
            fk, values = fk * valid[:, None, :, None], values * valid[:, None, :, None]
        return ref.reference_kernel_causal(fq, fk, values, strategy.normalized, strategy.denominator)
    raise KeyError(name)


def _t2r(strategy, x):
    return torch.relu(torch.einsum("bhnd,hmd->bhnm", x, strategy.feature_weight) + strategy.feature_bias[:, None])


def _rfa(strategy, x):
    x = x / x.norm(dim=-1, keepdim=True)
    angles = torch.einsum("bhnd,hmd->bhnm", x, strategy.omega.double()) * strategy.log_inverse_sigma.exp()[:, None, None]
    return torch.cat([angles.sin(), angles.cos()], dim=-1) / (strategy.memory_size / 2) ** 0.5


def _gate(strategy, k):
    return torch.sigmoid(torch.einsum("bhnd,hed->bhne", k, strategy.gate_weight) + strategy.gate_bias[:, None])


# Feature maps written from each paper: (f(q), f(k), values written).
KERNEL_FEATURES = {
    "elu": lambda s, q, k, v: (torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1, v),
    "rfa": lambda s, q, k, v: (_rfa(s, q), _rfa(s, k), v),
    "t2r": lambda s, q, k, v: (_t2r(s, q), _t2r(s, k), v),
    "linear": lambda s, q, k, v: (q * s.scale, k, v),
    "gated-linear": lambda s, q, k, v: (q * s.scale, _gate(s, k) * k, _gate(s, k) * v),
}


@pytest.mark.parametrize("name", CAUSAL)
def test_parallel_equals_naive_reference(name):
    strategy = make(name)
    q, k, v, x = inputs(2, 11, seed=3)
    valid = None if name.startswith("abc") else left_padded(2, 11, (0, 2))
    if name in ("abc", "abc-relu", "abc-sigmoid"):
        strategy.shared.weight.data *= 3  # logits far from 0: the activations' shapes matter
    expected = reference_causal(name, strategy, q, k, v, x, valid)
    got = strategy.causal(q, k, v, x, valid)
    if valid is not None:
        got = got.masked_fill(~valid[:, None, :, None], 0.0)
        expected = expected.masked_fill(~valid[:, None, :, None], 0.0)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-10)


# ------------------------------------------------------------------------------------ bidirectional
def run_bidirectional(strategy, q, k, v, x, valid):
    if strategy.mode == "encoder":
        return strategy.encode(q, k, v, x, valid)
    return strategy.read(q, strategy.memory(k, v, x, valid))


@pytest.mark.parametrize("name, mode", BIDIRECTIONAL)
def test_bidirectional_padding_is_never_written(name, mode):
    strategy = make(name, mode)
    T, pad = 7, 2
    q, k, v, x = inputs(1, T)
    if mode == "cross":
        q = inputs(1, 4, seed=9)[0]
    alone = run_bidirectional(strategy, q, k, v, x, None)
    noise = inputs(1, pad, seed=5, scale=30.0)
    k2, v2 = (torch.cat([a, b], dim=2) for a, b in zip(noise[1:3], (k, v)))
    x2 = torch.cat([noise[3], x], dim=1)
    q2 = q if mode == "cross" else torch.cat([noise[0], q], dim=2)
    valid = torch.ones(1, T + pad, dtype=torch.bool)
    valid[0, :pad] = False
    out = run_bidirectional(strategy, q2, k2, v2, x2, valid)
    rows = slice(None) if mode == "cross" else slice(pad, None)
    torch.testing.assert_close(out[:, :, rows], alone, rtol=0, atol=1e-10)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("name, mode", BIDIRECTIONAL)
def test_bidirectional_sees_the_whole_sequence(name, mode):
    strategy = make(name, mode)
    q, k, v, x = inputs(2, 10)
    changed = [t.clone() for t in (k, v)]
    later = {"window": 1, "global": N_SLOTS - 1}.get(name, -1)  # a local window, the global prefix
    for t in changed:
        t[:, :, later] += 5.0
    a = run_bidirectional(strategy, q, k, v, x, None)
    b = run_bidirectional(strategy, q, *changed, x, None)
    assert torch.isfinite(a).all()
    assert not torch.allclose(a[:, :, 0], b[:, :, 0])  # the first row reads a later token


@pytest.mark.parametrize("name", ["abc", "abc-relu", "abc-sigmoid"])
def test_abc_family_bidirectional_matches_the_paper(name):
    strategy = make(name, "cross")
    q, k, v, x = inputs(2, 8)
    q = q[:, :, :5]
    B, N = x.shape[:2]
    logits = strategy.log_alpha(strategy.shared(x).view(B, N, H, N_SLOTS).permute(0, 2, 1, 3))
    torch.testing.assert_close(strategy.read(q, strategy.memory(k, v, x, None)),
                               reference_abc(q, k, v, logits, scale=strategy.scale), rtol=0, atol=1e-10)


def test_encoder_window_matches_the_reference():
    for n in (1, 2, 3, 4):
        strategy = make("window", "encoder", n=n)
        q, k, v, x = inputs(2, 9, seed=n)
        valid = left_padded(2, 9, (0, 3))
        got = strategy.encode(q, k, v, x, valid).masked_fill(~valid[:, None, :, None], 0.0)
        torch.testing.assert_close(got, ref.reference_local_window(q, k, v, valid, n, strategy.scale),
                                   rtol=0, atol=1e-10)


@pytest.mark.parametrize("n", [1, 2, 5, 16])
def test_window_sizes_against_the_reference(n):
    strategy = make("window", n=n)
    q, k, v, x = inputs(2, 13, seed=n)
    valid = left_padded(2, 13, (0, 4))
    got = strategy.causal(q, k, v, x, valid)
    torch.testing.assert_close(got, ref.reference_window_causal(q, k, v, valid, n, strategy.scale),
                               rtol=0, atol=1e-10)
    torch.testing.assert_close(steps(strategy, q, k, v, x, valid)[0], got, rtol=0, atol=1e-10)


# ------------------------------------------------------------------------------------------- errors
def test_unknown_strategy_names_the_flag():
    with pytest.raises(ValueError, match="--decoder-self-attn must be one of"):
        get_strategy("flash", flag="--decoder-self-attn")


def test_unsupported_mode_names_the_flag():
    options = StrategyOptions(flags={"attn": "--decoder-cross-attn"})
    with pytest.raises(ValueError, match="--decoder-cross-attn window is not available for cross"):
        get_strategy("window")(H, D, 3, "cross", options=options)


def test_linformer_too_long_names_the_flag():
    options = StrategyOptions(linformer_max_positions=5, flags={"linformer_max_positions": "--linformer-max-positions"})
    strategy = make("linformer", options=options)
    q, k, v, x = inputs(1, 6)
    with pytest.raises(ValueError, match="--linformer-max-positions"):
        strategy.causal(q, k, v, x, None)
    valid = torch.ones(1, 6, dtype=torch.bool)
    valid[0, 0] = False  # 5 real tokens fit
    assert torch.isfinite(strategy.causal(q, k, v, x, valid)).all()
    _, state = steps(strategy, q[:, :, :5], k[:, :, :5], v[:, :, :5], x[:, :5])
    with pytest.raises(ValueError, match="--linformer-max-positions"):
        strategy.step(q[:, :, :1], k[:, :, :1], v[:, :, :1], x[:, :1], None, state)
    with pytest.raises(ValueError, match="--linformer-max-positions"):
        get_strategy("linformer").build_shared(C_IN, H, 3, StrategyOptions(
            flags={"linformer_max_positions": "--linformer-max-positions"}))


# ---------------------------------------------------------------------------------- kernels
def test_rfa_features_approximate_the_gaussian_kernel():
    strategy = make("rfa", n=8192)
    x, y = torch.nn.functional.normalize(torch.randn(2, 1, H, 1, D, dtype=torch.float64), dim=-1)
    fx, fy = strategy.query_features(x), strategy.query_features(y)
    sigma_inv = strategy.log_inverse_sigma.exp()[None, :, None]
    expected = torch.exp(-(sigma_inv ** 2) * (x - y).pow(2).sum(-1) / 2)
    torch.testing.assert_close((fx * fy).sum(-1), expected, rtol=0, atol=0.05)


def test_rfa_needs_an_even_feature_size():
    options = StrategyOptions(flags={"memory_size": "--decoder-self-memory"})
    with pytest.raises(ValueError, match="--decoder-self-memory must be even"):
        get_strategy("rfa")(H, D, 5, "causal", options=options)


def test_linear_attention_is_de_brebisson_and_vincent():
    """With keys = values = h: linear R = (sum h h^T) q; gated: C = sum f f^T, f = sigmoid(W h + b) h."""
    q, h, _, x = inputs(1, 6)
    for name in ("linear", "gated-linear"):
        strategy = make(name, "cross")
        f = h if name == "linear" else _gate(strategy, h) * h
        C = torch.einsum("bhid,bhie->bhde", f, f)
        expected = torch.einsum("bhde,bhme->bhmd", C, q * strategy.scale)
        torch.testing.assert_close(strategy.read(q, strategy.memory(h, h, x, None)), expected, rtol=0, atol=1e-10)


# ------------------------------------------------------------- compressive, cluster, random, global
@pytest.mark.parametrize("n, ratio", [(1, 1), (1, 3), (2, 2), (3, 2), (4, 3), (6, 1)])
def test_compressive_against_the_reference(n, ratio):
    strategy = make("compressive", n=n, options=StrategyOptions(compressive_ratio=ratio))
    q, k, v, x = inputs(2, 14, seed=n + ratio)
    valid = left_padded(2, 14, (0, 3))
    got = strategy.causal(q, k, v, x, valid)
    torch.testing.assert_close(got, ref.reference_compressive_causal(q, k, v, valid, n, ratio, strategy.scale),
                               rtol=0, atol=1e-10)
    torch.testing.assert_close(steps(strategy, q, k, v, x, valid)[0], got, rtol=0, atol=1e-10)


@pytest.mark.parametrize("length", [2, 4, 11])
def test_compressive_bidirectional_keeps_every_token_in_n_slots(length):
    strategy = make("compressive", "cross")
    q, k, v, x = inputs(2, length, seed=length)
    q = q[:, :, :3]
    valid = left_padded(2, length, (0, 1))
    got = strategy.read(q, strategy.memory(k, v, x, valid))
    expected = ref.reference_compressive_bidirectional(q, k, v, valid, N_SLOTS, strategy.scale)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-10)


def test_cluster_centroids_follow_the_keys_in_training_only():
    strategy = make("cluster")
    q, k, v, x = inputs(2, 9)
    before = strategy.centroids.clone()
    strategy.causal(q, k, v, x, None)
    assert torch.equal(strategy.centroids, before)  # eval: frozen
    strategy.train()
    strategy.causal(q, k, v, x, left_padded(2, 9, (0, 2)))
    moved = strategy.centroids
    assert not torch.equal(moved, before)
    torch.testing.assert_close(moved.norm(dim=-1), torch.ones(H, N_SLOTS, dtype=moved.dtype))
    # Each centroid moved towards its members: cosine with the members' mean did not decrease.
    assign = strategy.assign(k)
    for h in range(H):
        for j in range(N_SLOTS):
            members = k[:, h][assign[:, h] == j]
            if len(members):
                target = torch.nn.functional.normalize(members, dim=-1).mean(0)
                assert moved[h, j].double() @ target >= before[h, j].double() @ target - 1e-12


def test_random_slots_fresh_in_training_fixed_in_eval():
    strategy = make("random", n=64)
    ranks = torch.arange(4096)[None]
    slots = strategy.slots(ranks)
    assert torch.equal(slots, strategy.slots(ranks))  # eval: a hash of the position
    counts = torch.bincount(slots.flatten(), minlength=64)
    assert counts.min() > 0.6 * counts.float().mean() and counts.max() < 1.4 * counts.float().mean()
    other_layer = make("random", n=64, seed=1)
    assert not torch.equal(other_layer.slots(ranks), slots)  # the seed is per layer
    strategy.train()
    assert not torch.equal(strategy.slots(ranks), strategy.slots(ranks))  # training: fresh draws
    q, k, v, x = inputs(2, 9)
    a, b = strategy.causal(q, k, v, x, None), strategy.causal(q, k, v, x, None)
    assert not torch.allclose(a, b)
    state = {k: t.clone() for k, t in strategy.state_dict().items()}
    reloaded = make("random", n=64, seed=7)
    reloaded.load_state_dict(state)
    assert torch.equal(reloaded.eval().slots(ranks), slots)  # the seed travels in the checkpoint


def test_global_tokens_read_only_the_first_n():
    strategy = make("global", "encoder")
    q, k, v, x = inputs(1, 8)
    changed = [t.clone() for t in (k, v)]
    for t in changed:
        t[:, :, N_SLOTS:] = torch.randn_like(t[:, :, N_SLOTS:])
    torch.testing.assert_close(strategy.encode(q, k, v, x, None), strategy.encode(q, *changed, x, None),
                               rtol=0, atol=1e-12)
    probs = torch.softmax(strategy.scale * q @ k[:, :, :N_SLOTS].transpose(-1, -2), dim=-1)
    torch.testing.assert_close(strategy.encode(q, k, v, x, None), probs @ v[:, :, :N_SLOTS], rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------- linear complexity
class _Allocations(TorchDispatchMode):
    """Records the largest tensor and the total number of elements every op produces."""

    def __init__(self):
        super().__init__()
        self.largest = self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, t.numel())
                self.total += t.numel()
        return out


def _training_step_allocations(name, mode, N):
    strategy = make(name, mode, n=8, options=StrategyOptions(linformer_max_positions=4096, compressive_ratio=4))
    q, k, v, x = (t.requires_grad_() for t in inputs(1, N, scale=1.0))
    with _Allocations() as record:
        out = strategy.causal(q, k, v, x, None) if mode == "causal" else run_bidirectional(strategy, q, k, v, x, None)
        out.sum().backward()
    return record.largest, record.total


@pytest.mark.parametrize("name, mode", [(name, "causal") for name in CAUSAL] + BIDIRECTIONAL)
def test_training_cost_is_linear_in_length(name, mode):
    """Doubling N at most doubles the largest tensor and the elements produced (no N x N term)."""
    small, large = (_training_step_allocations(name, mode, N) for N in (512, 1024))
    assert large[0] <= 2.2 * small[0], f"largest tensor {small[0]} -> {large[0]}"
    assert large[1] <= 2.2 * small[1], f"elements produced {small[1]} -> {large[1]}"
