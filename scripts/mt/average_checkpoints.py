#!/usr/bin/env python3
"""Average the parameters of several fairseq checkpoints into one (Vaswani et al. 2017's
"average of the last checkpoints", used by the ABC paper with the last 5 epoch checkpoints).

    python scripts/mt/average_checkpoints.py --save-dir CKPT_DIR --last-epochs 5 --output avg.pt
    python scripts/mt/average_checkpoints.py --inputs a.pt b.pt c.pt --output avg.pt

``--last-epochs N`` takes the N epoch checkpoints ``checkpoint<EPOCH>.pt`` with the highest
epochs in SAVE_DIR (fairseq writes one per epoch; ``--keep-last-epochs`` in train.sh keeps
them). Every floating-point tensor of the model is averaged (accumulated in float64, stored in
its original dtype); other entries (integer buffers) must be equal and are copied. The output
keeps the metadata of the newest input (configuration, training state) without its optimizer
state, so fairseq-generate loads it like any checkpoint. Written atomically. Inputs are read with
torch's weights-only loader and the plugin's allowlist, like the fairseq tools: a file holding
other Python objects is refused, and a truncated one is named with the newest intact checkpoint.
"""

import argparse
import collections
import os
import re
import sys

EPOCH_RE = re.compile(r"^checkpoint(\d+)\.pt$")


def epoch_checkpoints(save_dir):
    """[(epoch, path)] of checkpoint<EPOCH>.pt files, sorted by epoch."""
    found = []
    for name in os.listdir(save_dir):
        m = EPOCH_RE.match(name)
        if m:
            found.append((int(m.group(1)), os.path.join(save_dir, name)))
    return sorted(found)


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(path):
    """The checkpoint, read as fairseq's tools read it under the plugin: torch's weights-only
    unpickler with the plugin's allowlist (fairseq's configuration objects), nothing else."""
    sys.path.insert(0, REPO)
    from abc_fairseq.checkpoint_compat import CheckpointLoadError, load_checkpoint_file

    try:
        return load_checkpoint_file(path)
    except CheckpointLoadError as error:
        sys.exit("average_checkpoints: %s" % error)


def average(paths):
    import torch

    sums, first_keys, newest = collections.OrderedDict(), None, None
    for i, path in enumerate(paths):
        state = _load(path)
        if "model" not in state:
            sys.exit("average_checkpoints: %s is not a fairseq checkpoint (no 'model' entry)" % path)
        params = state["model"]
        if first_keys is None:
            first_keys = list(params.keys())
        elif list(params.keys()) != first_keys:
            missing = set(first_keys) ^ set(params.keys())
            sys.exit("average_checkpoints: %s has different parameters than %s: %s"
                     % (path, paths[0], ", ".join(sorted(missing)[:5])))
        for key, value in params.items():
            if torch.is_floating_point(value):
                acc = value.detach().to(torch.float64)
                if key in sums:
                    if sums[key].shape != acc.shape:
                        sys.exit("average_checkpoints: %s: shape of %s differs between inputs" % (path, key))
                    sums[key] += acc
                else:
                    sums[key] = acc
            else:
                if key in sums and not torch.equal(sums[key], value):
                    sys.exit("average_checkpoints: non-float entry %s differs between inputs (%s)" % (key, path))
                sums[key] = value
        newest = state
    averaged = collections.OrderedDict()
    dtypes = {k: v.dtype for k, v in newest["model"].items()}
    for key, value in sums.items():
        averaged[key] = (value / len(paths)).to(dtypes[key]) if torch.is_floating_point(value) else value
    newest["model"] = averaged
    for key in ("last_optimizer_state", "optimizer_history_state"):
        newest.pop(key, None)
    if isinstance(newest.get("extra_state"), dict):
        newest["extra_state"]["averaged_from"] = [os.path.basename(p) for p in paths]
    return newest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--inputs", nargs="+", help="checkpoint files to average")
    src.add_argument("--save-dir", help="directory with checkpoint<EPOCH>.pt files (with --last-epochs)")
    parser.add_argument("--last-epochs", type=int, default=5, help="how many of the last epochs (default 5)")
    parser.add_argument("--output", required=True, help="the averaged checkpoint to write")
    args = parser.parse_args(argv)

    if args.inputs:
        paths = args.inputs
        for p in paths:
            if not os.path.isfile(p):
                parser.error("--inputs: no such file %s" % p)
    else:
        if not os.path.isdir(args.save_dir):
            parser.error("--save-dir %s is not a directory" % args.save_dir)
        if args.last_epochs < 1:
            parser.error("--last-epochs must be >= 1")
        found = epoch_checkpoints(args.save_dir)
        if len(found) < args.last_epochs:
            sys.exit("average_checkpoints: %s holds %d epoch checkpoints (%s), %d needed"
                     % (args.save_dir, len(found), ", ".join(os.path.basename(p) for _, p in found) or "none",
                        args.last_epochs))
        paths = [p for _, p in found[-args.last_epochs:]]
    import torch

    state = average(paths)
    tmp = args.output + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, args.output)
    print("average_checkpoints: averaged %s -> %s" % (", ".join(os.path.basename(p) for p in paths), args.output),
          file=sys.stderr)


if __name__ == "__main__":
    main()
