"""One step of fairseq's incremental decoder captured in a CUDA graph (``decode --cuda-graph``).

The decoder's step is cut in two. Its input, the embedded last token plus its position, runs
eagerly: fairseq's positions come from the number of tokens decoded, a Python number that a graph
would freeze. The rest, every layer (self attention on the decoding state, cross attention on
the cached encoder memory, the FFN), the final norm and the output projection, is one graph,
replayed each step. A graph replays fixed addresses without a host: this holds for a decoding
state advanced in place (``layers.DecodingState``) and not for softmax's key / value cache, which
grows by concatenation, so softmax always decodes eagerly."""

from typing import Optional

import torch
from torch import Tensor


def embed_last(decoder, tokens: Tensor, incremental_state: dict) -> Tensor:
    """The decoder's input at the last of ``tokens`` [B, t + 1], as ``extract_features`` embeds
    it in incremental decoding: -> [1, B, C]."""
    positions = None
    if decoder.embed_positions is not None:
        positions = decoder.embed_positions(tokens, incremental_state=incremental_state)[:, -1:]
    x = decoder.embed_scale * decoder.embed_tokens(tokens[:, -1:].contiguous())
    if decoder.quant_noise is not None:
        x = decoder.quant_noise(x)
    if decoder.project_in_dim is not None:
        x = decoder.project_in_dim(x)
    if positions is not None:
        x = x + positions
    if decoder.layernorm_embedding is not None:
        x = decoder.layernorm_embedding(x)
    return decoder.dropout_module(x).transpose(0, 1)


def layers_step(decoder, x: Tensor, encoder_out: dict, incremental_state: dict) -> Tensor:
    """x [1, B, C] through every layer (incremental), the final norm and the output projection ->
    logits [B, 1, V]; no padding among the decoded tokens (greedy decoding never emits it)."""
    memory = encoder_out["encoder_out"][0]
    padding = encoder_out["encoder_padding_mask"][0] if len(encoder_out["encoder_padding_mask"]) > 0 else None
    for layer in decoder.layers:
        x, _, _ = layer(x, memory, padding, incremental_state, self_attn_mask=None, self_attn_padding_mask=None,
                        need_attn=False, need_head_weights=False)
    if decoder.layer_norm is not None:
        x = decoder.layer_norm(x)
    x = x.transpose(0, 1)
    if decoder.project_out_dim is not None:
        x = decoder.project_out_dim(x)
    return decoder.output_layer(x)


class GraphStep:
    """``layers_step`` captured once (nothing runs at capture), then replayed: ``step(x)`` copies x
    into the graph's input and returns its logits (the same tensor at every call)."""

    def __init__(self, decoder, encoder_out: dict, incremental_state: dict, x: Tensor):
        self.input = x.clone()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.logits = layers_step(decoder, self.input, encoder_out, incremental_state)

    def __call__(self, x: Tensor) -> Tensor:
        self.input.copy_(x)
        self.graph.replay()
        return self.logits


def graph_decode(model, encoder_out: dict, steps: int, bos: int, pad: int, eager_steps: int = 2,
                 graph: Optional[bool] = True):
    """``decode.greedy_decode`` with steps ``eager_steps`` onwards replayed from one CUDA graph
    (the first steps run eagerly: the cross memory is built and the kernels compiled before the
    capture). Returns (tokens [B, steps + 1], the incremental state). ``graph=False`` runs the
    same split step eagerly (a CPU check that the split equals fairseq's decoder)."""
    memory = encoder_out["encoder_out"][0]
    tokens = torch.full((memory.shape[1], steps + 1), bos, dtype=torch.long, device=memory.device)
    state: dict = {}
    replay = None
    for t in range(steps):
        if t < eager_steps:
            logits, _ = model.decoder(tokens[:, : t + 1], encoder_out=encoder_out, incremental_state=state)
        else:
            x = embed_last(model.decoder, tokens[:, : t + 1], state)
            if not graph:
                logits = layers_step(model.decoder, x, encoder_out, state)
            else:
                if replay is None:
                    replay = GraphStep(model.decoder, encoder_out, state, x)
                logits = replay(x)
        scores = logits[:, -1]
        scores[:, pad] = float("-inf")
        tokens[:, t + 1] = scores.argmax(dim=-1)
    return tokens, state
