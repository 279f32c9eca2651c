"""Self attention's q, k, v projections as one product with gradients off (``FusedProjections``):
the same outputs as the three modules, never stale weights, the three separate calls wherever
the stacked layout or the plain-module conditions do not hold."""

import copy
import gc
import io
import weakref

import pytest
import torch
import torch.nn as nn
from attention_helpers import E, H, make_attention
from torch.utils._python_dispatch import TorchDispatchMode

from abc_fairseq.layers import ABCAttention
from abc_fairseq.strategies import ABCAttentionSpec


class ProductCounter(TorchDispatchMode):
    """Counts the products by a weight of the model width run inside it (``products``; the
    operands of [E, E] or [E, 3 E] elements) and those by q, k and v stacked (``stacked``)."""

    def __init__(self):
        super().__init__()
        self.products = self.stacked = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in ("addmm", "mm", "linear", "matmul", "bmm"):
            shapes = {tuple(a.shape[-2:]) for a in args if isinstance(a, torch.Tensor) and a.dim() >= 2}
            wide = {(E, 3 * E), (3 * E, E)} & shapes
            self.products += bool(wide or (E, E) in shapes)
            self.stacked += bool(wide)
        return func(*args, **(kwargs or {}))


def causal_layer(bias: bool = True) -> ABCAttention:
    torch.manual_seed(0)
    spec = ABCAttentionSpec.create("abc", memory_size=4, in_dim=E, num_heads=H)
    return ABCAttention(E, H, spec, mode="causal", bias=bias, register_shared=True, stack_projections=True).eval()


def separate(layer: ABCAttention, x: torch.Tensor):
    """q, k, v by the three modules' own calls (the reference)."""
    return tuple(layer.heads(x, proj) for proj in (layer.q_proj, layer.k_proj, layer.v_proj))


def fused_products(layer: ABCAttention, x: torch.Tensor):
    """(q, k, v from self_heads, the products it ran) with gradients off."""
    with torch.no_grad(), ProductCounter() as counter:
        heads = layer.self_heads(x, x, x)
    return heads, counter.products


def stacked(layer: ABCAttention) -> bool:
    w = [layer.q_proj.weight, layer.k_proj.weight, layer.v_proj.weight]
    size = w[0].numel() * w[0].element_size()
    return w[1].data_ptr() == w[0].data_ptr() + size and w[2].data_ptr() == w[0].data_ptr() + 2 * size


@pytest.mark.parametrize("bias", [True, False])
def test_one_product_equals_the_three_projections(bias):
    layer = causal_layer(bias)
    x = torch.randn(3, 7, E)
    assert stacked(layer)
    heads, products = fused_products(layer, x)
    assert products == 1
    for got, want in zip(heads, separate(layer, x)):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


def test_the_plain_layer_stacks_only_when_asked():
    """Off by default: a checkpoint writer that refuses tensors sharing storage (safetensors)
    takes the plain layer's state dict as it is."""
    torch.manual_seed(0)
    spec = ABCAttentionSpec.create("abc", memory_size=4, in_dim=E, num_heads=H)
    layer = ABCAttention(E, H, spec, mode="causal").eval()
    assert not stacked(layer)
    x = torch.randn(2, 5, E)
    assert fused_products(layer, x)[1] == 3
    assert len({t.untyped_storage().data_ptr() for t in layer.state_dict().values()}) == len(layer.state_dict())


def test_stacking_keeps_every_value_and_the_state_dict():
    torch.manual_seed(0)
    plain = nn.ModuleList([nn.Linear(E, E) for _ in range(3)])
    reference = {k: v.clone() for k, v in plain.state_dict().items()}
    from abc_fairseq.fused_projection import FusedProjections
    FusedProjections().tile_(list(plain))
    assert plain[1].weight.data_ptr() == plain[0].weight.data_ptr() + E * E * 4
    assert all(torch.equal(v, reference[k]) for k, v in plain.state_dict().items())
    # the checkpoint holds the same keys and values, and loads into an unstacked module list
    buffer = io.BytesIO()
    torch.save(plain.state_dict(), buffer)
    loaded = nn.ModuleList([nn.Linear(E, E) for _ in range(3)])
    loaded.load_state_dict(torch.load(io.BytesIO(buffer.getvalue())))
    assert all(torch.equal(v, reference[k]) for k, v in loaded.state_dict().items())


def test_gradients_on_take_the_three_modules_and_train_each():
    layer = causal_layer()
    x = torch.randn(2, 5, E)
    with ProductCounter() as counter:
        q, k, v = layer.self_heads(x, x, x)
    assert counter.products == 3
    (q.sum() + 2 * k.sum() + 3 * v.sum()).backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0
               for p in (layer.q_proj.weight, layer.k_proj.weight, layer.v_proj.weight))


def test_weights_written_in_place_are_read_at_once():
    """fairseq's optimisers write ``p.data`` in place, which no version counter sees."""
    layer = causal_layer()
    x = torch.randn(2, 5, E)
    fused_products(layer, x)
    with torch.no_grad():
        for proj in (layer.q_proj, layer.k_proj, layer.v_proj):
            proj.weight.data.add_(torch.randn_like(proj.weight))
            proj.bias.data.mul_(3.0)
    heads, products = fused_products(layer, x)
    assert products == 1
    for got, want in zip(heads, separate(layer, x)):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("change", ["replace data", "replace parameter", "plain tensor", "deep copy", "forward hook"])
def test_anything_unstacked_takes_the_three_modules(change):
    layer = causal_layer()
    x = torch.randn(2, 5, E)
    fused_products(layer, x)
    called = []
    if change == "replace data":
        layer.k_proj.weight.data = torch.randn(E, E)
    elif change == "replace parameter":
        layer.v_proj.weight = nn.Parameter(torch.randn(E, E))
    elif change == "plain tensor":  # as FSDP's flattening leaves a view where the parameter was
        weight = layer.k_proj.weight.detach().clone()
        del layer.k_proj.weight
        layer.k_proj.weight = weight
    elif change == "deep copy":
        layer = copy.deepcopy(layer)
    else:
        layer.q_proj.register_forward_hook(lambda *args: called.append(1))
    heads, products = fused_products(layer, x)
    assert products == 3 and called == ([1] if change == "forward hook" else [])
    for got, want in zip(heads, separate(layer, x)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_a_patched_forward_or_a_global_hook_takes_the_three_modules(monkeypatch):
    layer = causal_layer()
    x = torch.randn(2, 5, E)
    layer.q_proj.forward = lambda inputs: torch.zeros(*inputs.shape[:-1], E)  # as accelerate's hooks patch
    heads, products = fused_products(layer, x)
    assert products == 2 and heads[0].abs().max() == 0
    del layer.q_proj.forward
    handle = nn.modules.module.register_module_forward_pre_hook(lambda *args: None)
    try:
        assert fused_products(layer, x)[1] == 3
    finally:
        handle.remove()
    assert fused_products(layer, x)[1] == 1
    monkeypatch.setattr(torch.compiler, "is_dynamo_compiling", lambda: True)  # traced by torch.compile
    assert fused_products(layer, x)[1] == 3


def test_a_replaced_module_releases_the_stacked_storage():
    layer = causal_layer()
    x = torch.randn(2, 5, E)
    fused_products(layer, x)
    old = weakref.ref(layer.k_proj)
    layer.k_proj = nn.Linear(E, E)  # as quantisation or a wrapper replaces it
    heads, products = fused_products(layer, x)
    assert products == 3
    gc.collect()
    assert old() is None
    for got, want in zip(heads, separate(layer, x)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("tie", ["parameter", "module"])
def test_tied_projections_are_never_stacked(tie):
    layer = causal_layer()
    if tie == "parameter":
        layer.k_proj.weight = layer.q_proj.weight
    else:
        layer.k_proj = layer.q_proj
    layer = layer.double()
    assert (layer.k_proj.weight is layer.q_proj.weight) and not stacked(layer)
    x = torch.randn(2, 5, E, dtype=torch.float64)
    heads, products = fused_products(layer, x)
    assert products == 3
    for got, want in zip(heads, separate(layer, x)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_stacking_under_inference_mode_keeps_trainable_parameters():
    layer = copy.deepcopy(causal_layer())  # a copy is not stacked: the next .to() stacks it
    with torch.inference_mode():
        layer.to("cpu")
    assert stacked(layer) and not layer.q_proj.weight.is_inference()
    x = torch.randn(2, 5, E)
    sum(h.sum() for h in layer.self_heads(x, x, x)).backward()
    assert all(proj.weight.grad is not None for proj in (layer.q_proj, layer.k_proj, layer.v_proj))


def test_the_encoders_self_attention_projects_once():
    """Strategies whose encoder reads q, k and v (not a memory) take the one product too."""
    torch.manual_seed(0)
    spec = ABCAttentionSpec.create("window", memory_size=3, in_dim=E, num_heads=H, mode="encoder")
    layer = ABCAttention(E, H, spec, mode="encoder", stack_projections=True).eval()
    attn, _ = make_attention("encoder", "window", memory=3)
    x = torch.randn(6, 2, E, dtype=torch.float64)
    with torch.no_grad(), ProductCounter() as counter:
        fused = attn(x, x, x)[0]
    assert counter.stacked == 1
    torch.testing.assert_close(fused, attn(x, x, x)[0].detach(), rtol=1e-12, atol=1e-12)
    assert fused_products(layer, torch.randn(2, 5, E))[1] == 1


@pytest.mark.parametrize("convert", ["double", "half"])
def test_a_dtype_conversion_stacks_again(convert):
    layer = getattr(causal_layer(), convert)()
    assert stacked(layer)
    x = torch.randn(2, 5, E).to(layer.q_proj.weight.dtype)
    heads, products = fused_products(layer, x)
    assert products == 1
    for got, want in zip(heads, separate(layer, x)):
        torch.testing.assert_close(got, want, rtol=1e-3 if convert == "half" else 1e-12, atol=1e-3)


def test_fairseq_decoding_projects_once_per_step_and_equals_the_full_pass():
    attn, _ = make_attention("causal")
    x = torch.randn(6, 2, E, dtype=torch.float64)
    full, _ = attn(x, x, x)
    state, outs = {}, []
    with torch.no_grad(), ProductCounter() as counter:
        for t in range(x.shape[0]):
            token = x[t:t + 1]  # one tensor as query, key and value, as fairseq's decoder layer passes it
            outs.append(attn(token, token, token, incremental_state=state)[0])
    # per step: q, k and v in one product, then the output projection
    assert (counter.products, counter.stacked) == (2 * x.shape[0], x.shape[0])
    torch.testing.assert_close(torch.cat(outs), full.detach(), rtol=1e-10, atol=1e-10)


def test_quant_noise_keeps_the_three_modules():
    attn, _ = make_attention("causal")
    noisy = type(attn)(E, H, spec=attn.strategy_spec, self_attention=True, causal=True, q_noise=0.1,
                       qn_block_size=8).double().eval()
    x = torch.randn(4, 2, E, dtype=torch.float64)
    with torch.no_grad(), ProductCounter() as counter:
        noisy(x, x, x)
    assert (counter.products, counter.stacked) == (4, 0)  # q, k, v apart, the output projection
