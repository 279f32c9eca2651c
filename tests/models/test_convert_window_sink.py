"""window-sink as a conversion target with no training (python -m abc_fairseq.convert): a softmax
language model converted to it keeps every tensor and adds none, scores exactly as its source with
the source's attention restricted to the first S and the last n - S tokens (an explicit mask on
fairseq's own decoder), as its source itself when n covers the context, and the uptraining
recipes rebuild it with its --sink-tokens."""

import torch
from test_convert import LM, TOKENS, assert_kept, convert, loaded, save, scores, source_model

from abc_fairseq.convert.train_flags import model_flags


def restricted(model, sinks: int, window: int):
    """``model`` (fairseq's softmax transformer_lm) with causal self attention over the first
    ``sinks`` tokens and the last ``window`` only, through the additive mask fairseq's decoder uses."""

    def mask(x):
        t, i = torch.arange(x.size(0))[:, None], torch.arange(x.size(0))[None, :]
        allowed = (i <= t) & ((i < sinks) | (t - i < window))
        return torch.zeros(allowed.shape, dtype=x.dtype).masked_fill(~allowed, float("-inf"))

    model.decoder.buffered_future_mask = mask
    return model


def test_converted_model_is_its_source_restricted_to_sinks_and_window(lm_dir, tmp_path, capsys):
    _, cfg, model = source_model(lm_dir, LM)
    source = save(tmp_path / "lm.pt", model, cfg=cfg)
    plain = scores(model, TOKENS)
    state = convert(source, tmp_path / "ws.pt", "--decoder-self-attn", "window-sink", "--decoder-self-memory", 5,
                    "--sink-tokens", 2)
    assert_kept(model.state_dict(), state["model"], [])
    assert "added 0 new control tensors" in capsys.readouterr().out
    expected = scores(restricted(model, 2, 3), TOKENS)
    assert not torch.allclose(expected, plain, rtol=0, atol=1e-3)  # the restriction changes the source
    torch.testing.assert_close(scores(loaded(tmp_path / "ws.pt"), TOKENS), expected, rtol=0, atol=1e-5)
    words = model_flags(state)
    assert words[words.index("--decoder-self-attn") + 1] == "window-sink"
    assert words[words.index("--sink-tokens") + 1] == "2"

    # A memory that covers the 12 tokens (default S = 4, window 8): the source's own attention.
    convert(source, tmp_path / "full.pt", "--decoder-self-attn", "window-sink", "--decoder-self-memory", 12)
    torch.testing.assert_close(scores(loaded(tmp_path / "full.pt"), TOKENS), plain, rtol=0, atol=1e-5)
