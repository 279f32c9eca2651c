"""Worker side of the ``encode`` suite: a RoBERTa-base encoder with the method's attention.

``abc_roberta`` with ``--encoder-attn`` softmax (fairseq's RoBERTa, parameter for parameter),
``linformer`` or ``abc`` and ``--encoder-memory`` n, dropout 0, eval mode; ``softmax-unfused`` is
the softmax model on fairseq's own bmm / softmax / bmm attention path. One call is
``model(tokens [B, N], features_only=True)`` under ``torch.inference_mode()``: embeddings and every
encoder layer, no LM head.
"""

import argparse

from ._worker import Case
from .cli import DTYPES
from .synthetic import synthetic_dictionary


def build_model(params: dict):
    """``abc_roberta`` with the benchmark's dims and attention kind, dropout 0, eval mode."""
    from types import SimpleNamespace

    from abc_fairseq.models.abc_roberta import ABCRobertaModel, abc_roberta_base

    length, unfused = params["length"], params["kind"] == "softmax-unfused"
    args = argparse.Namespace(
        encoder_layers=params["layers"], encoder_embed_dim=params["embed_dim"],
        encoder_attention_heads=params["heads"], encoder_ffn_embed_dim=params["ffn_dim"],
        dropout=0.0, attention_dropout=0.0, max_positions=length, tokens_per_sample=length,
        encoder_attn="softmax" if unfused else params["kind"], encoder_memory=params["memory"] or 1,
    )
    abc_roberta_base(args)
    task = SimpleNamespace(source_dictionary=synthetic_dictionary(params["vocab"]), max_positions=lambda: length)
    model = ABCRobertaModel.build_model(args, task).eval()
    if unfused:  # fairseq's own attention code instead of F.multi_head_attention_forward
        for layer in model.encoder.sentence_encoder.layers:
            layer.self_attn.skip_embed_dim_check = True
    return model


def build_case(params: dict, device) -> Case:
    """The worker's entry point: model and tokens [B, N] ready; ``run`` encodes them once."""
    import torch

    model = build_model(params).to(device=device, dtype=DTYPES[params["dtype"]])
    vocab = len(model.encoder.dictionary)
    B, N = params["batch"], params["length"]
    tokens = torch.randint(4, vocab, (B, N), device=device)
    tokens[:, 0] = 0  # <s>
    info = {"batch": B, "length": N, "parameters": sum(p.numel() for p in model.parameters())}

    def run() -> None:
        with torch.inference_mode():
            features, _ = model(tokens, features_only=True)
            info["output_shape"] = list(features.shape)

    return Case(run, info)


def prime(params: dict, device) -> None:
    """A short forward at the same dims, so thread pools and lazy kernels exist before the baseline."""
    build_case(dict(params, length=min(params["length"], 16), batch=1, vocab=min(params["vocab"], 64)), device).run()
