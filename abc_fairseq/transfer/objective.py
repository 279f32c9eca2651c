"""The transfer loss: each converted attention module against its softmax twin, on the twin's inputs.

The teacher runs the batch once; a forward pre-hook on each of its attention modules keeps the
call's arguments (query [T, B, C], key / value [S, B, C], masks), a forward hook its output
[T, B, C]. Each student module is then called with those arguments, detached, so the modules
learn independently of one another and all at once.
"""

from contextlib import contextmanager
from typing import Dict, List, NamedTuple, Optional

import torch


class AttentionCall(NamedTuple):
    """One teacher attention call: its arguments, its output [T, B, C] and the real query
    positions [T, B] (None: all; known for self attention from its key padding mask)."""

    args: tuple
    kwargs: dict
    output: torch.Tensor
    real: Optional[torch.Tensor]


def _real_queries(module, kwargs: dict) -> Optional[torch.Tensor]:
    mask = kwargs.get("key_padding_mask")
    if mask is None or not getattr(module, "self_attention", False):
        return None
    return ~mask.to(torch.bool).t()


@contextmanager
def recorded(teacher: torch.nn.Module, names: List[str]):
    """Within the block, every call of the teacher's modules ``names`` is appended to
    ``calls[name]`` (the dict yielded)."""
    calls: Dict[str, List[AttentionCall]] = {name: [] for name in names}
    pending: Dict[str, tuple] = {}
    handles = []

    def before(name):
        def hook(module, args, kwargs):
            pending[name] = (args, kwargs)
        return hook

    def after(name):
        def hook(module, args, kwargs, output):
            args, kwargs = pending.pop(name)
            detached = {k: v.detach() if torch.is_tensor(v) else v for k, v in kwargs.items()}
            calls[name].append(AttentionCall(tuple(a.detach() if torch.is_tensor(a) else a for a in args),
                                             detached, output[0].detach(), _real_queries(module, detached)))
        return hook

    for name in names:
        module = teacher.get_submodule(name)
        handles.append(module.register_forward_pre_hook(before(name), with_kwargs=True))
        handles.append(module.register_forward_hook(after(name), with_kwargs=True))
    try:
        yield calls
    finally:
        for handle in handles:
            handle.remove()


def teacher_calls(teacher: torch.nn.Module, names: List[str], net_input: dict) -> Dict[str, List[AttentionCall]]:
    """Run the teacher on a batch's ``net_input``; every call of the modules ``names``."""
    with torch.no_grad(), recorded(teacher, names) as calls:
        teacher(**net_input)
    missing = [name for name, seen in calls.items() if not seen]
    if missing:
        raise RuntimeError(f"the teacher never called {', '.join(missing)}: its forward skipped the attention")
    return calls


def squared_error(output: torch.Tensor, target: torch.Tensor, real: Optional[torch.Tensor]) -> torch.Tensor:
    """Mean over the real positions (``real`` [T, B]) and channels of (output - target)^2; both [T, B, C]."""
    error = (output.float() - target.float()).pow(2).mean(-1)
    if real is None:
        return error.mean()
    return (error * real).sum() / real.sum().clamp(min=1)


def module_errors(student: torch.nn.Module, calls: Dict[str, List[AttentionCall]]) -> Dict[str, torch.Tensor]:
    """Each student module's MSE against the teacher on the teacher's recorded calls (a module
    called several times, e.g. shared across layers, averages its calls)."""
    errors = {}
    for name, seen in calls.items():
        module = student.get_submodule(name)
        per_call = [squared_error(module(*call.args, **call.kwargs)[0], call.output, call.real) for call in seen]
        errors[name] = torch.stack(per_call).mean()
    return errors


def transfer_loss(errors: Dict[str, torch.Tensor]) -> torch.Tensor:
    """The objective: the mean of the modules' MSEs."""
    return torch.stack(list(errors.values())).mean()
