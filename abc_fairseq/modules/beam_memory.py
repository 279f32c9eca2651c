"""Cross-attention memories shared by the beams of a sentence, and the reorder plans of beam search.

During beam search the encoder output is repeated ``beam`` times per sentence ([S, B x beam, C],
rows of one sentence adjacent), so every beam of a sentence would build and carry the same
cross-attention memory. The memory is built once per sentence instead ([B, H, n, d]) and the
queries of a sentence's ``beam`` rows read it together (folded into its query positions). Beam
search only permutes hypotheses within a sentence, so the memory then needs no reorder at all
until sentences finish and leave the batch.

Every decision here is checked, not assumed: rows are grouped only when their encoder outputs
and padding are equal, and a reorder that mixes sentences inside a group (which
``SequenceGenerator`` never does) falls back to one memory per row. The results are exact either
way.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

ROWS_KEY = "rows_per_memory"  # the buffer's group size g (a 0-dim CPU tensor), absent when g = 1


def shared_rows(key: Tensor, valid: Optional[Tensor], beam: int) -> int:
    """g: how many adjacent batch rows of ``key`` [S, B, C] (and ``valid`` [B, S]) are copies of
    one sentence; ``beam`` when they all are (and beam > 1 divides B), else 1."""
    B = key.shape[1]
    if beam <= 1 or B % beam:
        return 1
    groups = key.view(key.shape[0], B // beam, beam, key.shape[-1])
    if not torch.equal(groups, groups[:, :, :1].expand_as(groups)):
        return 1
    if valid is not None:
        rows = valid.view(B // beam, beam, -1)
        if not torch.equal(rows, rows[:, :1].expand_as(rows)):
            return 1
    return beam


def first_of_groups(key: Tensor, valid: Optional[Tensor], rows: int) -> Tuple[Tensor, Optional[Tensor]]:
    """The first row of every group of ``rows``: key [S, B, C] -> [S, B / rows, C], valid likewise."""
    if rows == 1:
        return key, valid
    key = key[:, ::rows]
    return key, None if valid is None else valid[::rows]


def fold_queries(q: Tensor, rows: int) -> Tensor:
    """[B x g, H, M, d] -> [B, H, g x M, d]: the queries of a sentence's g rows read its memory
    together (the read treats query positions independently)."""
    if rows == 1:
        return q
    Bg, H, M, d = q.shape
    return q.view(Bg // rows, rows, H, M, d).transpose(1, 2).reshape(Bg // rows, H, rows * M, d)


def unfold_outputs(out: Tensor, rows: int) -> Tensor:
    """The inverse of ``fold_queries`` on the read's output: [B, H, g x M, d] -> [B x g, H, M, d]."""
    if rows == 1:
        return out
    B, H, gM, d = out.shape
    return out.view(B, H, rows, gM // rows, d).transpose(1, 2).reshape(B * rows, H, gM // rows, d)


# The plans of the last ``new_order`` seen, by (rows, memory_batch): every layer of a decoder is
# reordered with the same tensor, so a plan is worked out once per step, not once per layer. The
# tensor is held (its id cannot be reused) and its version checked (an in-place change is seen).
_plans: dict = {}


def _identity(order: Tensor, size: int) -> bool:
    return order.numel() == size and torch.equal(order, torch.arange(size, device=order.device))


def reorder_plan(new_order: Tensor, rows: int, memory_batch: int) -> Tuple[Optional[Tensor], int]:
    """How a state of ``memory_batch`` entries, each serving ``rows`` adjacent batch rows, follows
    ``new_order`` (the old row of every new row). Returns (index into the entries, or None when
    they stay as they are; the new ``rows``). Rows of one sentence stay grouped when every new
    group comes from one old group; otherwise every row gets its own entry."""
    key = (rows, memory_batch)
    version = None if new_order.is_inference() else new_order._version  # inference tensors have none
    order, seen, plan = _plans.get(key, (None, None, None))
    if order is new_order and version is not None and seen == version:
        return plan
    if rows == 1:
        plan = (None if _identity(new_order, memory_batch) else new_order, 1)
    elif new_order.numel() % rows == 0:
        source = torch.div(new_order, rows, rounding_mode="floor").view(-1, rows)
        first = source[:, 0]
        if torch.equal(source, first[:, None].expand_as(source)):
            plan = (None if _identity(first, memory_batch) else first, rows)
        else:
            plan = (source.reshape(-1), 1)
    else:
        plan = (torch.div(new_order, rows, rounding_mode="floor"), 1)
    for stale in [k for k, entry in _plans.items() if entry[0] is not new_order]:
        del _plans[stale]  # a new step: forget the last one's plans
    _plans[key] = (new_order, version, plan)
    return plan
