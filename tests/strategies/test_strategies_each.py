"""Single strategies (float64): errors naming flags, kernel feature maps, compressive, cluster,
random and global specifics, and training cost linear in the length for every strategy."""

import pytest
import torch
from strategies_helpers import (
    BIDIRECTIONAL,
    C_IN,
    CAUSAL,
    N_SLOTS,
    D,
    H,
    inputs,
    left_padded,
    make,
    run_bidirectional,
    steps,
)
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from abc_fairseq.strategies import StrategyOptions, get_strategy

pytestmark = pytest.mark.usefixtures("one_thread")


# ------------------------------------------------------------------------------------------- errors
def test_unknown_strategy_names_the_flag():
    with pytest.raises(ValueError, match="--decoder-self-attn must be one of"):
        get_strategy("flash", flag="--decoder-self-attn")


def test_unsupported_mode_names_the_flag(monkeypatch):
    # Every registered strategy has every mode now (window's cross form, issue 15): take one away.
    monkeypatch.setattr(get_strategy("window"), "modes", frozenset({"causal", "encoder"}))
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
        if name == "linear":
            f = h
        else:
            f = torch.sigmoid(torch.einsum("bhnd,hed->bhne", h, strategy.gate_weight) + strategy.gate_bias[:, None]) * h
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
    torch.testing.assert_close(got, strategy.naive(q, k, v, x, valid), rtol=0, atol=1e-10)
    torch.testing.assert_close(steps(strategy, q, k, v, x, valid)[0], got, rtol=0, atol=1e-10)


@pytest.mark.parametrize("length", [2, 4, 11])
def test_compressive_bidirectional_keeps_every_token_in_n_slots(length):
    strategy = make("compressive", "cross")
    q, k, v, x = inputs(2, length, seed=length)
    q = q[:, :, :3]
    valid = left_padded(2, length, (0, 1))
    got = strategy.read(q, strategy.memory(k, v, x, valid))
    torch.testing.assert_close(got, strategy.naive(q, k, v, x, valid), rtol=0, atol=1e-10)


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
