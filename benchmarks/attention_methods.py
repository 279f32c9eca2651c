"""The attention implementations the ``attention`` benchmark compares, as worker builders.

Each method turns ``params`` (batch, length, heads, head_dim, memory, dtype, method) into a
``Case`` whose ``run`` does one forward + backward: loss = sum(output * fixed random tensor),
gradients by ``torch.autograd.grad`` with respect to every input and parameter (nothing
accumulates in ``.grad`` between calls).

- ``abc``: ``abc_fairseq.ops.causal_abc(q, k, v, phi_logits, backend="auto")``, q, k, v
  ``[B, H, N, d]``, phi_logits ``[B, H, N, n]``: the Triton kernel on CUDA, the PyTorch path
  elsewhere. ``abc-torch``: the same with ``backend="torch"``, the PyTorch path everywhere. Where
  ``causal_abc`` has no ``backend`` argument yet, both call it without one (the PyTorch path).
- ``sdpa``: ``torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)``; on CUDA
  in bf16 / fp16 restricted to the flash kernel.
- ``fla-abc``: flash-linear-attention's ``chunk_abc(q, k, v, s)`` (Triton, CUDA only) on the same
  shapes, where the optional ``fla-core`` package imports; skipped otherwise.
- ``fairseq-mha``: fairseq's ``MultiheadAttention(H*d, H, self_attention=True)`` on ``[N, B, H*d]``
  with a float ``-inf`` upper-triangle ``attn_mask`` and ``need_weights=False`` (as fairseq's
  decoder layers call it), including its q, k, v and output projections.
- ``abc-module``: ``abc_fairseq.modules.ABCMultiheadAttention`` in causal self-attention mode,
  projections and W_phi included (compare with ``fairseq-mha``); skipped when not importable.
- every other strategy of ``abc_fairseq.strategies`` by its flag value (``abc-relu``, ``linformer``,
  ``window``, ``elu``, ...): the strategy's causal parallel form on q, k, v ``[B, H, N, d]`` and the
  control input x ``[B, N, H*d]``, with its own (and its tied) parameters, ``memory`` = n (the
  window length, the kernel feature size); Linformer's N_max is the length measured. Like ``abc``
  there are no q/k/v/output projections. Not run unless named in ``--methods``.
"""

import functools
import inspect
from typing import Callable, Dict, Sequence

import torch

from ._worker import Case, CaseUnavailable
from .cli import DTYPES

METHOD_NOTES = {
    "abc": "abc_fairseq.ops.causal_abc(backend='auto': Triton on CUDA) on q, k, v [B,H,N,d] and phi_logits "
           "[B,H,N,n]; no projections.",
    "abc-torch": "abc_fairseq.ops.causal_abc(backend='torch'): the PyTorch path, same shapes as abc.",
    "sdpa": "torch scaled_dot_product_attention(is_causal=True) on [B,H,N,d] (flash kernel on CUDA in "
            "bf16/fp16); no projections.",
    "fla-abc": "flash-linear-attention's chunk_abc (optional fla-core package, Triton, CUDA only) on q, k, v "
               "and slot logits s [B,N,H,*]; no projections.",
    "fairseq-mha": "fairseq MultiheadAttention with a float -inf causal attn_mask, need_weights=False; "
                   "includes its 4 linear projections (compare with abc-module, not abc).",
    "abc-module": "abc_fairseq ABCMultiheadAttention(causal=True), includes its 4 projections and W_phi "
                  "(the like-for-like comparison with fairseq-mha); no attn_mask passed (causal built in).",
}


def _randn(shape: Sequence[int], params: dict, device, requires_grad: bool = True) -> torch.Tensor:
    tensor = torch.randn(*shape, device=device, dtype=DTYPES[params["dtype"]])
    return tensor.requires_grad_(requires_grad)


def _fwd_bwd(forward: Callable[[], torch.Tensor], weight: torch.Tensor, wrt: Sequence[torch.Tensor]):
    """A ``run`` closure: loss = sum(forward() * weight), then gradients w.r.t. ``wrt``."""
    wrt = tuple(wrt)

    def run() -> None:
        loss = (forward() * weight).sum()
        torch.autograd.grad(loss, wrt)

    return run


def _backend_kwargs(backend: str) -> Dict[str, str]:
    """``{"backend": backend}`` where ``causal_abc`` takes a backend, else ``{}`` (its one path)."""
    from abc_fairseq.ops import causal_abc

    return {"backend": backend} if "backend" in inspect.signature(causal_abc).parameters else {}


def _abc(backend: str, params: dict, device) -> Case:
    from abc_fairseq.ops import causal_abc

    B, H, N, d, n = (params[key] for key in ("batch", "heads", "length", "head_dim", "memory"))
    q, k, v = (_randn((B, H, N, d), params, device) for _ in range(3))
    phi_logits = _randn((B, H, N, n), params, device)
    weight = _randn((B, H, N, d), params, device, requires_grad=False)
    kwargs = _backend_kwargs(backend)
    run = _fwd_bwd(lambda: causal_abc(q, k, v, phi_logits, **kwargs), weight, (q, k, v, phi_logits))
    return Case(run, {"shapes": {"q,k,v": [B, H, N, d], "phi_logits": [B, H, N, n]},
                      "backend": kwargs.get("backend", "none (causal_abc takes no backend argument)")})


def _fla_abc(params: dict, device) -> Case:
    """fla's ``chunk_abc``; inputs laid out [B, N, H, *] (``head_first=False`` where it asks)."""
    if device.type != "cuda":
        raise CaseUnavailable("fla-abc runs on CUDA only (flash-linear-attention's Triton kernels)")
    try:
        from fla.ops.abc import chunk_abc
    except Exception as exc:  # optional: never a dependency of this project
        raise CaseUnavailable(f"fla-abc: flash-linear-attention (the fla-core package) is not importable: "
                              f"{type(exc).__name__}: {exc}") from exc
    B, H, N, d, n = (params[key] for key in ("batch", "heads", "length", "head_dim", "memory"))
    q, k, v = (_randn((B, N, H, d), params, device) for _ in range(3))
    slots = _randn((B, N, H, n), params, device)
    weight = _randn((B, N, H, d), params, device, requires_grad=False)
    kwargs = {"head_first": False} if "head_first" in inspect.signature(chunk_abc).parameters else {}
    run = _fwd_bwd(lambda: chunk_abc(q, k, v, slots, **kwargs)[0], weight, (q, k, v, slots))
    return Case(run, {"shapes": {"q,k,v": [B, N, H, d], "s": [B, N, H, n]}, "kwargs": kwargs})


def _flash_only(params: dict, device) -> bool:
    """SDPA is restricted to the flash kernel on CUDA in half precision (issue 13's reference)."""
    return device.type == "cuda" and params["dtype"] in ("bfloat16", "float16")


def _sdpa(params: dict, device) -> Case:
    import torch.nn.functional as F

    B, H, N, d = (params[key] for key in ("batch", "heads", "length", "head_dim"))
    q, k, v = (_randn((B, H, N, d), params, device) for _ in range(3))
    weight = _randn((B, H, N, d), params, device, requires_grad=False)
    flash = _flash_only(params, device)

    def attend() -> torch.Tensor:
        if not flash:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # the backward follows the forward's kernel
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    return Case(_fwd_bwd(attend, weight, (q, k, v)), {"shapes": {"q,k,v": [B, H, N, d]}, "flash_only": flash})


def _causal_mask(length: int, params: dict, device) -> torch.Tensor:
    """Float mask with -inf above the diagonal (fairseq's ``buffered_future_mask`` layout)."""
    full = torch.full((length, length), float("-inf"), device=device, dtype=DTYPES[params["dtype"]])
    return torch.triu(full, diagonal=1)


def _fairseq_mha(params: dict, device) -> Case:
    try:
        from fairseq.modules import MultiheadAttention
    except Exception as exc:  # fairseq missing or broken: nothing to compare with
        raise CaseUnavailable(f"fairseq.modules.MultiheadAttention is not importable: {exc}") from exc

    B, H, N, d = (params[key] for key in ("batch", "heads", "length", "head_dim"))
    module = MultiheadAttention(embed_dim=H * d, num_heads=H, self_attention=True)
    module = module.to(device=device, dtype=DTYPES[params["dtype"]]).train()
    x = _randn((N, B, H * d), params, device)
    mask = _causal_mask(N, params, device)
    weight = _randn((N, B, H * d), params, device, requires_grad=False)

    def forward() -> torch.Tensor:
        return module(x, x, x, attn_mask=mask, need_weights=False)[0]

    run = _fwd_bwd(forward, weight, (x, *module.parameters()))
    return Case(run, {"shapes": {"x": [N, B, H * d], "attn_mask": [N, N]}, "class": "fairseq MultiheadAttention"})


def _abc_module(params: dict, device) -> Case:
    """``ABCMultiheadAttention(..., self_attention=True, causal=True)`` with its own W_phi
    (the spec's ``PhiProjection``), called like fairseq's decoder calls self attention but without the
    future mask (causality is built in; the module only validates that mask)."""
    from abc_fairseq.modules import ABCMultiheadAttention
    from abc_fairseq.strategies import ABCAttentionSpec

    B, H, N, d, n = (params[key] for key in ("batch", "heads", "length", "head_dim", "memory"))
    dtype = DTYPES[params["dtype"]]
    spec = ABCAttentionSpec.create("abc", n, H * d, H)
    phi = spec.shared
    module = ABCMultiheadAttention(H * d, H, self_attention=True, causal=True, spec=spec)
    phi.to(device=device, dtype=dtype).train()
    module = module.to(device=device, dtype=dtype).train()
    x = _randn((N, B, H * d), params, device)
    weight = _randn((N, B, H * d), params, device, requires_grad=False)

    def forward() -> torch.Tensor:
        return module(x, x, x, need_weights=False)[0]

    run = _fwd_bwd(forward, weight, (x, *module.parameters(), *phi.parameters()))
    return Case(run, {"shapes": {"x": [N, B, H * d]}, "class": "abc_fairseq ABCMultiheadAttention (causal)"})


def _strategy_case(name: str, params: dict, device) -> Case:
    """A strategy's causal parallel form, forward + backward w.r.t. inputs and its parameters."""
    from abc_fairseq.strategies import StrategyOptions, get_strategy

    B, H, N, d, n = (params[key] for key in ("batch", "heads", "length", "head_dim", "memory"))
    dtype = DTYPES[params["dtype"]]
    options = StrategyOptions(linformer_max_positions=N)
    cls = get_strategy(name)
    shared = cls.build_shared(H * d, H, n, options)
    strategy = cls(H, d, n, "causal", shared=shared, options=options)
    modules = [strategy] + ([shared] if shared is not None else [])
    for module in modules:
        module.to(device=device, dtype=dtype).train()
    q, k, v = (_randn((B, H, N, d), params, device) for _ in range(3))
    x = _randn((B, N, H * d), params, device)
    weight = _randn((B, H, N, d), params, device, requires_grad=False)
    inputs = [q, k, v, x] if cls.uses_control_input else [q, k, v]  # autograd.grad rejects unused inputs
    wrt = inputs + [p for module in modules for p in module.parameters()]
    run = _fwd_bwd(lambda: strategy.causal(q, k, v, x, None), weight, wrt)
    return Case(run, {"shapes": {"q,k,v": [B, H, N, d], "x": [B, N, H * d]}, "class": type(strategy).__name__})


def _causal_strategies() -> Dict[str, str]:
    """Registered causal strategies other than ``abc`` (measured by the op method above) -> note."""
    from abc_fairseq.strategies import STRATEGIES

    return {name: f"abc_fairseq.strategies {name} ({cls.paper}), causal parallel form with its parameters "
                  "on q, k, v [B,H,N,d] and x [B,N,H*d]; no projections."
            for name, cls in STRATEGIES.items() if name != "abc" and "causal" in cls.modes}


METHOD_NOTES.update(_causal_strategies())


# The methods run when --methods is not given (on CPU, and on CUDA: issue 13's comparison);
# every strategy can be named explicitly.
DEFAULT_METHODS = ("abc", "sdpa", "fairseq-mha", "abc-module")
GPU_DEFAULT_METHODS = ("abc", "abc-torch", "sdpa", "fla-abc")
METHODS: Dict[str, Callable[[dict, torch.device], Case]] = {
    "abc": functools.partial(_abc, "auto"),
    "abc-torch": functools.partial(_abc, "torch"),
    "sdpa": _sdpa,
    "fla-abc": _fla_abc,
    "fairseq-mha": _fairseq_mha,
    "abc-module": _abc_module,
    **{name: functools.partial(_strategy_case, name) for name in _causal_strategies()},
}


def build_case(params: dict, device) -> Case:
    """The worker's entry point: the ``Case`` for ``params["method"]``."""
    return METHODS[params["method"]](params, device)


def prime(params: dict, device) -> None:
    """Run the method once at a tiny size so that thread pools, lazy kernel setup and one-time
    warnings happen before the memory baseline; unavailable methods raise ``CaseUnavailable`` here."""
    tiny = dict(params, batch=1, length=min(params["length"], 16))
    build_case(tiny, device).run()
