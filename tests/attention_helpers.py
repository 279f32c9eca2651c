"""Shared by the attention-module tests: an ABCMultiheadAttention built as a model builds it
(options -> spec -> module, float64), fairseq's future mask, and token-by-token decoding."""

from argparse import Namespace

import torch
import torch.nn as nn

from abc_fairseq.models import DECODER_CROSS, DECODER_SELF, ENCODER_SELF, abc_attention_spec
from abc_fairseq.modules import ABCMultiheadAttention

E, H = 16, 2
POSITION = {"causal": DECODER_SELF, "encoder": ENCODER_SELF, "cross": DECODER_CROSS}
MODE_KWARGS = {
    "causal": dict(self_attention=True, causal=True),
    "encoder": dict(self_attention=True),
    "cross": dict(encoder_decoder_attention=True),
}


def make_attention(mode: str, name: str = "abc", memory: int = 5, kdim: int = E, seed: int = 0, **cfg):
    """(attention [float64, eval], owner): ``name`` with ``memory`` slots in ``mode``; ``owner``
    holds the shared module (W_phi) as a model's encoder or decoder would. ``cfg``: more options."""
    torch.manual_seed(seed)
    position = POSITION[mode]
    owner = nn.Module()
    args = Namespace(**{position.attn_key: name, position.memory_key: memory, "max_target_positions": 32,
                        "max_source_positions": 32, **cfg})
    spec = abc_attention_spec(owner, args, position, kdim, H)
    attn = ABCMultiheadAttention(E, H, kdim=kdim, vdim=kdim, spec=spec, **MODE_KWARGS[mode])
    owner.double()
    return attn.double().eval(), owner


def future_mask(T: int) -> torch.Tensor:
    return torch.triu(torch.full((T, T), float("-inf"), dtype=torch.float64), 1)


def step_by_step(attn, x, state=None, key_padding_mask=None):
    """Feed x [T, B, C] one token at a time through the incremental path."""
    state = {} if state is None else state
    outs = []
    for t in range(x.shape[0]):
        kpm = None if key_padding_mask is None else key_padding_mask[:, t:t + 1]
        out, weights = attn(x[t:t + 1], x[t:t + 1], x[t:t + 1], key_padding_mask=kpm, incremental_state=state)
        assert weights is None
        outs.append(out)
    return torch.cat(outs, dim=0), state


def check_cross_attention(attn, kdim: int = E):
    """Cross attention on a left-padded source: decoding step by step with the cached memory equals
    the full pass (the key passed after step 0 no longer matters), padding never reaches the memory
    and beam reordering moves the cache. Returns the incremental state."""
    enc = torch.randn(9, 3, kdim, dtype=torch.float64)
    enc_mask = torch.zeros(3, 9, dtype=torch.bool)
    enc_mask[2, :4] = True  # a left-padded source
    dec = torch.randn(5, 3, E, dtype=torch.float64)
    full, _ = attn(dec, enc, enc, key_padding_mask=enc_mask, static_kv=True)
    state, outs = {}, []
    for t in range(5):
        key = enc if t == 0 else torch.randn_like(enc)  # the cached memory is used after step 0
        outs.append(attn(dec[t:t + 1], key, key, key_padding_mask=enc_mask, incremental_state=state,
                         static_kv=True)[0])
    torch.testing.assert_close(torch.cat(outs), full, rtol=0, atol=1e-12)
    alone, _ = attn(dec[:, 2:], enc[4:, 2:], enc[4:, 2:], static_kv=True)
    torch.testing.assert_close(full[:, 2:], alone, rtol=0, atol=1e-12)
    order = torch.tensor([1, 1, 0])
    attn.reorder_incremental_state(state, order)
    step, _ = attn(dec[:1, order], None, None, incremental_state=state, static_kv=True)
    torch.testing.assert_close(step, full[:1, order], rtol=0, atol=1e-12)
    return state
