"""Shared by the abc_transformer tests: tiny translation models built through fairseq's parser,
left-padded source batches, teacher-forced scores and beam search (the fixtures ``mt``,
``mt_all_abc``, ``mt_untied`` and ``mt_window`` in conftest.py build their models here)."""

import torch
from fairseq.sequence_generator import SequenceGenerator
from fairseq_helpers import build as build_model
from fairseq_helpers import parse as parse_args

# abc_transformer_tiny shrunk further: the point is the plumbing, not the model.
DIMS = ["--encoder-embed-dim", "32", "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64",
        "--decoder-ffn-embed-dim", "64", "--encoder-attention-heads", "4", "--decoder-attention-heads", "4",
        "--dropout", "0"]
TINY = [*DIMS, "--decoder-cross-memory", "5", "--decoder-self-memory", "3"]
ENCODER_ABC = ["--encoder-attn", "abc", "--encoder-memory", "4"]
ALL_SOFTMAX = ["--encoder-attn", "softmax", "--decoder-self-attn", "softmax", "--decoder-cross-attn", "softmax"]


def parse(data_dir, *flags):
    return parse_args([data_dir, "--task", "translation", "-s", "src", "-t", "tgt", *flags])


def build(data_dir, *flags, seed=1, arch="abc_transformer_tiny"):
    task, model = build_model([data_dir, "--task", "translation", "-s", "src", "-t", "tgt", "--arch", arch, *flags],
                              seed)
    return task, model.eval()


def sources(task, lengths, seed=0):
    """Left-padded source batch [B, max(lengths)] (each sentence ends with eos, as fairseq's data
    does), its lengths, and the unpadded sentences."""
    d = task.source_dictionary
    g = torch.Generator().manual_seed(seed)
    sentences = []
    for n in lengths:
        s = torch.randint(d.nspecial, len(d), (n,), generator=g)
        s[-1] = d.eos()
        sentences.append(s)
    batch = torch.full((len(lengths), max(lengths)), d.pad(), dtype=torch.long)
    for i, s in enumerate(sentences):
        batch[i, batch.shape[1] - len(s):] = s
    return batch, torch.tensor(lengths), sentences


def targets(task, batch, length, seed=1):
    """prev_output_tokens [B, length] as the translation task builds them: eos, then tokens."""
    d = task.target_dictionary
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(d.nspecial, len(d), (batch, length), generator=g)
    tokens[:, 0] = d.eos()
    return tokens


def log_probs(model, src, src_lengths, prev):
    return model.get_normalized_probs(model(src, src_lengths, prev), log_probs=True)


def teacher_forced_scores(model, task, src, hypo_tokens):
    """Log-prob of every token of a hypothesis (ending with eos) under a full forward pass."""
    eos = task.target_dictionary.eos()
    prev = torch.cat([torch.tensor([eos]), hypo_tokens[:-1]])[None]
    lp = log_probs(model, src[None], torch.tensor([len(src)]), prev)[0]
    return lp[torch.arange(len(hypo_tokens)), hypo_tokens]


def make_eos_likely(model, task, logit=2.5):
    """Give eos a large output logit so hypotheses end at different steps (finished sentences
    leave the batch, which reorders and shrinks the incremental state)."""
    proj = model.decoder.output_projection
    with torch.no_grad():
        proj.weight[task.target_dictionary.eos()] *= logit


def generate(model, task, src, src_lengths, beam, max_len_b=9):
    generator = SequenceGenerator([model], task.target_dictionary, beam_size=beam,
                                  max_len_a=0, max_len_b=max_len_b, min_len=1)
    sample = {"net_input": {"src_tokens": src, "src_lengths": src_lengths}}
    with torch.no_grad():
        return generator.generate([model], sample)
