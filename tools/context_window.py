"""Where a language model's ``fairseq-eval-lm --context-window`` perplexity comes from: scores
every token of a split the way fairseq-eval-lm does (``--sample-break-mode none``), once without
context and once per context size, then compares them token by token, and separates the two
things a context changes at once: how many tokens the scored token sees, and the position it
sits at.

    python -m tools.context_window --path CHECKPOINT --data DATA_BIN [--subset test]
        [--tokens-per-sample 256] [--contexts 32 64 128 192] [--block 64]

Three tables, Markdown, on stdout:

1. ``context``: perplexity per context size C (blocks of T - C new tokens, each preceded by the
   C tokens before it in the corpus, as fairseq's ``LMContextWindowDataset``), the change in mean
   loss against C = 0 on the same tokens, and a 95% bootstrap interval of that change (resampling
   blocks of T corpus tokens, 2,000 draws, seed 0).
2. ``by position``: for the largest C, that change split by the position the token has
   without context (with C = T / 2 only the first half of each T-token block changes: the
   second half is scored in the same window as without context).
3. ``grid``: blocks of ``--block`` corpus tokens all scored at the same tokens, each with
   ``c`` tokens of context and its positions moved up by ``o`` (``o`` added to every position the
   model's positional embedding sees, so the scored block sits at positions c + o ... c + o +
   block - 1 while it sees only c tokens before it). Along a row the context is fixed and the
   position moves; down a column-diagonal (c + o fixed) the position is fixed and the context
   grows.

Scores are natural-log losses (nats); the perplexities equal fairseq-eval-lm's (which reports
base 2) to the printed digits. Runs on CPU; the quickstart's small models take about a minute a
checkpoint on 2 cores.
"""

import argparse
import contextlib
import math
import sys
from typing import Dict, Iterator, List, Sequence, Tuple

import torch


def load(path: str, data: str, subset: str):
    """(model in eval mode, target stream, source stream): the split as one token stream, each line
    ending in eos, and the model's input for it (the stream shifted right by one, eos first), as
    fairseq's TokenBlockDataset gives them with ``--sample-break-mode none``."""
    from fairseq import checkpoint_utils
    from fairseq.data import data_utils

    import abc_fairseq.models  # noqa: F401  registers the plugin's models and its checkpoint loading

    models, _cfg, task = checkpoint_utils.load_model_ensemble_and_task([path], arg_overrides={"data": data})
    model = models[0].eval()
    lines = data_utils.load_indexed_dataset(f"{data}/{subset}", task.dictionary)
    if lines is None:
        raise SystemExit(f"no split '{subset}' in {data}")
    stream = torch.cat([lines[i] for i in range(len(lines))]).long()
    source = torch.cat([stream.new_tensor([task.dictionary.eos()]), stream[:-1]])
    return model, stream, source


@contextlib.contextmanager
def shifted_positions(offset: int) -> Iterator[None]:
    """Within the block, every non-pad position fairseq's positional embeddings compute is ``offset``
    higher (fairseq's sinusoidal and learned embeddings both call ``fairseq.utils.make_positions``)."""
    from fairseq import utils

    original = utils.make_positions
    if offset:
        def make_positions(tensor, padding_idx, onnx_trace=False):
            positions = original(tensor, padding_idx, onnx_trace)
            return positions + offset * tensor.ne(padding_idx).long()
        utils.make_positions = make_positions
    try:
        yield
    finally:
        utils.make_positions = original


@torch.no_grad()
def losses(model, windows: Sequence[Tuple[torch.Tensor, torch.Tensor]], batch: int = 32) -> List[torch.Tensor]:
    """Per-token loss (nats) of each (input, target) window; windows of equal length share a batch."""
    out: List[torch.Tensor] = [torch.empty(0)] * len(windows)
    by_len: Dict[int, List[int]] = {}
    for i, (inp, _) in enumerate(windows):
        by_len.setdefault(len(inp), []).append(i)
    for idx in by_len.values():
        for k in range(0, len(idx), batch):
            part = idx[k:k + batch]
            inp = torch.stack([windows[i][0] for i in part])
            tgt = torch.stack([windows[i][1] for i in part])
            lprobs = model.get_normalized_probs(model(inp), log_probs=True)
            nll = -lprobs.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
            for j, i in enumerate(part):
                out[i] = nll[j]
    return out


def sliding(model, stream, source, tps: int, context: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """fairseq-eval-lm's scoring with ``--tokens-per-sample tps --context-window context``: per-token
    loss and the position (0-based, within the model's input) each token was scored at."""
    n, step = len(stream), tps - context
    starts = list(range(0, n, step))
    windows = [(source[max(0, s - context):min(s + step, n)], stream[max(0, s - context):min(s + step, n)])
               for s in starts]
    nll, pos = torch.empty(n), torch.empty(n, dtype=torch.long)
    for s, scores in zip(starts, losses(model, windows)):
        e, b = min(s + step, n), max(0, s - context)
        nll[s:e], pos[s:e] = scores[s - b:], torch.arange(s - b, e - b)
    return nll, pos


def bootstrap(diff: torch.Tensor, block: int, draws: int = 2000, seed: int = 0) -> Tuple[float, float]:
    """95% interval of ``diff.mean()`` resampling consecutive blocks of ``block`` tokens."""
    sums = torch.stack([chunk.sum() for chunk in diff.split(block)])
    g = torch.Generator().manual_seed(seed)
    means = torch.stack([sums[torch.randint(len(sums), (len(sums),), generator=g)].sum() / len(diff)
                         for _ in range(draws)])
    lo, hi = means.quantile(torch.tensor([0.025, 0.975])).tolist()
    return lo, hi


def grid(model, stream, source, tps: int, block: int, step: int) -> Dict[Tuple[int, int], float]:
    """Mean loss of the same corpus blocks scored with context ``c`` and positions moved up by ``o``,
    for c, o multiples of ``step`` with c + o + block <= tps."""
    top = tps - block
    starts = range(top, len(stream) - block + 1, block)
    cells = {}
    for c in range(0, top + 1, step):
        windows = [(source[s - c:s + block], stream[s - c:s + block]) for s in starts]
        for o in range(0, top - c + 1, step):
            with shifted_positions(o):
                scores = losses(model, windows)
            cells[c, o] = torch.stack([x[c:] for x in scores]).mean().item()
    return cells


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.context_window", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[2:]))
    p.add_argument("--path", required=True, help="checkpoint (fairseq-eval-lm --path)")
    p.add_argument("--data", required=True, help="binarised data directory the model was trained on")
    p.add_argument("--subset", default="test", help="split to score (default test)")
    p.add_argument("--tokens-per-sample", type=int, default=256, help="window length T (default 256)")
    p.add_argument("--contexts", type=int, nargs="+", default=[32, 64, 128, 192],
                   help="context sizes C, each below T (default 32 64 128 192)")
    p.add_argument("--block", type=int, default=64, help="block length of the grid (default 64; 0: no grid)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    args = p.parse_args(argv)
    tps = args.tokens_per_sample
    for c in args.contexts:
        if not 0 < c < tps:
            p.error(f"--contexts: each size must be between 1 and {tps - 1}, got {c}")
    if args.block and not 0 < args.block <= tps:
        p.error(f"--block must be between 1 and {tps}, got {args.block}")
    if args.threads:
        torch.set_num_threads(args.threads)

    model, stream, source = load(args.path, args.data, args.subset)
    nll0, pos0 = sliding(model, stream, source, tps, 0)
    print(f"{args.subset}: {len(stream):,} tokens, T = {tps}\n")
    print("| context C | perplexity | mean loss change vs C = 0 (nats) | 95% interval |\n|---:|---:|---:|---|")
    print(f"| 0 | {math.exp(nll0.mean()):.2f} | | |")
    last = None
    for c in args.contexts:
        nll, _ = sliding(model, stream, source, tps, c)
        diff = nll - nll0
        lo, hi = bootstrap(diff, tps)
        print(f"| {c} | {math.exp(nll.mean()):.2f} | {diff.mean():+.4f} | [{lo:+.4f}, {hi:+.4f}] |")
        last = (c, nll)
    if last is not None:
        c, nll = last
        print(f"\nThe change at C = {c}, by the position each token has without context:\n")
        print("| position at C = 0 | tokens | loss, C = 0 | loss, C = %d | change |\n|---|---:|---:|---:|---:|" % c)
        edges = sorted({e for e in (0, 1, 4, 16, 64, 128) if e < tps} | {tps})
        for a, b in zip(edges, edges[1:]):
            sel = (pos0 >= a) & (pos0 < b)
            if sel.any():
                print(f"| {a}-{b - 1} | {int(sel.sum()):,} | {nll0[sel].mean():.4f} | {nll[sel].mean():.4f} "
                      f"| {(nll[sel] - nll0[sel]).mean():+.4f} |")
    if args.block:
        cells = grid(model, stream, source, tps, args.block, args.block)
        cs = sorted({c for c, _ in cells})
        n = len(range(tps - args.block, len(stream) - args.block + 1, args.block)) * args.block
        print(f"\nGrid: mean loss (nats) of the same {n:,} tokens (blocks of {args.block}); rows: context c, "
              f"columns: positions moved up by o; the scored block starts at position c + o.\n")
        print("| c \\ o | " + " | ".join(str(o) for o in cs) + " |\n|---|" + "---:|" * len(cs))
        for c in cs:
            print(f"| {c} | " + " | ".join(f"{cells[c, o]:.4f}" if (c, o) in cells else "" for o in cs) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
