"""ABCAttention, the plain PyTorch layer (float64): every registered strategy in each of its modes
(parallel = step by step, padding changes nothing, no future leakage, cross read = reference),
importable with fairseq blocked; the fairseq adapter equals it on the same weights; the example runs."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from abc_fairseq.layers import ABCAttention, CrossMemory, DecodingState
from abc_fairseq.ops import reference_abc, reference_causal_abc
from abc_fairseq.strategies import STRATEGIES, ABCAttentionSpec, StrategyOptions

pytestmark = pytest.mark.usefixtures("one_thread")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
E, H, N_SLOTS, KDIM = 16, 2, 4, 12
OPTIONS = StrategyOptions(linformer_max_positions=24, compressive_ratio=2)
CASES = [(name, mode) for name, cls in STRATEGIES.items() for mode in ("causal", "encoder", "cross")
         if mode in cls.modes]


def make_layer(name, mode, seed=0, spec=None):
    """A float64 layer in eval mode; cross attention reads keys of KDIM channels."""
    torch.manual_seed(seed)
    kdim = KDIM if mode == "cross" else E
    spec = spec or ABCAttentionSpec.create(name, N_SLOTS, kdim, H, options=OPTIONS, mode=mode)
    layer = ABCAttention(E, H, spec, mode, kdim=kdim, vdim=kdim, register_shared=True)
    return layer.double().eval()


def rand(*shape, seed=0, scale=1.0):
    return scale * torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def left_padding(B, T, pads):
    mask = torch.zeros(B, T, dtype=torch.bool)
    for b, pad in enumerate(pads):
        mask[b, :pad] = True
    return mask


def by_hand(layer, x, proj):
    """x [B, T, C] projected by its weight and split into heads, [B, H, T, d]."""
    B, T, _ = x.shape
    return F.linear(x, proj.weight, proj.bias).view(B, T, H, E // H).permute(0, 2, 1, 3)


# ------------------------------------------------------------------------- the plain layer
def test_import_needs_no_fairseq():
    blockers = {
        "none_in_sys_modules": "sys.modules['fairseq'] = None",
        "meta_path_finder": (
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'fairseq' or name.startswith('fairseq.'):\n"
            "            raise ImportError('fairseq is blocked', name=name)\n"
            "sys.meta_path.insert(0, Block())"),
    }
    use = (
        "import torch\n"
        "import abc_fairseq.layers as layers\n"
        "from abc_fairseq.strategies import ABCAttentionSpec\n"
        "spec = ABCAttentionSpec.create('abc', 4, 8, 2, mode='causal')\n"
        "out = layers.ABCAttention(8, 2, spec)(torch.randn(2, 5, 8))\n"
        "assert out.shape == (2, 5, 8)\n"
        "loaded = [m for m, v in sys.modules.items() if v is not None and m.split('.')[0] == 'fairseq']\n"
        "assert not loaded, loaded\n"
        "assert 'abc_fairseq.models' not in sys.modules and 'abc_fairseq.modules' not in sys.modules\n"
        "print('ok')\n")
    for blocker, code in blockers.items():
        result = subprocess.run([sys.executable, "-c", "import sys\n" + code + "\n" + use], cwd=ROOT,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and result.stdout.strip() == "ok", (blocker, result.stderr[-2000:])


@pytest.mark.parametrize("name", [name for name, mode in CASES if mode == "causal"])
def test_causal_parallel_equals_step_by_step(name):
    layer = make_layer(name, "causal")
    x = rand(3, 9, E)
    mask = left_padding(3, 9, (0, 3, 1))
    full = layer(x, padding_mask=mask)
    state, outs = None, []
    for t in range(9):
        out, state = layer.step(x[:, t:t + 1], state, padding_mask=mask[:, t:t + 1])
        outs.append(out)
        if t == 2:
            size = state.numel()
    assert isinstance(state, DecodingState) and state.numel() == size  # constant-size state
    torch.testing.assert_close(torch.cat(outs, dim=1), full, rtol=0, atol=1e-10)
    head, state = layer.step(x[:, :4], None, padding_mask=mask[:, :4])  # several tokens per call
    order = torch.tensor([2, 0, 2])
    tail, _ = layer.step(x[order, 4:], state.reorder(order), padding_mask=mask[order, 4:])
    torch.testing.assert_close(head, full[:, :4], rtol=0, atol=1e-10)
    torch.testing.assert_close(tail, full[order, 4:], rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", ["abc", "gsa", "window"])
def test_decoding_state_keeps_its_storage_and_gathers_reorders_in_it(name):
    layer = make_layer(name, "causal")
    x = rand(3, 7, E)
    order = torch.tensor([1, 1, 0])
    full = layer(x[order])
    state, held = None, []
    for t in range(3):
        _, state = layer.step(x[:, t:t + 1], state)
        held.append(dict(state.tensors))
    branch = state.clone()  # an independent copy survives the steps below
    reordered = state.reorder(order)
    assert reordered.tensors is state.tensors and torch.equal(reordered.order, order)  # recorded, nothing copied
    outs, state = [], reordered
    for t in range(3, 7):
        out, state = layer.step(x[order, t:t + 1], state)
        outs.append(out)
        held.append(dict(state.tensors))
    assert len({tuple(t.data_ptr() for t in tensors.values()) for tensors in held}) == 1
    torch.testing.assert_close(torch.cat(outs, dim=1), full[:, 3:], rtol=0, atol=1e-10)
    out, _ = layer.step(x[:, 3:4], branch)
    torch.testing.assert_close(out, layer(x[:, :4])[:, 3:], rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", [name for name, mode in CASES if mode == "causal"])
def test_causal_rows_do_not_see_the_future(name):
    layer = make_layer(name, "causal")
    x = rand(2, 10, E)
    y = x.clone()
    y[:, 6:] = rand(2, 4, E, seed=3, scale=40.0)
    a, b = layer(x), layer(y)
    torch.testing.assert_close(a[:, :6], b[:, :6], rtol=0, atol=1e-12)
    assert not torch.allclose(a[:, 6:], b[:, 6:])


@pytest.mark.parametrize("name, mode", CASES)
def test_padding_changes_nothing(name, mode):
    layer = make_layer(name, mode)
    x = rand(1, 7, E)
    noise = rand(1, 3, E if mode != "cross" else KDIM, seed=5, scale=30.0)
    mask = left_padding(1, 10, (3,))
    if mode == "cross":
        key = rand(1, 7, KDIM, seed=1)
        alone = layer(x, key)
        padded = layer(x, torch.cat([noise, key], dim=1), padding_mask=mask)
        torch.testing.assert_close(padded, alone, rtol=0, atol=1e-10)
        return
    alone = layer(x)
    out = layer(torch.cat([noise, x], dim=1), padding_mask=mask)
    torch.testing.assert_close(out[:, 3:], alone, rtol=0, atol=1e-10)
    out = layer(torch.cat([-noise, x], dim=1), padding_mask=mask)
    torch.testing.assert_close(out[:, 3:], alone, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", [name for name, mode in CASES if mode == "cross"])
def test_cross_read_equals_the_reference(name):
    layer = make_layer(name, "cross")
    x, key = rand(3, 5, E), rand(3, 9, KDIM, seed=1)
    mask = left_padding(3, 9, (0, 4, 2))
    valid = ~mask
    q, k, v = by_hand(layer, x, layer.q_proj), by_hand(layer, key, layer.k_proj), by_hand(layer, key, layer.v_proj)
    heads = layer.strategy.read(q, layer.strategy.memory(k, v, key, valid))
    reference = F.linear(heads.permute(0, 2, 1, 3).reshape(3, 5, E), layer.out_proj.weight, layer.out_proj.bias)
    out = layer(x, key, padding_mask=mask)
    torch.testing.assert_close(out, reference, rtol=0, atol=1e-12)
    memory = layer.memory(key, padding_mask=mask)
    decoded, same = layer.step(x[:, :2], memory)
    assert isinstance(memory, CrossMemory) and same is memory
    torch.testing.assert_close(decoded, out[:, :2], rtol=0, atol=1e-12)
    order = torch.tensor([2, 0, 0])
    torch.testing.assert_close(layer.read(x[order], memory.reorder(order)), out[order], rtol=0, atol=1e-12)
    if name == "abc":  # the paper's equations, written out
        logits = layer.phi(key).view(3, 9, H, N_SLOTS).permute(0, 2, 1, 3)
        naive = reference_abc(q, k, v, logits, key_padding_mask=mask, scale=layer.scaling)
        naive = F.linear(naive.permute(0, 2, 1, 3).reshape(3, 5, E), layer.out_proj.weight, layer.out_proj.bias)
        torch.testing.assert_close(out, naive, rtol=0, atol=1e-10)


def test_causal_abc_equals_the_paper():
    layer = make_layer("abc", "causal")
    x = rand(2, 8, E)
    logits = layer.phi(x).view(2, 8, H, N_SLOTS).permute(0, 2, 1, 3)
    q, k, v = (by_hand(layer, x, proj) for proj in (layer.q_proj, layer.k_proj, layer.v_proj))
    naive = reference_causal_abc(q, k, v, logits, scale=layer.scaling)
    naive = F.linear(naive.permute(0, 2, 1, 3).reshape(2, 8, E), layer.out_proj.weight, layer.out_proj.bias)
    torch.testing.assert_close(layer(x), naive, rtol=0, atol=1e-10)


def test_phi_owned_or_shared():
    spec = ABCAttentionSpec.create("abc", N_SLOTS, E, H, mode="causal")
    first = ABCAttention(E, H, spec, register_shared=True)
    second = ABCAttention(E, H, spec)  # shares W_phi, registered once (on the first)
    model = torch.nn.ModuleList([first, second])
    assert first.phi is second.phi is spec.shared
    assert sum(p is spec.shared.weight for p in model.parameters()) == 1
    assert "shared.weight" in first.state_dict() and "shared.weight" not in second.state_dict()
    (first(rand(1, 4, E).float()) + second(rand(1, 4, E).float())).sum().backward()
    assert spec.shared.weight.grad is not None


def test_bad_use_fails_clearly():
    spec = ABCAttentionSpec.create("abc", N_SLOTS, E, H, mode="causal")
    with pytest.raises(ValueError, match="mode must be one of"):
        ABCAttention(E, H, spec, mode="sideways")
    with pytest.raises(ValueError, match="built for key inputs of 16"):
        ABCAttention(E, H, spec, mode="cross", kdim=KDIM, vdim=KDIM)
    with pytest.raises(ValueError, match="no decoding step"):
        make_layer("abc", "encoder").step(rand(1, 1, E))
    with pytest.raises(ValueError, match="CrossMemory"):
        make_layer("abc", "cross").step(rand(1, 1, E), None)
    with pytest.raises(TypeError, match="DecodingState"):
        make_layer("abc", "causal").step(rand(1, 1, E), {})


# ------------------------------------------------------------------------- the fairseq adapter
def adapter_and_layer(name, mode):
    """The fairseq module built as a model builds it, and a plain layer loaded with its weights."""
    from attention_helpers import make_attention

    kdim = KDIM if mode == "cross" else E
    attn, _ = make_attention(mode, name, memory=N_SLOTS, kdim=kdim)
    layer = ABCAttention(E, H, attn.strategy_spec, mode, kdim=kdim, vdim=kdim).double().eval()
    layer.load_state_dict(attn.state_dict(), strict=True)
    return attn, layer


@pytest.mark.parametrize("name, mode", CASES)
def test_adapter_equals_the_plain_layer(name, mode):
    from attention_helpers import future_mask, step_by_step

    attn, layer = adapter_and_layer(name, mode)
    assert type(attn).__mro__[1:].count(ABCAttention) == 1  # one implementation: the adapter is the layer
    mask = left_padding(3, 8, (0, 3, 1))
    x = rand(3, 6 if mode == "cross" else 8, E)
    if mode == "cross":
        key = rand(3, 8, KDIM, seed=1)
        full, _ = attn(x.transpose(0, 1), key.transpose(0, 1), key.transpose(0, 1), key_padding_mask=mask,
                       static_kv=True)
        torch.testing.assert_close(full.transpose(0, 1), layer(x, key, padding_mask=mask), rtol=0, atol=1e-10)
        return
    xt = x.transpose(0, 1)
    full, _ = attn(xt, xt, xt, key_padding_mask=mask, attn_mask=future_mask(8) if mode == "causal" else None)
    torch.testing.assert_close(full.transpose(0, 1), layer(x, padding_mask=mask), rtol=0, atol=1e-10)
    if mode == "causal":
        inc, state = step_by_step(attn, xt, key_padding_mask=mask)
        out, plain = layer.step(x, None, padding_mask=mask)
        torch.testing.assert_close(inc.transpose(0, 1), out, rtol=0, atol=1e-10)
        buffer = attn._get_input_buffer(state)
        assert buffer.keys() == plain.tensors.keys()
        for key in buffer:
            torch.testing.assert_close(buffer[key], plain.tensors[key], rtol=0, atol=1e-10)


# ------------------------------------------------------------------------- the example
def test_example_trains_a_tiny_lm():
    script = os.path.join(ROOT, "examples", "plain_pytorch_lm.py")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    assert "--strategy" in subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True,
                                          env=env, timeout=120, check=True).stdout
    result = subprocess.run([sys.executable, script, "--steps", "60", "--dim", "32", "--layers", "1",
                             "--seq-len", "32", "--batch-size", "8", "--log-every", "20", "--lr", "3e-3"],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    losses = [float(line.split("loss")[1].split()[0]) for line in result.stdout.splitlines()
              if line.startswith("step")]
    assert len(losses) == 3 and losses[-1] < losses[0] - 0.3, result.stdout
    assert "sample:" in result.stdout
