"""Worker side of the ``decode`` suite: fairseq's ``transformer`` (``softmax``) or ``abc_transformer``
with the method in decoder self and cross attention (``params["sizes"][method]`` = [cross, causal]
slots or features) and a softmax encoder, greedy decoding through fairseq's incremental decoder
API (as ``SequenceGenerator`` calls it, without beam bookkeeping) and the bytes of its state."""

import argparse
import statistics
import time
from types import SimpleNamespace
from typing import Dict, List, Tuple

from ._worker import Case
from .cli import DTYPES
from .synthetic import synthetic_dictionary

STATE_PARTS = ("self", "cross", "other")


def build_model(params: dict, dictionary):
    """The method's model with the benchmark's dims, dropout 0, eval mode, ready for generation."""
    from fairseq.models.transformer import TransformerModel, base_architecture

    from abc_fairseq.models.abc_transformer import ABCTransformerModel, abc_transformer

    args = argparse.Namespace(dropout=0.0, max_source_positions=params["length"] + 8,
                              max_target_positions=params["length"] + 8)
    for side in ("encoder", "decoder"):
        vars(args).update({f"{side}_layers": params[f"{side}_layers"], f"{side}_embed_dim": params["embed_dim"],
                           f"{side}_attention_heads": params["heads"], f"{side}_ffn_embed_dim": params["ffn_dim"]})
    task = SimpleNamespace(source_dictionary=dictionary, target_dictionary=dictionary)
    method = params["method"]
    if method == "softmax":
        base_architecture(args)
        model = TransformerModel.build_model(args, task)
    else:
        cross, causal = params["sizes"][method]
        args.decoder_cross_attn, args.decoder_cross_memory = method, cross
        args.decoder_self_attn, args.decoder_self_memory = method, causal
        args.encoder_attn = "softmax"
        abc_transformer(args)
        model = ABCTransformerModel.build_model(args, task)
    model.eval()
    model.make_generation_fast_(need_attn=False)
    return model


def state_bytes(incremental_state: dict, decoder) -> Dict[str, int]:
    """Bytes of the tensors in ``incremental_state`` (each storage once) by owner: ``self`` (decoder
    self attention), ``cross`` (encoder-decoder attention) or ``other``, and their ``total``."""
    import torch

    owner = {}
    for layer in decoder.layers:
        owner[layer.self_attn._incremental_state_id] = "self"
        if getattr(layer, "encoder_attn", None) is not None:
            owner[layer.encoder_attn._incremental_state_id] = "cross"
    totals, seen = dict.fromkeys(STATE_PARTS, 0), set()
    for key, buffer in incremental_state.items():
        part = owner.get(key.rsplit(".", 1)[0], "other")
        for tensor in (buffer or {}).values():
            if isinstance(tensor, torch.Tensor):
                storage = tensor.untyped_storage()
                if (storage.data_ptr(), storage.nbytes()) not in seen:
                    seen.add((storage.data_ptr(), storage.nbytes()))
                    totals[part] += storage.nbytes()
    totals["total"] = sum(totals[part] for part in STATE_PARTS)
    return totals


def _new_tokens(encoder_out: dict, steps: int, bos: int):
    """[B, steps + 1] tokens, all ``bos``, on the encoder output's device."""
    import torch

    memory = encoder_out["encoder_out"][0]
    return torch.full((memory.shape[1], steps + 1), bos, dtype=torch.long, device=memory.device)


def greedy_step(model, encoder_out: dict, tokens, t: int, incremental_state: dict, pad: int) -> None:
    """Decode position t + 1 from tokens[:, :t + 1] in place (argmax, never padding)."""
    logits, _ = model.decoder(tokens[:, : t + 1], encoder_out=encoder_out, incremental_state=incremental_state)
    scores = logits[:, -1]
    scores[:, pad] = float("-inf")
    tokens[:, t + 1] = scores.argmax(dim=-1)


def greedy_decode(model, encoder_out: dict, steps: int, bos: int, pad: int):
    """Exactly ``steps`` greedy tokens per sentence, never stopping at eos, never padding (as
    SequenceGenerator); returns (tokens [B, steps + 1] from ``bos``, the incremental state)."""
    tokens, incremental_state = _new_tokens(encoder_out, steps, bos), {}
    for t in range(steps):
        greedy_step(model, encoder_out, tokens, t, incremental_state, pad)
    return tokens, incremental_state


def window_starts(length: int, steps: int, windows: int) -> List[int]:
    """First positions of ``windows`` windows of ``steps`` steps centred on equal segments of
    0..length (the midpoint rule), inside 1..length - steps (step 0 is timed on its own)."""
    return [int(min(max(1, round((j + 0.5) * length / windows - steps / 2)), length - steps)) for j in range(windows)]


def continue_cache(decoder, incremental_state: dict, length: int) -> None:
    """Grow every softmax self-attention cache to ``length`` past tokens by repeating the one it
    holds (a step's cost depends on the cache's size, not its values); constant-size states stay."""
    from fairseq.modules import MultiheadAttention

    for layer in decoder.layers:
        attention = layer.self_attn
        if type(attention) is MultiheadAttention:
            buffer = attention._get_input_buffer(incremental_state)
            for name in ("prev_key", "prev_value"):
                buffer[name] = buffer[name][:, :, -1:].repeat(1, 1, length, 1)
            if buffer.get("prev_key_padding_mask") is not None:  # [B, T]: no padding in the prefix
                buffer["prev_key_padding_mask"] = buffer["prev_key_padding_mask"][:, -1:].repeat(1, length)
            attention._set_input_buffer(incremental_state, buffer)


def sampled_decode(model, encoder_out: dict, length: int, steps: int, windows: int, bos: int, pad: int,
                   synchronize=lambda: None) -> Tuple[float, int, dict]:
    """Estimate a greedy decode of ``length`` steps from ``windows`` windows of ``steps`` steps, each
    from a fresh state: one real step (timed: the first step), a cache grown to the window's start
    and the timed steps. Returns (first step + (length - 1) x mean step, steps timed, the state
    after a last step at position ``length - 1``, as a full decode leaves it)."""
    tokens = _new_tokens(encoder_out, length, bos)
    first_s, timed_s, timed_steps = [], 0.0, 0
    for start in window_starts(length, steps, windows) + [length - 1]:
        state: dict = {}
        begin = time.perf_counter()
        greedy_step(model, encoder_out, tokens, 0, state, pad)
        synchronize()
        first_s.append(time.perf_counter() - begin)
        continue_cache(model.decoder, state, start)
        if start == length - 1:  # the last, untimed step: the state at the end of a decode
            greedy_step(model, encoder_out, tokens, start, state, pad)
            break
        begin = time.perf_counter()
        for t in range(start, start + steps):
            greedy_step(model, encoder_out, tokens, t, state, pad)
        synchronize()
        timed_s, timed_steps = timed_s + time.perf_counter() - begin, timed_steps + steps
    return statistics.median(first_s) + (length - 1) * timed_s / timed_steps, timed_steps, state


def build_case(params: dict, device) -> Case:
    """The worker's entry point: model, sources and encoder output ready; ``run`` decodes and
    stores its state's size in ``info["state_bytes"]``."""
    import torch

    dictionary = synthetic_dictionary(params["vocab"])
    model = build_model(params, dictionary).to(device=device, dtype=DTYPES[params["dtype"]])
    B, N = params["batch"], params["length"]
    src = torch.randint(dictionary.nspecial, len(dictionary), (B, N), device=device)
    src[:, -1] = dictionary.eos()
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    with torch.inference_mode():
        start = time.perf_counter()
        encoder_out = model.encoder(src, src_lengths=torch.full((B,), N, dtype=torch.long, device=device))
        sync()
        info = {"batch": B, "length": N, "encode_s": time.perf_counter() - start,
                "parameters": sum(p.numel() for p in model.parameters())}
    steps, windows = params.get("sample_steps", 0), params.get("sample_windows", 1)

    def run() -> None:
        with torch.inference_mode():
            if steps and N > steps * windows:
                estimate, timed, state = sampled_decode(model, encoder_out, N, steps, windows, dictionary.eos(),
                                                        dictionary.pad(), sync)
                info.update(estimated_decode_s=estimate, steps_timed=timed, tokens_decoded=B * N)
            else:
                tokens, state = greedy_decode(model, encoder_out, N, dictionary.eos(), dictionary.pad())
                info["tokens_decoded"] = int(tokens[:, 1:].numel())
            info["state_bytes"] = state_bytes(state, model.decoder)

    return Case(run, info)


def prime(params: dict, device) -> None:
    """A 4-step decode at the same dims: thread pools and lazy kernels exist before the baseline."""
    build_case(dict(params, length=min(params["length"], 4), batch=1), device).run()
