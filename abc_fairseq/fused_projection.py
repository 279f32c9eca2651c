"""Self attention's q, k and v projections as one matrix product where nothing trains them.

A decoding step of fairseq's attention runs three GEMMs on one input: three launches and their
host time on a GPU, where decoding is host-bound. ``FusedProjections.tile_`` keeps the three
weights (and biases) one after another in one storage each (the parameters stay three separate
``nn.Parameter`` views, so checkpoints, optimisers and gradients see the same tensors as
before); with gradients off, calling it runs a single ``F.linear`` over the stacked rows. It reads
the parameters' own memory, so it never sees stale weights; parameters moved into storage of
their own (FSDP's flat buffer, ``p.data = ...``), modules replaced or given hooks (fairseq's quant
noise) take the three separate calls again.
"""

from typing import Optional, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.modules.module as module_globals
from torch import Tensor


def _span(tensors: Sequence[Tensor]) -> Optional[Tensor]:
    """The tensor whose rows are ``tensors``' rows in order (all of one row shape), as a view of
    their shared storage, or None when they do not lie that way."""
    expected, row = tensors[0].data_ptr(), tensors[0].shape[1:]
    for t in tensors:
        if t.data_ptr() != expected or t.shape[1:] != row or not t.is_contiguous():
            return None
        expected += t.numel() * t.element_size()
    first = tensors[0].detach()
    return first.as_strided((sum(t.shape[0] for t in tensors), *row), first.stride())


def _stack_(tensors: Sequence[Tensor]) -> Optional[Tensor]:
    """Moves ``tensors`` (distinct parameters, each alone in its storage, of one dtype and device)
    into one storage, rows in order, values unchanged, and returns their ``_span``. None, and
    nothing moved, for anything else: never a view of a buffer someone else owns (FSDP's flat
    parameter), never tied weights."""
    span = _span(tensors)
    if span is not None:
        return span
    if any(t.storage_offset() or t.untyped_storage().nbytes() != t.numel() * t.element_size()
           or not t.is_contiguous() for t in tensors) or len({(t.dtype, t.device) for t in tensors}) > 1 \
            or len({t.data_ptr() for t in tensors}) < len(tensors):
        return None
    if tensors[0].device.type == "cpu" and torch.cuda.is_initialized():
        torch.cuda.synchronize()  # a .to("cpu", non_blocking=True) may still be copying them
    # Parameters, not inference tensors, even when a model is converted under inference_mode.
    with torch.inference_mode(False), torch.no_grad():
        stacked = torch.cat([t.detach() for t in tensors])
        for t, rows in zip(tensors, stacked.split([t.shape[0] for t in tensors])):
            t.data = rows
    return _span(tensors)


def _plain(module: nn.Module) -> bool:
    """An ``nn.Linear`` whose call is ``F.linear`` alone: not a subclass, no hooks of its own (fairseq's
    quant noise is one), no ``forward`` patched on the instance (as accelerate's hooks do)."""
    return type(module) is nn.Linear and not (module._forward_hooks or module._forward_pre_hooks
                                              or "forward" in module.__dict__)


class FusedProjections:
    """One ``F.linear`` for ``nn.Linear`` modules of one input, once ``tile_`` has stacked them.

    The plan made by ``tile_`` names the modules, their parameters and the parameters' addresses,
    and holds the stacked storage (so that no other tensor can take those addresses while it is
    alive). A call checks that plan cheaply (object identity, hooks, one address per parameter);
    a plan that no longer holds is dropped, releasing the stacked storage.
    """

    def __init__(self):
        self._plan = None

    def __deepcopy__(self, memo):  # a copy's parameters have storage of their own: no plan
        return FusedProjections()

    def __getstate__(self):
        return {"_plan": None}

    def tile_(self, linears: Sequence[nn.Module]) -> None:
        """Stacks the weights (and the biases) of ``linears``: plain ``nn.Linear`` (no hooks, no
        subclass) of one input size, all with or all without a bias. Anything else: no plan."""
        self._plan = None
        if not all(_plain(m) for m in linears) or len(set(map(id, linears))) < len(linears) or \
                len({m.in_features for m in linears}) > 1 or len({m.bias is None for m in linears}) > 1:
            return
        names = ("weight",) if linears[0].bias is None else ("weight", "bias")
        spans = [_stack_([getattr(m, name) for m in linears]) for name in names]
        if any(span is None for span in spans):
            return
        entries = tuple((m, name, getattr(m, name)) for name in names for m in linears)
        self._plan = (tuple(linears), tuple((m, name, p, p.data_ptr()) for m, name, p in entries),
                      spans[0], spans[1] if len(spans) > 1 else None, [m.out_features for m in linears])

    def __call__(self, linears: Sequence[nn.Module], x: Tensor) -> Optional[Tuple[Tensor, ...]]:
        """Each module's output on x [..., C_in], views of one [..., sum C_out] product, when
        gradients are off and the plan holds; None otherwise (call the modules)."""
        plan = self._plan
        if plan is None or torch.compiler.is_dynamo_compiling():  # traced, project as the modules do
            return None
        modules, entries, weight, bias, sizes = plan
        for m, name, p, address in entries:  # (FSDP may leave a plain tensor where the parameter was)
            if p.data_ptr() != address or m._parameters.get(name) is not p:
                self._plan = None
                return None
        for given, m in zip(linears, modules):
            if given is not m:  # a module replaced (quantised, wrapped): release the old ones
                self._plan = None
                return None
        if torch.is_grad_enabled() or module_globals._global_forward_hooks or \
                module_globals._global_forward_pre_hooks:
            return None
        for m in modules:  # still called as planned (``_plain``, whose type check the identity holds)
            if m._forward_hooks or m._forward_pre_hooks or "forward" in m.__dict__:
                return None
        return F.linear(x, weight, bias).split(sizes, dim=-1)
