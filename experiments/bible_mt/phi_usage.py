"""What ABC_MLP's control phi has learnt: slot usage statistics of translation checkpoints.

    python -m experiments.bible_mt.phi_usage --data DATA_BIN --output phi.json CKPT_DIR/checkpoint_1_100.pt ...

Runs each checkpoint teacher-forced over the valid split (eval mode), records the control logits
l = W_phi x of every ABC_MLP attention layer and reports, per layer (averaged over sentences and
heads; N = real tokens of the sequence, n = slots):

  logit_std            spread of l over a sequence's tokens (per slot): exp(l) is flat when it is << 1
  slot_entropy         entropy of phi[:, j] over positions / log N: 1 = slot j is the plain mean
                       of the sequence, 0 = slot j copies one token
  tokens_per_slot      exp(entropy of phi[:, j]): how many tokens a slot effectively averages
  slots_per_token      exp(entropy of token i's write shares phi[i, :] / sum_j phi[i, j]): how many
                       slots a token effectively writes to
  distinct_top_slots   slots that are some token's strongest write, / min(N, n)
  memory_rank          effective rank of phi [N, n] (exp of the entropy of its normalised singular
                       values) / min(N, n): how many different mixtures of the tokens the n slots hold

Cross attention: phi over the source (normalised over all its tokens). Causal attention: the
memory after the last target token (phi normalised over the whole target prefix).
"""

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Dict, List

import torch


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", nargs="+", type=Path, help="fairseq checkpoints of abc_transformer models")
    p.add_argument("--data", required=True, type=Path, help="the fairseq data the models were trained on")
    p.add_argument("--split", default="valid", help="split to run (default %(default)s)")
    p.add_argument("--max-sentences", type=int, default=256, help="sentences used (default %(default)s)")
    p.add_argument("--output", type=Path, help="write the statistics as JSON here (default: print only)")
    p.add_argument("--fresh", action="store_true",
                   help="also report a freshly initialised model of the first checkpoint's configuration "
                        "(update 0, seeded like fairseq-train)")
    args = p.parse_args(argv)
    for ckpt in args.checkpoints:
        if not ckpt.is_file():
            p.error(f"checkpoint {ckpt} does not exist")
    if not (args.data / "dict.en.txt").is_file() and not any(args.data.glob("dict.*.txt")):
        p.error(f"--data {args.data} holds no fairseq dictionary")
    return args


def phi_statistics(logits: torch.Tensor, valid: torch.Tensor) -> Dict[str, float]:
    """logits [B, H, N, n], valid [B, N] bool -> the statistics of the module docstring, averaged
    over the B sequences and H heads (sequences with fewer than 2 real tokens are skipped)."""
    sums, count = defaultdict(float), 0
    for b in range(logits.shape[0]):
        real = logits[b][:, valid[b]].double()  # [H, N, n]
        N, n = real.shape[1], real.shape[2]
        if N < 2:
            continue
        phi = torch.softmax(real, dim=1)  # over positions, per slot
        log_n = math.log(N)
        slot_h = -(phi * phi.clamp_min(1e-300).log()).sum(1)  # [H, n]
        shares = phi / phi.sum(2, keepdim=True)
        token_h = -(shares * shares.clamp_min(1e-300).log()).sum(2)  # [H, N]
        top = phi.argmax(2)  # [H, N]
        distinct = torch.tensor([len(set(row.tolist())) for row in top], dtype=torch.float64)
        sv = torch.linalg.svdvals(phi)  # [H, min(N, n)]
        p = sv / sv.sum(1, keepdim=True)
        rank = torch.exp(-(p * p.clamp_min(1e-300).log()).sum(1))
        k = min(N, n)
        values = {"logit_std": real.std(dim=1).mean(), "slot_entropy": (slot_h / log_n).mean(),
                  "tokens_per_slot": slot_h.exp().mean(), "slots_per_token": token_h.exp().mean(),
                  "distinct_top_slots": (distinct / k).mean(), "memory_rank": (rank / k).mean(),
                  "tokens": torch.tensor(float(N))}
        for key, value in values.items():
            sums[key] += float(value)
        count += 1
    return {key: value / max(count, 1) for key, value in sums.items()} | {"sequences": count}


class Recorder:
    """Wraps the control_logits of every ABC_MLP strategy of a model and keeps its outputs."""

    def __init__(self, model):
        from abc_fairseq.modules.abc_attention import ABCMultiheadAttention

        self.logits: Dict[str, List[torch.Tensor]] = defaultdict(list)
        for name, module in model.named_modules():
            if isinstance(module, ABCMultiheadAttention) and hasattr(module.strategy, "control_logits"):
                self._wrap(name, module.strategy)

    def _wrap(self, name: str, strategy) -> None:
        original = strategy.control_logits

        def recording(x, valid, pad_value):
            out = original(x, valid, pad_value)
            self.logits[name].append(out.detach().float().cpu())
            return out

        strategy.control_logits = recording


def checkpoint_statistics(path: Path, data: Path, split: str, max_sentences: int,
                          fresh: bool = False) -> Dict[str, dict]:
    from fairseq import checkpoint_utils

    import abc_fairseq.models  # noqa: F401  (registers the models)

    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [str(path)], arg_overrides={"data": str(data)})
    model = models[0].eval()
    if fresh:
        torch.manual_seed(cfg.common.seed)
        model = task.build_model(cfg.model).eval()
    task.load_dataset(split)
    dataset = task.dataset(split)
    itr = task.get_batch_iterator(dataset, max_tokens=4096, max_positions=None,
                                  ignore_invalid_inputs=True, required_batch_size_multiple=1
                                  ).next_epoch_itr(shuffle=False)
    recorder = Recorder(model)
    pad = task.source_dictionary.pad()
    per_layer: Dict[str, List[Dict[str, float]]] = defaultdict(list)
    seen = 0
    with torch.no_grad():
        for sample in itr:
            recorder.logits.clear()
            net = sample["net_input"]
            model(**net)
            src_valid = net["src_tokens"].ne(pad)
            tgt_valid = net["prev_output_tokens"].ne(pad)
            for name, chunks in recorder.logits.items():
                valid = src_valid if "encoder_attn" in name or name.startswith("encoder") else tgt_valid
                for logits in chunks:
                    per_layer[name].append(phi_statistics(logits, valid))
            seen += net["src_tokens"].shape[0]
            if seen >= max_sentences:
                break
    out = {}
    for name, stats in per_layer.items():
        total = sum(s["sequences"] for s in stats)
        out[name] = {key: sum(s[key] * s["sequences"] for s in stats) / max(total, 1)
                     for key in stats[0] if key != "sequences"}
        out[name]["sequences"] = total
    return {"updates": 0 if fresh else _updates(path), "layers": out}


def _updates(path: Path):
    state = torch.load(path, map_location="cpu", weights_only=False)
    return (state.get("optimizer_history") or [{}])[-1].get("num_updates")


def main(argv=None):
    args = parse_args(argv)
    results = {}
    if args.fresh:
        results["initialisation"] = checkpoint_statistics(args.checkpoints[0], args.data, args.split,
                                                          args.max_sentences, fresh=True)
    for ckpt in args.checkpoints:
        # keyed by run folder and file name: no machine paths in summaries that get committed
        results[f"{ckpt.resolve().parent.name}/{ckpt.name}"] = checkpoint_statistics(
            ckpt, args.data, args.split, args.max_sentences)
    for ckpt, result in results.items():
        print(f"{ckpt} (updates {result['updates']})")
        for name, s in result["layers"].items():
            print("  %-34s " % name + " ".join(f"{k}={v:.3g}" for k, v in s.items()))
    if args.output:
        args.output.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
