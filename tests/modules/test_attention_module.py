"""ABCMultiheadAttention against itself in its other modes and against the ops (float64)."""

import pytest
import torch
import torch.nn as nn
from attention_helpers import E, H, check_cross_attention, future_mask, make_attention, step_by_step

import abc_fairseq.models  # noqa: F401 (registers the fairseq side)
from abc_fairseq.modules import (
    ABCMultiheadAttention,
    ABCTransformerDecoderLayer,
    is_future_mask,
    phi_parameter_overhead,
)
from abc_fairseq.ops import abc as abc_op
from abc_fairseq.ops import causal_abc
from abc_fairseq.strategies import ABCAttentionSpec, PhiProjection

N_SLOTS = 5


def test_causal_matches_the_op():
    attn, _ = make_attention("causal")
    x = torch.randn(9, 3, E, dtype=torch.float64)
    out, _ = attn(x, x, x)
    heads = lambda proj: proj(x).view(9, 3, H, E // H).permute(1, 2, 0, 3)  # noqa: E731
    logits = attn.phi(x).view(9, 3, H, N_SLOTS).permute(1, 2, 0, 3)
    ref = causal_abc(heads(attn.q_proj), heads(attn.k_proj), heads(attn.v_proj), logits)
    ref = attn.out_proj(ref.permute(2, 0, 1, 3).reshape(9, 3, E))
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)


def test_causal_full_equals_incremental():
    attn, _ = make_attention("causal")
    x = torch.randn(11, 3, E, dtype=torch.float64)
    full, _ = attn(x, x, x, attn_mask=future_mask(11))
    inc, state = step_by_step(attn, x)
    torch.testing.assert_close(inc, full, rtol=0, atol=1e-10)
    # Several new tokens in one incremental call continue from the saved memory.
    head, _ = attn(x[:4], x[:4], x[:4], incremental_state=(state2 := {}))
    tail, _ = attn(x[4:], x[4:], x[4:], incremental_state=state2)
    torch.testing.assert_close(torch.cat([head, tail]), full, rtol=0, atol=1e-10)


def test_causal_future_does_not_leak():
    attn, _ = make_attention("causal")
    x = torch.randn(10, 2, E, dtype=torch.float64)
    y = x.clone()
    y[6:] = torch.randn(4, 2, E, dtype=torch.float64) * 50
    torch.testing.assert_close(attn(x, x, x)[0][:6], attn(y, y, y)[0][:6], rtol=0, atol=1e-12)
    assert not torch.allclose(attn(x, x, x)[0][6:], attn(y, y, y)[0][6:])


def test_reorder_incremental_state_follows_the_batch():
    attn, _ = make_attention("causal")
    x = torch.randn(8, 4, E, dtype=torch.float64)
    order = torch.tensor([2, 0, 3, 1])
    reference, _ = step_by_step(attn, x[:, order])  # the permuted batch from scratch

    _, state = step_by_step(attn, x[:5])
    attn.reorder_incremental_state(state, order)
    rest, _ = step_by_step(attn, x[5:, order], state)
    torch.testing.assert_close(rest, reference[5:], rtol=0, atol=1e-10)

    # Shrinking (finished sentences) and repeating (beam expansion) work the same way.
    _, state = step_by_step(attn, x[:5])
    attn.reorder_incremental_state(state, torch.tensor([3, 3, 1]))
    rest, _ = step_by_step(attn, x[5:, [3, 3, 1]], state)
    reference, _ = step_by_step(attn, x[:, [3, 3, 1]])
    torch.testing.assert_close(rest, reference[5:], rtol=0, atol=1e-10)


@pytest.mark.parametrize("mode", ["causal", "encoder"])
def test_left_padding_is_never_written(mode):
    attn, _ = make_attention(mode)
    T, pad = 7, 3
    x = torch.randn(T, 1, E, dtype=torch.float64)
    alone, _ = attn(x, x, x)

    padded = torch.cat([torch.randn(pad, 1, E, dtype=torch.float64) * 10, x]).repeat(1, 2, 1)
    padded[:, 1] = torch.randn(T + pad, E, dtype=torch.float64)  # another sequence, no padding
    mask = torch.zeros(2, T + pad, dtype=torch.bool)
    mask[0, :pad] = True
    kwargs = dict(attn_mask=future_mask(T + pad)) if mode == "causal" else {}
    out, _ = attn(padded, padded, padded, key_padding_mask=mask, **kwargs)
    torch.testing.assert_close(out[pad:, 0], alone[:, 0], rtol=0, atol=1e-10)
    assert torch.isfinite(out).all()

    # Other pad contents change nothing; without the mask the padding would be written.
    padded2 = padded.clone()
    padded2[:pad, 0] = -padded2[:pad, 0]
    torch.testing.assert_close(attn(padded2, padded2, padded2, key_padding_mask=mask, **kwargs)[0][pad:],
                               out[pad:], rtol=0, atol=1e-10)
    unmasked, _ = attn(padded, padded, padded, **kwargs)
    assert not torch.allclose(unmasked[pad:, 0], alone[:, 0], atol=1e-6)


def test_causal_padding_incremental_and_gradients():
    attn, _ = make_attention("causal")
    x = torch.randn(6, 2, E, dtype=torch.float64, requires_grad=True)
    mask = torch.zeros(2, 6, dtype=torch.bool)
    mask[1, :2] = True
    full, _ = attn(x, x, x, key_padding_mask=mask)
    inc, _ = step_by_step(attn, x.detach(), key_padding_mask=mask)
    torch.testing.assert_close(inc, full.detach(), rtol=0, atol=1e-10)
    full.sum().backward()
    assert torch.isfinite(x.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in attn.parameters())


def test_encoder_matches_the_op():
    attn, _ = make_attention("encoder")
    x = torch.randn(6, 2, E, dtype=torch.float64)
    mask = torch.tensor([[False] * 6, [True, True] + [False] * 4])
    out, _ = attn(x, x, x, key_padding_mask=mask)
    heads = lambda proj: proj(x).view(6, 2, H, E // H).permute(1, 2, 0, 3)  # noqa: E731
    logits = attn.phi(x).view(6, 2, H, N_SLOTS).permute(1, 2, 0, 3)
    ref = abc_op(heads(attn.q_proj), heads(attn.k_proj), heads(attn.v_proj), logits, mask)
    ref = attn.out_proj(ref.permute(2, 0, 1, 3).reshape(6, 2, E))
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)


def test_cross_attention_incremental_equals_full_and_builds_memory_once():
    kdim = 12
    attn, _ = make_attention("cross", kdim=kdim)
    state = check_cross_attention(attn, kdim)
    buffer = attn._get_input_buffer(state)
    assert buffer["key_memory"].shape == (3, H, N_SLOTS, E // H)


def test_future_mask_validation():
    assert is_future_mask(future_mask(5), 5)
    assert is_future_mask(torch.ones(5, 5, dtype=torch.bool).triu(1), 5)
    assert not is_future_mask(future_mask(5), 4)
    assert not is_future_mask(torch.zeros(5, 5), 5)
    attn, _ = make_attention("causal")
    x = torch.randn(5, 1, E, dtype=torch.float64)
    attn(x, x, x, attn_mask=future_mask(5))
    window = future_mask(5)
    window[4, 0] = float("-inf")  # a sliding-window mask: not expressible with ABC
    with pytest.raises(ValueError, match="future mask"):
        attn(x, x, x, attn_mask=window)


def test_unsupported_configurations_fail_clearly():
    phi = PhiProjection(E, H, N_SLOTS)
    spec = ABCAttentionSpec.create("abc", N_SLOTS, E, H, shared=phi)
    with pytest.raises(ValueError, match="cross-self-attention"):
        ABCMultiheadAttention(E, H, spec=spec)  # neither self nor cross
    with pytest.raises(ValueError, match="add_bias_kv"):
        ABCMultiheadAttention(E, H, self_attention=True, add_bias_kv=True, spec=spec)
    with pytest.raises(ValueError, match="phi"):
        ABCAttentionSpec.create("abc", N_SLOTS + 1, E, H, shared=phi)
    with pytest.raises(ValueError, match="phi"):
        ABCMultiheadAttention(E, 2 * H, self_attention=True, spec=spec)
    enc, _ = make_attention("encoder")
    x = torch.randn(4, 1, E, dtype=torch.float64)
    with pytest.raises(ValueError, match="attn_mask"):
        enc(x, x, x, attn_mask=future_mask(4))
    with pytest.raises(NotImplementedError):
        enc(x, x, x, before_softmax=True)


def test_phi_is_shared_by_layers_and_counted_once():
    from fairseq.models.transformer import TransformerConfig

    cfg = TransformerConfig()
    cfg.decoder.embed_dim, cfg.decoder.attention_heads, cfg.decoder.ffn_embed_dim = E, H, 32

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attn_phi = PhiProjection(E, H, N_SLOTS)
            spec = ABCAttentionSpec.create("abc", N_SLOTS, E, H, shared=self.self_attn_phi)
            self.layers = nn.ModuleList(
                [ABCTransformerDecoderLayer(cfg, self_attn=spec, no_encoder_attn=True) for _ in range(3)])

    stack = Stack()
    ptrs = {layer.self_attn.phi.weight.data_ptr() for layer in stack.layers}
    assert ptrs == {stack.self_attn_phi.weight.data_ptr()}
    names = [name for name, _ in stack.named_parameters() if "phi" in name]
    assert names == ["self_attn_phi.weight"]
    assert [k for k in stack.state_dict() if "phi" in k] == ["self_attn_phi.weight"]
    extra, total, fraction = phi_parameter_overhead(stack)
    assert extra == E * H * N_SLOTS
    assert total == sum(p.numel() for p in stack.parameters())
    assert fraction == pytest.approx(extra / (total - extra))
    # One gradient flows into the single tensor from every layer.
    x = torch.randn(4, 2, E)
    for layer in stack.layers:
        x = layer(x)[0]
    x.sum().backward()
    assert stack.self_attn_phi.weight.grad is not None
    # Moving the model moves the shared module the layers point to.
    stack.double()
    assert all(layer.self_attn.phi.weight.dtype == torch.float64 for layer in stack.layers)


def small_transformer_config():
    from fairseq.models.transformer import TransformerConfig

    cfg = TransformerConfig()
    for side in (cfg.encoder, cfg.decoder):
        side.embed_dim, side.attention_heads, side.ffn_embed_dim = E, H, 32
    cfg.dropout = 0.0
    return cfg


def test_encoder_layer_runs_abc_and_keeps_fast_paths_off():
    from abc_fairseq.modules import ABCTransformerEncoderLayer

    torch.manual_seed(0)
    phi = PhiProjection(E, H, N_SLOTS)
    spec = ABCAttentionSpec.create("abc", N_SLOTS, E, H, shared=phi)
    layer = ABCTransformerEncoderLayer(small_transformer_config(), self_attn=spec)
    assert isinstance(layer.self_attn, ABCMultiheadAttention) and not layer.self_attn.causal
    layer.load_to_BT = True  # what fairseq 0.12.2 sets when loading a checkpoint
    layer.can_use_fastpath = True
    assert layer.load_to_BT is False and layer.can_use_fastpath is False
    layer, phi = layer.double().eval(), phi.double()
    x = torch.randn(6, 1, E, dtype=torch.float64)
    padded = torch.cat([torch.randn(2, 1, E, dtype=torch.float64), x])
    mask = torch.tensor([[True, True] + [False] * 6])
    torch.testing.assert_close(layer(padded, mask)[2:], layer(x, None), rtol=0, atol=1e-10)


def test_decoder_layer_with_abc_self_and_cross_attention_decodes_incrementally():
    torch.manual_seed(0)
    cfg = small_transformer_config()
    self_phi, cross_phi = PhiProjection(E, H, N_SLOTS), PhiProjection(E, H, 3)
    layer = ABCTransformerDecoderLayer(cfg, self_attn=ABCAttentionSpec.create("abc", N_SLOTS, E, H, shared=self_phi),
                                       encoder_attn=ABCAttentionSpec.create("abc", 3, E, H, shared=cross_phi))
    assert isinstance(layer.encoder_attn, ABCMultiheadAttention) and layer.encoder_attn.encoder_decoder_attention
    for module in (layer, self_phi, cross_phi):
        module.double().eval()
    enc = torch.randn(7, 2, E, dtype=torch.float64)
    enc_mask = torch.tensor([[False] * 7, [True] * 3 + [False] * 4])
    x = torch.randn(5, 2, E, dtype=torch.float64)
    full = layer(x, enc, enc_mask, self_attn_mask=future_mask(5))[0]
    state, steps = {}, []
    for t in range(5):
        steps.append(layer(x[t:t + 1], enc, enc_mask, incremental_state=state)[0])
    torch.testing.assert_close(torch.cat(steps), full, rtol=0, atol=1e-10)


def test_attention_dropout_reaches_the_strategy_for_training_only():
    attn, _ = make_attention("causal")
    attn = ABCMultiheadAttention(E, H, dropout=0.25, self_attention=True, causal=True,
                                 spec=attn.strategy_spec).double()
    assert attn.strategy.dropout == 0.25
    x = torch.randn(6, 2, E, dtype=torch.float64)
    attn.eval()
    assert attn.strategy.read_dropout() == 0.0
    evaluated = attn(x, x, x)[0]
    attn.train()
    assert attn.strategy.read_dropout() == 0.25
    assert attn.strategy.applies_dropout()
    torch.manual_seed(0)  # the masks are drawn from torch's RNG: a fixed seed, a fixed verdict
    trained = torch.stack([attn(x, x, x)[0].detach() for _ in range(400)])
    assert not torch.allclose(trained[0], evaluated)  # dropout is applied in training...
    # ... and is unbiased: the mean over masks approaches the evaluated output.
    torch.testing.assert_close(trained.mean(0), evaluated.detach(), rtol=0, atol=0.05)
