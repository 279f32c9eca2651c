"""The self-check's timings on CUDA: causal ABC forward + backward on the Triton kernels (at the
chunk the launcher picks, and at every chunk it could take, forced through ``ABC_TRITON_CHUNK``)
and on the PyTorch path, against fused causal softmax attention (``scaled_dot_product_attention``,
flash where the device has it) and, when installed, flash-linear-attention's ``chunk_abc`` on the
same problem (its inputs built by ``fla_peer`` in fla's layout, before the timing)."""

from typing import Callable, Dict, List, Optional, Union

import torch
import torch.nn.functional as F

from ..ops import causal_abc
from ..ops.backend import kernel_chunk
from ..ops.causal.chunk import DEFAULT_CHUNK_SIZE
from ..ops.triton import tuning
from ..ops.triton.sizes import CHUNK_VARIABLE, chunks_for, device_chunk, pad, table_width
from ..ops.utils import scoped_environment
from .checks import Size
from .fla_peer import fla_attention, fla_op, to_fla_layout


def _median_ms(fn: Callable[[], None], repeats: int) -> float:
    fn()  # compile / warm up
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def _fwd_bwd(forward: Callable[..., torch.Tensor], inputs: List[torch.Tensor]) -> Callable[[], None]:
    leaves = [x.detach().clone().requires_grad_() for x in inputs]

    def run():
        out = forward(*leaves)
        out.backward(torch.ones_like(out))

    return run


def _fla(kind: str) -> Optional[Callable]:
    """fla's chunk op for ``kind``, or None where fla-core is not installed (or does not import)."""
    try:
        return fla_op(kind)
    except Exception:  # noqa: BLE001 (an optional peer: not installed, or broken on this machine)
        return None


def time_causal(size: Size, dtype: torch.dtype, repeats: int = 5) -> Dict[str, Union[float, int]]:
    """Milliseconds per forward + backward, per method (absent: not available here; NaN: failed),
    ``chunk``, the causal kernels' chunk the launcher measured fastest on this device
    (``ops.triton.tuning``), and ``table chunk``, the compile table's guess without a measurement."""
    B, H, N, d, n = size
    gen = torch.Generator(device="cpu").manual_seed(0)
    q, k, v = (torch.randn(B, H, N, d, generator=gen).to("cuda", dtype) for _ in range(3))
    logits = torch.randn(B, H, N, n, generator=gen).to("cuda")
    triton_abc = _fwd_bwd(lambda *x: causal_abc(*x, backend="triton"), [q, k, v, logits])
    measured = tuning.size_class("causal_abc", q.device, [pad(w) for w in (n, d, d)], dtype, N)
    times = {
        "abc triton": _median_ms(triton_abc, repeats),
        "chunk": tuning.chosen().get(measured, 0),
        "table chunk": device_chunk(kernel_chunk(DEFAULT_CHUNK_SIZE, N), n, d, d, dtype, q.device),
        "abc torch": _median_ms(_fwd_bwd(lambda *x: causal_abc(*x, backend="torch"), [q, k, v, logits]), repeats),
    }
    for chunk in chunks_for(table_width(n, d, d)):  # every chunk, forced: what the measured choice chose from
        try:
            with scoped_environment(**{CHUNK_VARIABLE: str(chunk)}):
                times[f"abc triton C={chunk}"] = _median_ms(triton_abc, repeats)
        except Exception as error:  # noqa: BLE001 (a chunk over the device's shared memory is reported, not fatal)
            times[f"abc triton C={chunk}"] = float("nan")
            print(f"abc triton at C={chunk} could not be timed: {type(error).__name__}: {error}")
    if dtype != torch.float32 or N <= 4096:  # fp32 SDPA has no flash kernel: math path, N^2 memory
        times["sdpa causal"] = _median_ms(
            _fwd_bwd(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [q, k, v]), repeats)
    chunk_abc = _fla("abc")
    if chunk_abc is not None and n & (n - 1) == 0:  # fla's prefix normaliser holds n slots in one block
        fla_inputs = to_fla_layout(q, k, v, logits.to(dtype))  # fla's layout [B, T, H, *], outside the timing
        try:
            times["fla chunk_abc"] = _median_ms(
                _fwd_bwd(lambda *x: fla_attention("abc", *x, op=chunk_abc), list(fla_inputs)), repeats)
        except Exception as error:  # noqa: BLE001 (a peer library's failure is reported, not fatal)
            times["fla chunk_abc"] = float("nan")
            print(f"fla chunk_abc could not be timed: {type(error).__name__}: {error}")
    return times
