"""The self-check's correctness checks: every Triton op against the PyTorch path on one device.

Each check returns ``Result`` rows: the op, what was compared, dtype, size, the error (the largest
absolute difference divided by the largest magnitude of the PyTorch result, so one number serves
every scale) and the tolerance it must stay under. Tolerances (``TOLERANCE``) are those of the
input precision: fp32 kernels use exact fp32 products, half-precision ones round inputs and
intra-chunk weights to fp16 / bf16 (10 / 7 mantissa bits) while accumulating in fp32.
"""

from typing import Callable, List, NamedTuple, Sequence

import torch

from ..ops import ABCState, abc_memory, abc_read, causal_abc, causal_abc_step
from ..ops.gsa import causal_gsa

TOLERANCE = {torch.float32: 2e-4, torch.float16: 1e-2, torch.bfloat16: 4e-2}
# A gradient sums over every later row: its error grows with N; half precision gets 3x.
GRAD_FACTOR = 3.0


class Size(NamedTuple):
    """B sequences, H heads, N rows, d head dim (keys and values), n memory slots."""

    B: int
    H: int
    N: int
    d: int
    n: int

    def __str__(self) -> str:
        return f"B={self.B} H={self.H} N={self.N} d={self.d} n={self.n}"


class Result(NamedTuple):
    op: str
    check: str
    dtype: str
    size: str
    error: float
    tolerance: float

    @property
    def passed(self) -> bool:
        return self.error <= self.tolerance  # NaN fails

    def as_dict(self) -> dict:
        return dict(self._asdict(), passed=self.passed)


def relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    """max |got - want| / max |want| (in float64; NaN or inf anywhere gives inf)."""
    got, want = got.double(), want.double()
    if not (torch.isfinite(got).all() and torch.isfinite(want).all()):
        return float("inf")
    scale = want.abs().max().item() if want.numel() else 0.0
    return (got - want).abs().max().item() / max(scale, 1e-12) if want.numel() else 0.0


def _inputs(size: Size, dtype: torch.dtype, device, seed: int):
    gen = torch.Generator(device="cpu").manual_seed(seed)
    B, H, N, d, n = size
    shapes = [(B, H, N, d), (B, H, N, d), (B, H, N, d), (B, H, N, n)]
    q, k, v, logits = (torch.randn(s, generator=gen) for s in shapes)
    logits = 3.0 * logits + torch.linspace(0, 20, N)[:, None]  # rising logits: the anchors matter
    return [x.to(device=device, dtype=dtype) for x in (q, k, v)] + [logits.to(device)]


def _value_and_grads(fn: Callable, inputs: Sequence[torch.Tensor], seed: int):
    leaves = [x.detach().clone().requires_grad_() for x in inputs]
    out = fn(*leaves)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    weight = torch.randn(out.shape, generator=gen).to(device=out.device, dtype=out.dtype)
    grads = torch.autograd.grad((out * weight).sum(), leaves)
    return out.detach(), grads


def _compare(op: str, dtype, size, pairs, factor: float = 1.0) -> List[Result]:
    name = str(dtype).replace("torch.", "")
    return [Result(op, check, name, str(size), relative_error(got, want), TOLERANCE[dtype] * factor)
            for check, got, want in pairs]


def _check_causal_op(op: str, fn: Callable, inputs, size: Size, dtype: torch.dtype, control: str) -> List[Result]:
    """A causal op ``fn(q, k, v, control, backend=..., **kw)``: values and gradients, no future leak,
    state passing (prefix then rest)."""
    run = lambda backend: (lambda *x: fn(*x, backend=backend))  # noqa: E731
    out, grads = _value_and_grads(run("triton"), inputs, seed=2)
    ref, ref_grads = _value_and_grads(run("torch"), inputs, seed=2)
    results = _compare(op, dtype, size, [("output", out, ref)])
    results += _compare(op, dtype, size,
                        [(f"grad {name}", g, r) for name, g, r in zip(("q", "k", "v", control), grads, ref_grads)],
                        GRAD_FACTOR)
    # No future leak: changing rows t >= cut changes no output row before cut (exactly).
    cut = size.N // 2 + 3
    changed = [x.clone() for x in inputs]
    for x in changed:
        x[:, :, cut:] = (torch.randn(x[:, :, cut:].shape) * 50).to(device=x.device, dtype=x.dtype)
    if control == "log gates":
        changed[3][:, :, cut:] = -changed[3][:, :, cut:].abs()  # log gates stay <= 0
    with torch.no_grad():
        before = fn(*inputs, backend="triton")[:, :, :cut]
        after = fn(*changed, backend="triton")[:, :, :cut]
    name = str(dtype).replace("torch.", "")
    results.append(Result(op, "no future leak", name, str(size), relative_error(after, before), 0.0))
    # State passing: the prefix's state continues the sequence as the full pass does.
    with torch.no_grad():
        head, state = fn(*(x[:, :, :cut] for x in inputs), backend="triton", return_state=True)
        tail, final = fn(*(x[:, :, cut:] for x in inputs), backend="triton", initial_state=state,
                         return_state=True)
        full, ref_final = fn(*inputs, backend="torch", return_state=True)
    results += _compare(op, dtype, size, [("state passing: rows after the state", tail, full[:, :, cut:]),
                                          ("state passing: final state", final.key_memory, ref_final.key_memory)])
    return results


def check_causal(size: Size, dtype: torch.dtype, device) -> List[Result]:
    """causal_abc: values and gradients, no future leak, state passing (prefix then rest)."""
    return _check_causal_op("causal_abc", causal_abc, _inputs(size, dtype, device, seed=1), size, dtype, "logits")


def check_gated(size: Size, dtype: torch.dtype, device) -> List[Result]:
    """causal_gsa (ABC's kernels with GSA's gates): as ``check_causal``, on fp32 log gates
    logsigmoid(x) / 8, the strategy's default temperature."""
    q, k, v, logits = _inputs(size, dtype, device, seed=8)
    gates = torch.nn.functional.logsigmoid(logits - logits.mean()) / 8.0
    return _check_causal_op("causal_gsa", causal_gsa, [q, k, v, gates], size, dtype, "log gates")


def check_step(size: Size, dtype: torch.dtype, device, steps: int = 8) -> List[Result]:
    """causal_abc_step: several decoding steps against the PyTorch step, after a prefix state."""
    q, k, v, logits = _inputs(size._replace(N=steps), dtype, device, seed=3)
    state = ABCState.empty(size.B, size.H, size.n, size.d, size.d, device=device, dtype=torch.float32)
    ref_state, outs, refs = state, [], []
    with torch.no_grad():
        for t in range(steps):
            row = slice(t, t + 1)
            out, state = causal_abc_step(q[:, :, row], k[:, :, row], v[:, :, row], logits[:, :, row], state,
                                         backend="triton")
            ref, ref_state = causal_abc_step(q[:, :, row], k[:, :, row], v[:, :, row], logits[:, :, row],
                                             ref_state, backend="torch")
            outs.append(out)
            refs.append(ref)
    return _compare("causal_abc_step", dtype, size._replace(N=steps),
                    [("outputs", torch.cat(outs, 2), torch.cat(refs, 2)),
                     ("state", state.value_memory, ref_state.value_memory)])


def check_bidirectional(size: Size, dtype: torch.dtype, device) -> List[Result]:
    """abc_memory and abc_read: values and gradients with padding; padding writes nothing."""
    _, k, v, logits = _inputs(size, dtype, device, seed=4)
    padding = torch.zeros(size.B, size.N, dtype=torch.bool, device=device)
    padding[0, : size.N // 3] = True  # left padding, as fairseq pads sources
    write = lambda backend: (lambda k, v, l: torch.cat(abc_memory(k, v, l, padding, backend=backend), -1))  # noqa
    memory, grads = _value_and_grads(write("triton"), [k, v, logits], seed=5)
    ref, ref_grads = _value_and_grads(write("torch"), [k, v, logits], seed=5)
    results = _compare("abc_memory", dtype, size, [("memory", memory, ref)])
    results += _compare("abc_memory", dtype, size,
                        [(f"grad {name}", g, r) for name, g, r in zip(("k", "v", "logits"), grads, ref_grads)],
                        GRAD_FACTOR)
    changed_v = v.clone()
    changed_v[padding[:, None].expand(-1, size.H, -1)] = 1e3
    with torch.no_grad():
        moved = torch.cat(abc_memory(k, changed_v, logits, padding, backend="triton"), -1)
    name = str(dtype).replace("torch.", "")
    results.append(Result("abc_memory", "padding writes nothing", name, str(size), relative_error(moved, memory), 0.0))
    q = _inputs(size, dtype, device, seed=6)[0]
    key_memory, value_memory = memory[..., : size.d].float(), memory[..., size.d:].float()
    read = lambda backend: (lambda q, km, vm: abc_read(q, km, vm, backend=backend))  # noqa: E731
    out, grads = _value_and_grads(read("triton"), [q, key_memory, value_memory], seed=7)
    ref, ref_grads = _value_and_grads(read("torch"), [q, key_memory, value_memory], seed=7)
    results += _compare("abc_read", dtype, size, [("output", out, ref)])
    results += _compare("abc_read", dtype, size,
                        [(f"grad {name}", g, r) for name, g, r in zip(("q", "key memory", "value memory"),
                                                                       grads, ref_grads)], GRAD_FACTOR)
    return results


CHECKS = (check_causal, check_gated, check_step, check_bidirectional)
