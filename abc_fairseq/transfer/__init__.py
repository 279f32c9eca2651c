"""Attention transfer: fit a converted checkpoint's new attention to its softmax source's.

    python -m abc_fairseq.convert --input lm.pt --output abc.pt --decoder-self-attn gsa --decoder-self-memory 64
    python -m abc_fairseq.transfer --input abc.pt --output abc_transferred.pt --save-dir transfer_gsa64 \\
        --max-updates 500 --lr 1e-3 --max-tokens 4096

The stage between conversion and uptraining (LoLCATs' and Hedgehog's first stage). The teacher is
the softmax model the converted checkpoint came from: its own kept tensors with every attention
position softmax (the converter keeps every source tensor bit for bit, so this is the source).
Each converted attention module is trained to reproduce its softmax twin's output on the
twin's own inputs: forward hooks on the teacher capture what enters each attention module
(query, key, value, masks; detached) and what leaves it, and the loss is the mean over modules of
each module's mean squared error (over the real query positions and the channels). All modules
train at once; dropout is off in both models.

Trained: only the tensors the conversion added (the '--input' checkpoint's 'abc_conversion'
record: W_phi, GSA's gate projection, a strategy's own parameters), plus with --train-qk the q
and k projections of every converted module. Everything else is frozen and checked bit for bit
before the output is written. The optimiser is Adam at a constant --lr.

Data: the checkpoint's own task (its cfg.task, --data overriding the folder) loads --subset
and batches it with fairseq's batch iterator (--max-tokens per batch, shuffled per epoch from
--seed). Works for every family the converter takes (lm, mt, roberta): the model's forward on
the batch's net_input drives the teacher.

Run state: SAVE_DIR/transfer_last.pt (trained tensors, Adam's state, the data position, the
RNG, the update and token counts, wall time), written every --save-interval updates and at the
end. Rerunning the same command resumes from it; a larger --max-updates continues a finished
run. SAVE_DIR must be new, empty or this tool's (holding transfer_last.pt of the same --input).

Output: the --input checkpoint as it was saved (same layout, records and flags) with only the
trained tensors replaced, plus an 'abc_transfer' record (updates, tokens, wall time, trained
tensors, final per-module MSE). fairseq-train --restore-file (scripts/lm/uptrain.sh,
scripts/mt/uptrain.sh), fairseq-eval-lm and fairseq-generate read it as any converted model.
--output is never the input nor an existing file (--force replaces an earlier output of this
tool only).
"""

__all__ = ["main"]


def main(argv=None) -> int:
    from .cli import main as cli_main

    return cli_main(argv)
