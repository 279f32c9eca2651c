"""Parameter overhead of every attention strategy on the default ``abc_lm`` (a Markdown table).

Builds ``--arch abc_lm`` (transformer_lm's defaults: 6 layers, dim 512, 8 heads, FFN 2048,
--tokens-per-sample 1024 so N_max = 1024 for linformer) once per ``--decoder-self-attn`` value,
with ``--decoder-self-memory`` slots, over a dictionary of --vocab entries, and counts the
parameters of the control modules (W_phi, the Linformer matrix, T2R's MLP, ...) against the same
model with softmax attention, and the bytes of one layer's decoding state for one sequence.

    python scripts/strategy_overhead.py [--vocab 10000] [--memory 64]
"""

import argparse
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fairseq import options, tasks  # noqa: E402
from fairseq.dataclass.utils import convert_namespace_to_omegaconf  # noqa: E402

import abc_fairseq.models  # noqa: E402,F401 (registers abc_lm)
from abc_fairseq.models import ATTENTION_CHOICES  # noqa: E402
from abc_fairseq.modules import phi_parameter_overhead  # noqa: E402


def build(data_dir: str, attn: str, memory: int):
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, [data_dir, "--task", "language_modeling", "--arch", "abc_lm",
                                                "--decoder-self-attn", attn, "--decoder-self-memory", str(memory)])
    cfg = convert_namespace_to_omegaconf(args)
    return tasks.setup_task(cfg.task).build_model(cfg.model)


def buffers(model) -> int:
    return sum(b.numel() for name, b in model.named_buffers() if "strategy" in name)


def state_bytes(model) -> int:
    """Bytes of one layer's decoding state for one sequence (fp32 model), after three tokens."""
    model.eval()
    state = {}
    tokens = torch.full((1, 3), 4, dtype=torch.long)
    with torch.no_grad():
        for t in range(3):
            model.decoder(tokens[:, : t + 1], incremental_state=state)
    attn = model.decoder.layers[0].self_attn
    buffer = attn._get_input_buffer(state)
    return sum(t.numel() * t.element_size() for t in buffer.values())


def percent(extra: int, total: int) -> str:
    value = 100.0 * extra / total
    return "0" if extra == 0 else (f"{value:.3f}%" if value >= 0.001 else "<0.001%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vocab", type=int, default=10000, help="dictionary size, fairseq's 4 specials included")
    parser.add_argument("--memory", type=int, default=64, help="--decoder-self-memory")
    args = parser.parse_args()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as data_dir:
        with open(os.path.join(data_dir, "dict.txt"), "w") as handle:
            handle.writelines(f"w{i} {args.vocab - i}\n" for i in range(args.vocab - 4))
        softmax_total = sum(p.numel() for p in build(data_dir, "softmax", args.memory).parameters())
        print(f"softmax abc_lm: {softmax_total:,} parameters (vocab {args.vocab}, n = {args.memory})\n")
        print("| flag value | control parameters | overhead | strategy buffers | decoding state / layer |")
        print("|---|---:|---:|---:|---:|")
        for attn in ATTENTION_CHOICES:
            if attn == "softmax":
                continue
            model = build(data_dir, attn, args.memory)
            extra, total, _ = phi_parameter_overhead(model)
            assert total - extra == softmax_total, attn  # the rest of the model is unchanged
            print(f"| `{attn}` | {extra:,} | {percent(extra, softmax_total)} | {buffers(model):,} | "
                  f"{state_bytes(model) / 1024:.1f} KiB |")


if __name__ == "__main__":
    main()
