"""fairseq-train, in this process, with every W_phi (``PhiProjection``) initialised GAIN times its
usual scale: an experiment of compare_bible (``abc_32_8_phigain4``), NOT the paper's model (the
paper gives no initialisation; the plugin uses Xavier uniform).

    python -m experiments.bible_mt.phi_init_train --phi-init-gain 4 DATA --user-dir abc_fairseq --arch ...
    bash scripts/mt/train.sh ... --train-module experiments.bible_mt.phi_init_train -- --phi-init-gain 4

``--phi-init-gain G`` may stand anywhere among the arguments; every other argument goes to
fairseq-train's own parser unchanged, so the run is otherwise identical to fairseq-train's.
"""

import argparse
import sys
from typing import List, Tuple

GAIN_FLAG = "--phi-init-gain"


def split_gain(argv: List[str]) -> Tuple[float, List[str]]:
    """argv -> (the gain, the fairseq-train arguments without ``--phi-init-gain G``)."""
    parser = argparse.ArgumentParser(prog="phi_init_train", allow_abbrev=False, add_help=False)
    parser.add_argument(GAIN_FLAG, type=float, required=True)
    try:
        known, rest = parser.parse_known_args(argv)
    except SystemExit:
        sys.exit(f"phi_init_train: ERROR: {GAIN_FLAG} G (a positive number) is required")
    if not known.phi_init_gain > 0:
        sys.exit(f"phi_init_train: ERROR: {GAIN_FLAG} must be positive, got {known.phi_init_gain}")
    return known.phi_init_gain, rest


def patch_phi_init(gain: float):
    """Scale the initial W_phi of every PhiProjection built from now on by ``gain``; returns the
    original ``__init__`` (to undo the patch)."""
    import torch

    from abc_fairseq.strategies.phi import PhiProjection

    original = PhiProjection.__init__

    def scaled_init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        with torch.no_grad():
            self.weight.mul_(gain)

    PhiProjection.__init__ = scaled_init
    return original


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["-h"], ["--help"]):
        print(f"usage: python -m experiments.bible_mt.phi_init_train {GAIN_FLAG} G FAIRSEQ_TRAIN_ARGS...\n{__doc__}")
        return
    gain, fairseq_args = split_gain(argv)
    patch_phi_init(gain)
    from fairseq_cli.train import cli_main

    sys.argv = ["fairseq-train", *fairseq_args]
    cli_main()


if __name__ == "__main__":
    main()
