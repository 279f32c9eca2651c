"""Worker side of the ``decode`` suite: fairseq's ``transformer`` (``softmax``) or ``abc_transformer``
with the method's strategy (``abc``, ``rfa``, ``t2r``; ``params["sizes"][method]`` = [cross, causal]
slots or features) in decoder self and cross attention and a softmax encoder, same dims for all;
greedy decoding through fairseq's incremental decoder API (as ``SequenceGenerator`` calls it,
without beam bookkeeping) and the bytes of the attention state it leaves."""

import argparse
import statistics
import time
from typing import Dict, List, Tuple

from ._worker import Case
from .cli import DTYPES
from .synthetic import synthetic_dictionary

STATE_PARTS = ("self", "cross", "other")


def build_model(params: dict, dictionary):
    """fairseq's ``transformer`` (method softmax) or ``abc_transformer`` with the method's strategy
    in decoder self and cross attention, with the benchmark's dims, dropout 0, in eval mode,
    prepared for generation as fairseq-generate does."""
    from types import SimpleNamespace

    from fairseq.models.transformer import TransformerModel, base_architecture

    from abc_fairseq.models.abc_transformer import ABCTransformerModel, abc_transformer

    positions = params["length"] + 8
    args = argparse.Namespace(
        encoder_layers=params["encoder_layers"], decoder_layers=params["decoder_layers"],
        encoder_embed_dim=params["embed_dim"], decoder_embed_dim=params["embed_dim"],
        encoder_attention_heads=params["heads"], decoder_attention_heads=params["heads"],
        encoder_ffn_embed_dim=params["ffn_dim"], decoder_ffn_embed_dim=params["ffn_dim"],
        dropout=0.0, max_source_positions=positions, max_target_positions=positions,
    )
    task = SimpleNamespace(source_dictionary=dictionary, target_dictionary=dictionary)
    method = params["method"]
    if method != "softmax":
        cross, causal = params["sizes"][method]
        args.decoder_cross_attn, args.decoder_cross_memory = method, cross
        args.decoder_self_attn, args.decoder_self_memory = method, causal
        args.encoder_attn = "softmax"
        abc_transformer(args)
        model = ABCTransformerModel.build_model(args, task)
    else:
        base_architecture(args)
        model = TransformerModel.build_model(args, task)
    model.eval()
    model.make_generation_fast_(need_attn=False)
    return model


def state_bytes(incremental_state: dict, decoder) -> Dict[str, int]:
    """Bytes of the tensors in fairseq's ``incremental_state`` (each storage counted once), by
    owner: ``self`` (decoder self attention), ``cross`` (encoder-decoder attention), ``other``."""
    import torch

    owner = {}
    for layer in decoder.layers:
        owner[layer.self_attn._incremental_state_id] = "self"
        if getattr(layer, "encoder_attn", None) is not None:
            owner[layer.encoder_attn._incremental_state_id] = "cross"
    totals = dict.fromkeys(STATE_PARTS, 0)
    seen = set()
    for key, buffer in incremental_state.items():
        part = owner.get(key.rsplit(".", 1)[0], "other")
        for tensor in (buffer or {}).values():
            if not isinstance(tensor, torch.Tensor):
                continue
            storage = tensor.untyped_storage()
            ident = (storage.data_ptr(), storage.nbytes())
            if ident not in seen:
                seen.add(ident)
                totals[part] += storage.nbytes()
    totals["total"] = sum(totals[part] for part in STATE_PARTS)
    return totals


def _new_tokens(encoder_out: dict, steps: int, bos: int):
    """[B, steps + 1] token buffer, all ``bos``, on the encoder output's device."""
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
    """Decode exactly ``steps`` tokens per sentence, argmax each step, never stopping at eos;
    padding is never chosen (as in fairseq's SequenceGenerator).

    encoder_out: the encoder's output dict (``encoder_out[0]``: [S, B, C]).
    Returns (tokens [B, steps + 1] starting with ``bos``, the incremental state at the end).
    """
    tokens = _new_tokens(encoder_out, steps, bos)
    incremental_state: dict = {}
    for t in range(steps):
        greedy_step(model, encoder_out, tokens, t, incremental_state, pad)
    return tokens, incremental_state


def window_starts(length: int, steps: int, windows: int) -> List[int]:
    """First positions of ``windows`` windows of ``steps`` steps, centred on equal segments of
    0..length (the midpoint rule), inside 1..length - steps (step 0 is timed on its own)."""
    starts = []
    for j in range(windows):
        centre = (j + 0.5) * length / windows
        starts.append(int(min(max(1, round(centre - steps / 2)), length - steps)))
    return starts


def continue_cache(decoder, incremental_state: dict, length: int) -> None:
    """Make every softmax (fairseq MultiheadAttention) self-attention cache hold ``length`` past
    tokens, as after ``length`` decoding steps, by repeating the one it holds: the cost of a step
    depends on the cache's size, not its values. Constant-size (ABC) states are left as they are."""
    from fairseq.modules import MultiheadAttention

    for layer in decoder.layers:
        attention = layer.self_attn
        if type(attention) is not MultiheadAttention:
            continue
        buffer = attention._get_input_buffer(incremental_state)
        for name in ("prev_key", "prev_value"):
            buffer[name] = buffer[name][:, :, -1:].repeat(1, 1, length, 1)
        if buffer.get("prev_key_padding_mask") is not None:  # [B, T]: no padding in the prefix
            buffer["prev_key_padding_mask"] = buffer["prev_key_padding_mask"][:, -1:].repeat(1, length)
        attention._set_input_buffer(incremental_state, buffer)


def sampled_decode(model, encoder_out: dict, length: int, steps: int, windows: int, bos: int, pad: int,
                   synchronize=lambda: None) -> Tuple[float, int, dict]:
    """Estimate the time of a greedy decode of ``length`` steps from ``windows`` windows of
    ``steps`` steps (see ``window_starts``). Each window starts from a fresh incremental state:
    one real step (timed once, it also builds the cross-attention cache), then a cache grown to
    the window's start (``continue_cache``) and ``steps`` timed greedy steps.

    Returns (estimated seconds: first step + (length - 1) x mean step, steps timed, the
    incremental state after a final step at position ``length - 1``, i.e. holding ``length``
    tokens).
    """
    tokens = _new_tokens(encoder_out, length, bos)

    def step(t: int, state: dict) -> None:
        greedy_step(model, encoder_out, tokens, t, state, pad)

    first_s, timed_s, timed_steps = [], 0.0, 0
    for start in window_starts(length, steps, windows) + [length - 1]:
        state: dict = {}
        begin = time.perf_counter()
        step(0, state)
        synchronize()
        first_s.append(time.perf_counter() - begin)
        continue_cache(model.decoder, state, start)
        if start == length - 1:  # the final, untimed step: the state at the end of a decode
            step(start, state)
            break
        begin = time.perf_counter()
        for t in range(start, start + steps):
            step(t, state)
        synchronize()
        timed_s += time.perf_counter() - begin
        timed_steps += steps
    estimate = statistics.median(first_s) + (length - 1) * timed_s / timed_steps
    return estimate, timed_steps, state


def build_case(params: dict, device) -> Case:
    """The worker's entry point: model, sources and encoder output ready; ``run`` decodes.

    ``run`` stores the state sizes of its last decode in ``info["state_bytes"]`` (the worker
    reports ``info`` with the result, after the calls).
    """
    import torch

    dtype = DTYPES[params["dtype"]]
    dictionary = synthetic_dictionary(params["vocab"])
    model = build_model(params, dictionary).to(device=device, dtype=dtype)
    B, N = params["batch"], params["length"]
    src = torch.randint(dictionary.nspecial, len(dictionary), (B, N), device=device)
    src[:, -1] = dictionary.eos()
    src_lengths = torch.full((B,), N, dtype=torch.long, device=device)
    with torch.inference_mode():
        start = time.perf_counter()
        encoder_out = model.encoder(src, src_lengths=src_lengths)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        encode_s = time.perf_counter() - start
    info = {"batch": B, "length": N, "encode_s": encode_s,
            "parameters": sum(p.numel() for p in model.parameters())}

    steps, windows = params.get("sample_steps", 0), params.get("sample_windows", 1)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)

    def run() -> None:
        with torch.inference_mode():
            if steps and N > steps * windows:
                estimate, timed, incremental_state = sampled_decode(
                    model, encoder_out, N, steps, windows, dictionary.eos(), dictionary.pad(), sync)
                info.update(estimated_decode_s=estimate, steps_timed=timed)
                info["tokens_decoded"] = B * N
            else:
                tokens, incremental_state = greedy_decode(model, encoder_out, N, dictionary.eos(), dictionary.pad())
                info["tokens_decoded"] = int(tokens[:, 1:].numel())
            info["state_bytes"] = state_bytes(incremental_state, model.decoder)

    return Case(run, info)


def prime(params: dict, device) -> None:
    """A 4-step decode at the same dims, so thread pools and lazy kernels exist before the
    memory baseline."""
    build_case(dict(params, length=min(params["length"], 4), batch=1), device).run()
