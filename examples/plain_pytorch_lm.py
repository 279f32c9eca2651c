"""Train a tiny character-level causal LM with ABCAttention in plain PyTorch (no fairseq), then
sample from it with the constant-size decoding state.

The model: token embedding + learned positions, pre-norm blocks (ABCAttention causal + FFN), a
tied output projection. One ``ABCAttentionSpec`` serves every block, so W_phi is tied across the
layers as in the paper; the model registers it once. The text is a short paragraph embedded below
(or ``--text FILE``), cut into random windows. Runs in well under a minute on one CPU thread with
the defaults and prints the training loss going down.

    python examples/plain_pytorch_lm.py --steps 300
    python examples/plain_pytorch_lm.py --strategy window --memory 16
"""

import argparse
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run from a checkout

from abc_fairseq.layers import ABCAttention  # noqa: E402
from abc_fairseq.strategies import STRATEGIES, ABCAttentionSpec, StrategyOptions  # noqa: E402

TEXT = (
    "a bounded memory keeps a fixed number of slots. every new token writes a little into each slot, "
    "weighted by how much that slot wants it, and every query reads the slots back with a softmax over "
    "them. the memory never grows, so decoding costs the same at the first token and at the thousandth. "
    "a small model trained on this paragraph learns its letters, then its words, then whole phrases. "
)


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(norm(x)), then x + ffn(norm(x)); x [B, T, C]."""

    def __init__(self, dim: int, heads: int, spec: ABCAttentionSpec, dropout: float):
        super().__init__()
        self.attn_norm = nn.LayerNorm(dim)
        self.attn = ABCAttention(dim, heads, spec, mode="causal", dropout=dropout)
        self.ffn_norm = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, state=None, decoding=False):
        if decoding:
            out, state = self.attn.step(self.attn_norm(x), state)
        else:
            out = self.attn(self.attn_norm(x))
        x = x + out
        return x + self.ffn(self.ffn_norm(x)), state


class TinyLM(nn.Module):
    """tokens [B, T] -> logits [B, T, vocab]."""

    def __init__(self, vocab: int, args: argparse.Namespace):
        super().__init__()
        options = StrategyOptions(linformer_max_positions=args.seq_len)
        spec = ABCAttentionSpec.create(args.strategy, args.memory, args.dim, args.heads, options=options,
                                       mode="causal")
        self.phi = spec.shared  # the module tied across the blocks, registered once here (None for some)
        self.embed = nn.Embedding(vocab, args.dim)
        self.positions = nn.Embedding(args.seq_len, args.dim)
        self.blocks = nn.ModuleList(Block(args.dim, args.heads, spec, args.dropout) for _ in range(args.layers))
        self.norm = nn.LayerNorm(args.dim)
        for table in (self.embed, self.positions):  # unit-scale logits through the tied output projection
            nn.init.normal_(table.weight, std=args.dim ** -0.5)

    def forward(self, tokens, states=None, offset=0):
        """Whole sequences (``states`` None) or, decoding, new tokens after ``states`` (one per block)."""
        positions = torch.arange(offset, offset + tokens.shape[1], device=tokens.device)
        x = self.embed(tokens) + self.positions(positions)
        decoding = states is not None
        new_states = []
        for block, state in zip(self.blocks, states or [None] * len(self.blocks)):
            x, state = block(x, state, decoding)
            new_states.append(state)
        return F.linear(self.norm(x), self.embed.weight), new_states


def parse_args(argv=None) -> argparse.Namespace:
    causal = [name for name, cls in STRATEGIES.items() if "causal" in cls.modes]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--strategy", default="abc", choices=causal, help="memory-control strategy")
    parser.add_argument("--memory", type=int, default=16, help="memory slots n")
    parser.add_argument("--dim", type=int, default=64, help="model width")
    parser.add_argument("--heads", type=int, default=4, help="attention heads")
    parser.add_argument("--layers", type=int, default=2, help="transformer blocks")
    parser.add_argument("--seq-len", type=int, default=64, help="training window in characters")
    parser.add_argument("--batch-size", type=int, default=16, help="windows per step")
    parser.add_argument("--steps", type=int, default=300, help="training steps")
    parser.add_argument("--lr", type=float, default=3e-3, help="AdamW learning rate")
    parser.add_argument("--dropout", type=float, default=0.0, help="attention dropout over the slots")
    parser.add_argument("--log-every", type=int, default=50, help="print the mean loss every N steps")
    parser.add_argument("--sample", type=int, default=80, help="characters to sample after training (0: none)")
    parser.add_argument("--text", help="train on this UTF-8 text file instead of the embedded paragraph")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args(argv)
    for flag in ("memory", "dim", "heads", "layers", "seq_len", "batch_size", "steps", "log_every", "threads"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be a positive integer")
    if args.dim % args.heads:
        parser.error(f"--dim ({args.dim}) must be divisible by --heads ({args.heads})")
    return args


def load_text(args: argparse.Namespace) -> str:
    if args.text is None:
        return TEXT * 4
    if not os.path.isfile(args.text):
        sys.exit(f"--text: no such file: {args.text}")
    with open(args.text, encoding="utf-8") as handle:
        text = handle.read()
    if len(text) <= args.seq_len + 1:
        sys.exit(f"--text: {args.text} is shorter than --seq-len + 2 characters")
    return text


@torch.no_grad()
def sample(model: TinyLM, prompt: torch.Tensor, length: int, max_len: int) -> list:
    """Greedy continuation of ``prompt`` [T] token by token through the decoding states."""
    model.eval()
    logits, states = model(prompt[None, :1], states=[None] * len(model.blocks))
    out = prompt.tolist()
    for t in range(1, min(max_len, len(out) + length)):
        token = prompt[t] if t < len(prompt) else logits[0, -1].argmax()
        if t >= len(prompt):
            out.append(int(token))
        logits, states = model(token.view(1, 1), states, offset=t)
    return out


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    text = load_text(args)
    chars = sorted(set(text))
    data = torch.tensor([chars.index(c) for c in text])
    model = TinyLM(len(chars), args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    print(f"{args.strategy}, {args.memory} slots: {sum(p.numel() for p in model.parameters())} parameters, "
          f"{len(data)} characters, vocabulary {len(chars)}, uniform loss {math.log(len(chars)):.3f}")
    start, total = time.time(), 0.0
    for step in range(1, args.steps + 1):
        model.train()
        offsets = torch.randint(0, len(data) - args.seq_len - 1, (args.batch_size,))
        window = torch.stack([data[o:o + args.seq_len + 1] for o in offsets.tolist()])
        logits, _ = model(window[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), window[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
        if step % args.log_every == 0:
            print(f"step {step:5d} loss {total / args.log_every:.3f} ({time.time() - start:.1f}s)", flush=True)
            total = 0.0
    if args.sample:
        tokens = sample(model, data[:8], args.sample, args.seq_len)
        print("sample:", repr("".join(chars[i] for i in tokens)))


if __name__ == "__main__":
    main()
