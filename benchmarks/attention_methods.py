"""The attention implementations the ``attention`` suite compares, as worker builders: each turns
``params`` (batch B, length N, heads H, head_dim d, memory n, dtype, method) into a ``Case`` whose
``run`` is one forward + backward: loss = sum(output * a fixed random tensor), gradients by
``torch.autograd.grad`` for every input and parameter. Every causal strategy of
``abc_fairseq.strategies`` is a method too (its causal parallel form, run only when named)."""

import functools
import inspect
from typing import Callable, Dict, Sequence

import torch

from ._worker import Case, CaseUnavailable
from .cli import DTYPES

METHOD_NOTES = {
    "abc": "abc_fairseq.ops.causal_abc(backend='auto': Triton on CUDA) on q, k, v [B,H,N,d], phi_logits [B,H,N,n].",
    "abc-torch": "abc_fairseq.ops.causal_abc(backend='torch'): the PyTorch path, same shapes as abc.",
    "sdpa": "torch scaled_dot_product_attention(is_causal=True) on [B,H,N,d] (flash kernel on CUDA in bf16/fp16).",
    "fla-abc": "flash-linear-attention's chunk_abc (optional fla-core, CUDA only) on q, k, v, s [B,N,H,*].",
    "gsa-torch": "abc_fairseq.strategies gsa with backend='torch' (the PyTorch chunked op), as the gsa method.",
    "fla-gsa": "flash-linear-attention's chunk_gsa (optional fla-core, CUDA only) on q, k, v [B,N,H,d] and "
               "gates from slot logits [B,N,H,n] (g = logsigmoid / 8, s = 1 - exp(g)), vs the gsa method.",
    "fairseq-mha": "fairseq MultiheadAttention, float -inf causal mask, with its 4 projections (vs abc-module).",
    "abc-module": "abc_fairseq ABCMultiheadAttention(causal=True) with its 4 projections and W_phi (vs fairseq-mha).",
}


def _randn(shape: Sequence[int], params: dict, device, requires_grad: bool = True) -> torch.Tensor:
    return torch.randn(*shape, device=device, dtype=DTYPES[params["dtype"]]).requires_grad_(requires_grad)


def _dims(params: dict):
    return (params[key] for key in ("batch", "heads", "length", "head_dim", "memory"))


def _case(forward: Callable[[], torch.Tensor], output_shape: Sequence[int], wrt: Sequence[torch.Tensor], info: dict,
          params: dict, device) -> Case:
    """run: loss = sum(forward() * weight), gradients w.r.t. ``wrt``; weight drawn before the baseline."""
    wrt, weight = tuple(wrt), _randn(output_shape, params, device, requires_grad=False)

    def run() -> None:
        torch.autograd.grad((forward() * weight).sum(), wrt)

    return Case(run, info)


def _abc(backend: str, params: dict, device) -> Case:
    """``causal_abc`` on q, k, v [B, H, N, d] and phi_logits [B, H, N, n] (without ``backend`` where
    it takes none)."""
    from abc_fairseq.ops import causal_abc

    B, H, N, d, n = _dims(params)
    q, k, v = (_randn((B, H, N, d), params, device) for _ in range(3))
    phi_logits = _randn((B, H, N, n), params, device)
    kwargs = {"backend": backend} if "backend" in inspect.signature(causal_abc).parameters else {}
    return _case(lambda: causal_abc(q, k, v, phi_logits, **kwargs), (B, H, N, d), (q, k, v, phi_logits),
                 {"shapes": {"q,k,v": [B, H, N, d], "phi_logits": [B, H, N, n]},
                  "backend": kwargs.get("backend", "none (causal_abc takes no backend argument)")}, params, device)


def _fla_op(method: str, module: str, name: str, device):
    """fla's ``module.name``, or CaseUnavailable off CUDA or where fla-core does not import."""
    if device.type != "cuda":
        raise CaseUnavailable(f"{method} runs on CUDA only (flash-linear-attention's Triton kernels)")
    try:
        return getattr(__import__(f"fla.ops.{module}", fromlist=[name]), name)
    except Exception as exc:  # optional: never a dependency of this project
        raise CaseUnavailable(f"{method}: flash-linear-attention (the fla-core package) is not importable: "
                              f"{type(exc).__name__}: {exc}") from exc


def _fla_abc(params: dict, device) -> Case:
    """fla's ``chunk_abc`` on q, k, v [B, N, H, d] and slot logits s [B, N, H, n]."""
    chunk_abc = _fla_op("fla-abc", "abc", "chunk_abc", device)
    B, H, N, d, n = _dims(params)
    q, k, v = (_randn((B, N, H, d), params, device) for _ in range(3))
    slots = _randn((B, N, H, n), params, device)
    kwargs = {"head_first": False} if "head_first" in inspect.signature(chunk_abc).parameters else {}
    return _case(lambda: chunk_abc(q, k, v, slots, **kwargs)[0], (B, N, H, d), (q, k, v, slots),
                 {"shapes": {"q,k,v": [B, N, H, d], "s": [B, N, H, n]}, "kwargs": kwargs}, params, device)


def _fla_gsa(params: dict, device) -> Case:
    """fla's ``chunk_gsa`` on q, k, v [B, N, H, d] with log gates g = logsigmoid(x) / 8 and write
    weights s = 1 - exp(g) from slot logits x [B, N, H, n] (what the gsa strategy computes)."""
    chunk_gsa = _fla_op("fla-gsa", "gsa", "chunk_gsa", device)
    B, H, N, d, n = _dims(params)
    q, k, v = (_randn((B, N, H, d), params, device) for _ in range(3))
    slots = _randn((B, N, H, n), params, device)

    def attend() -> torch.Tensor:
        g = torch.nn.functional.logsigmoid(slots.float()) / 8.0
        return chunk_gsa(q, k, v, (-torch.expm1(g)).to(q.dtype), g.to(q.dtype))[0]

    return _case(attend, (B, N, H, d), (q, k, v, slots), {"shapes": {"q,k,v": [B, N, H, d], "x": [B, N, H, n]}},
                 params, device)


def _sdpa(params: dict, device) -> Case:
    """SDPA on q, k, v [B, H, N, d]; on CUDA in half precision the flash kernel only (issue 13's)."""
    import torch.nn.functional as F

    B, H, N, d, _ = _dims(params)
    q, k, v = (_randn((B, H, N, d), params, device) for _ in range(3))
    flash = device.type == "cuda" and params["dtype"] in ("bfloat16", "float16")

    def attend() -> torch.Tensor:
        if not flash:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # the backward follows the forward's kernel
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    return _case(attend, (B, H, N, d), (q, k, v), {"shapes": {"q,k,v": [B, H, N, d]}, "flash_only": flash},
                 params, device)


def _fairseq_mha(params: dict, device) -> Case:
    """fairseq's ``MultiheadAttention`` on x [N, B, H*d] with the float -inf upper-triangle mask of
    fairseq's ``buffered_future_mask``, as its decoder layers call it."""
    try:
        from fairseq.modules import MultiheadAttention
    except Exception as exc:  # fairseq missing or broken: nothing to compare with
        raise CaseUnavailable(f"fairseq.modules.MultiheadAttention is not importable: {exc}") from exc
    B, H, N, d, _ = _dims(params)
    module = MultiheadAttention(embed_dim=H * d, num_heads=H, self_attention=True)
    module = module.to(device=device, dtype=DTYPES[params["dtype"]]).train()
    x = _randn((N, B, H * d), params, device)
    mask = torch.triu(torch.full((N, N), float("-inf"), device=device, dtype=DTYPES[params["dtype"]]), diagonal=1)
    return _case(lambda: module(x, x, x, attn_mask=mask, need_weights=False)[0], (N, B, H * d),
                 (x, *module.parameters()),
                 {"shapes": {"x": [N, B, H * d], "attn_mask": [N, N]}, "class": "fairseq MultiheadAttention"},
                 params, device)


def _abc_module(params: dict, device) -> Case:
    """``ABCMultiheadAttention(causal=True)`` with its W_phi on x [N, B, H*d], no mask (causal built in)."""
    from abc_fairseq.modules import ABCMultiheadAttention
    from abc_fairseq.strategies import ABCAttentionSpec

    B, H, N, d, n = _dims(params)
    spec = ABCAttentionSpec.create("abc", n, H * d, H)
    module = ABCMultiheadAttention(H * d, H, self_attention=True, causal=True, spec=spec)
    for part in (spec.shared, module):
        part.to(device=device, dtype=DTYPES[params["dtype"]]).train()
    x = _randn((N, B, H * d), params, device)
    return _case(lambda: module(x, x, x, need_weights=False)[0], (N, B, H * d),
                 (x, *module.parameters(), *spec.shared.parameters()),
                 {"shapes": {"x": [N, B, H * d]}, "class": "abc_fairseq ABCMultiheadAttention (causal)"},
                 params, device)


def _strategy_case(name: str, params: dict, device, backend: str = "auto") -> Case:
    """A strategy's causal parallel form on q, k, v [B, H, N, d] and control input x [B, N, H*d] with
    its (and its tied) parameters, memory n; Linformer's N_max = N. No projections, like ``abc``."""
    from abc_fairseq.strategies import StrategyOptions, get_strategy

    B, H, N, d, n = _dims(params)
    options = StrategyOptions(linformer_max_positions=N)
    cls = get_strategy(name)
    shared = cls.build_shared(H * d, H, n, options)
    strategy = cls(H, d, n, "causal", shared=shared, options=options, backend=backend)
    modules = [strategy] + ([shared] if shared is not None else [])
    for module in modules:
        module.to(device=device, dtype=DTYPES[params["dtype"]]).train()
    q, k, v = (_randn((B, H, N, d), params, device) for _ in range(3))
    x = _randn((B, N, H * d), params, device)
    inputs = [q, k, v, x] if cls.uses_control_input else [q, k, v]  # autograd.grad rejects unused inputs
    return _case(lambda: strategy.causal(q, k, v, x, None), (B, H, N, d),
                 inputs + [p for m in modules for p in m.parameters()],
                 {"shapes": {"q,k,v": [B, H, N, d], "x": [B, N, H * d]}, "class": type(strategy).__name__},
                 params, device)


def _causal_strategies() -> Dict[str, str]:
    """Registered causal strategies other than ``abc`` (the op method) -> note."""
    from abc_fairseq.strategies import STRATEGIES

    return {name: f"abc_fairseq.strategies {name} ({cls.paper}), causal parallel form; no projections."
            for name, cls in STRATEGIES.items() if name != "abc" and "causal" in cls.modes}


METHOD_NOTES.update(_causal_strategies())
# The methods run when --methods is not given (on CPU, and on CUDA: issue 13's comparison).
DEFAULT_METHODS = ("abc", "sdpa", "fairseq-mha", "abc-module")
GPU_DEFAULT_METHODS = ("abc", "abc-torch", "sdpa", "fla-abc")
METHODS: Dict[str, Callable[[dict, torch.device], Case]] = {
    "abc": functools.partial(_abc, "auto"),
    "abc-torch": functools.partial(_abc, "torch"),
    "sdpa": _sdpa,
    "fla-abc": _fla_abc,
    "fla-gsa": _fla_gsa,
    "gsa-torch": functools.partial(_strategy_case, "gsa", backend="torch"),
    "fairseq-mha": _fairseq_mha,
    "abc-module": _abc_module,
    **{name: functools.partial(_strategy_case, name) for name in _causal_strategies()},
}


def build_case(params: dict, device) -> Case:
    return METHODS[params["method"]](params, device)


def prime(params: dict, device) -> None:
    """The method once at a tiny size: thread pools, lazy kernels and warnings before the baseline."""
    build_case(dict(params, batch=1, length=min(params["length"], 16)), device).run()
