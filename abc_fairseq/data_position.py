"""Resume a run's data position on another process count or batch size.

fairseq 0.12 saves the training iterator's position as ``iterations_in_epoch``: the batches one
process has taken in this epoch. That count means the same data only on the same layout: the
epoch's batches are dealt round-robin to ``num_shards`` processes, and their size follows
``--max-tokens`` / ``--batch-size``. A run resumed on another process count (or with another
per-process batch, which the launcher's batch rule picks to hold the same tokens per update) would
read the count in the new layout's units: it replays or skips part of the epoch, or stops with
"Cannot resume training due to dataloader mismatch".

``keep_data_position_across_layouts`` makes the saved state also record its layout (``num_shards``
and the epoch's ``num_batches``) and, when a state is loaded into a different layout, maps the
position to the same share of the epoch's batches: the batches taken by all processes,
``iterations_in_epoch x num_shards``, out of ``num_batches``, rounded down (at most one pass of the
new layout is read again). With batches of equal size (language modelling on whole segments) that
is the same number of samples, and where the new layout only regroups the same batches (the same
per-process batch on fewer or more processes) the resumed run reads exactly the batches the
uninterrupted one would have. A state without the layout (older checkpoints) loads as fairseq
loads it.
"""

import functools
import logging

logger = logging.getLogger(__name__)

_installed = False


def epoch_share(state: dict, num_shards: int, num_batches: int) -> dict:
    """The iterator state STATE (saved in its own layout) in the layout (NUM_SHARDS, NUM_BATCHES):
    the same share of the epoch's batches, rounded down; the next epoch's start once it is past the
    last pass of the new layout."""
    saved_shards, saved_batches = state.get("num_shards"), state.get("num_batches")
    taken = state.get("iterations_in_epoch", 0)
    if not saved_shards or not saved_batches or (saved_shards, saved_batches) == (num_shards, num_batches) or not taken:
        return state
    position = (taken * saved_shards * num_batches) // (saved_batches * num_shards)
    passes_per_shard = -(-num_batches // num_shards)
    mapped = dict(state, num_shards=num_shards, num_batches=num_batches)
    if position >= passes_per_shard:
        mapped.update(epoch=state["epoch"] + 1, iterations_in_epoch=0)
    else:
        mapped.update(iterations_in_epoch=position)
    return mapped


def keep_data_position_across_layouts() -> bool:
    """Patch fairseq's ``EpochBatchIterator`` as the module docstring says; True if this call did."""
    global _installed
    if _installed:
        return False
    from fairseq.data.iterators import EpochBatchIterator

    save, load = EpochBatchIterator.state_dict, EpochBatchIterator.load_state_dict

    @functools.wraps(save)
    def state_dict(self):
        return dict(save(self), num_shards=self.num_shards, num_batches=len(self.frozen_batches))

    @functools.wraps(load)
    def load_state_dict(self, state):
        mapped = epoch_share(state, self.num_shards, len(self.frozen_batches))
        if mapped is not state:
            logger.warning(
                "the run resumes on another layout (%d processes x %d batches per epoch, saved with %d x %d): "
                "its position in epoch %d, %d passes per process, becomes epoch %d, %d passes",
                self.num_shards, len(self.frozen_batches), state["num_shards"], state["num_batches"],
                state["epoch"], state["iterations_in_epoch"], mapped["epoch"], mapped["iterations_in_epoch"])
        return load(self, mapped)

    state_dict.abc_fairseq_layout = load_state_dict.abc_fairseq_layout = True  # what the import tests look for
    EpochBatchIterator.state_dict, EpochBatchIterator.load_state_dict = state_dict, load_state_dict
    _installed = True
    return True
