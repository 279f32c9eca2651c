"""Causal attention, forward + backward: time per token and peak memory against sequence length.

Every method at each sequence length N with batch = tokens // N. One call is loss = sum(output *
a fixed random tensor) and its gradients for every input and parameter. Every causal strategy of
abc_fairseq.strategies is a method too (run when named); a method that cannot run here (fla-abc
without CUDA or fla-core) is skipped."""

import argparse
import contextlib
import functools
from typing import Callable, Dict, List, Sequence

import torch

from abc_fairseq.strategies import STRATEGIES

from . import flags
from .harness import Case, CaseUnavailable, Measurement, Suite
from .report import Column, Panel, Plot, compare, spread

DEFAULT_LENGTHS = [512, 1024, 2048, 4096, 8192]
GPU_DEFAULT_LENGTHS = DEFAULT_LENGTHS + [16384]
DEFAULT_METHODS = ("abc", "sdpa", "fairseq-mha", "abc-module")
GSA_MAX_RATIO = 1.3  # gated slots' time against ABC's on the same path (CPU)
GPU_DEFAULT_METHODS = ("abc", "abc-torch", "sdpa", "fla-abc")


def _randn(shape: Sequence[int], params: dict, device, requires_grad: bool = True) -> torch.Tensor:
    return torch.randn(*shape, device=device, dtype=flags.DTYPES[params["dtype"]]).requires_grad_(requires_grad)


def _dims(params: dict):
    return (params[key] for key in ("batch", "heads", "length", "head_dim", "memory"))


def _case(forward: Callable[[], torch.Tensor], output_shape, wrt, params: dict, device, **info) -> Case:
    """One call: loss = sum(forward() * weight), gradients w.r.t. ``wrt``; weight drawn before the baseline."""
    wrt, weight = tuple(wrt), _randn(output_shape, params, device, requires_grad=False)
    return Case(lambda: torch.autograd.grad((forward() * weight).sum(), wrt), info)


def _abc(backend: str, params: dict, device) -> Case:
    """``causal_abc`` on q, k, v [B, H, N, d] and phi_logits [B, H, N, n]."""
    from abc_fairseq.ops import causal_abc

    B, H, N, d, n = _dims(params)
    q, k, v, phi_logits = (_randn((B, H, N, size), params, device) for size in (d, d, d, n))
    return _case(lambda: causal_abc(q, k, v, phi_logits, backend=backend), (B, H, N, d), (q, k, v, phi_logits),
                 params, device, backend=backend)


def _gsa(backend: str, params: dict, device) -> Case:
    """``causal_gsa`` on q, k, v [B, H, N, d] and log gates g = logsigmoid(x) / 8 [B, H, N, n], as
    the gsa strategy makes them (gradients through x): the op beside ``abc``'s."""
    from abc_fairseq.ops.gsa import causal_gsa

    B, H, N, d, n = _dims(params)
    q, k, v, x = (_randn((B, H, N, size), params, device) for size in (d, d, d, n))
    return _case(lambda: causal_gsa(q, k, v, torch.nn.functional.logsigmoid(x.float()).div(8.0).to(x.dtype),
                                    backend=backend), (B, H, N, d), (q, k, v, x), params, device, backend=backend)


def _fla(name: str, params: dict, device) -> Case:
    """fla's ``chunk_abc`` or ``chunk_gsa`` (``name``) on our problem: q, k, v [B, H, N, d] and slot
    logits x [B, H, N, n] moved to fla's layout [B, T, H, *] by ``abc_fairseq.selfcheck.fla_peer``
    (before the timing), which also gives gsa the log gates logsigmoid(x) / 8 and write weights
    1 - exp(g), as the gsa strategy. The case records fla-core's version and layout.
    CaseUnavailable off CUDA or where fla-core does not import."""
    from abc_fairseq.selfcheck import fla_peer

    if device.type != "cuda":
        raise CaseUnavailable(f"fla-{name} runs on CUDA only (flash-linear-attention's Triton kernels)")
    try:
        op = fla_peer.fla_op(name)
    except Exception as exc:  # optional: never a dependency of this project
        raise CaseUnavailable(f"fla-{name}: flash-linear-attention (the fla-core package) is not importable: "
                              f"{type(exc).__name__}: {exc}") from exc
    B, H, N, d, n = _dims(params)
    ours = [_randn((B, H, N, size), params, device, requires_grad=False) for size in (d, d, d, n)]
    q, k, v, x = (t.requires_grad_() for t in fla_peer.to_fla_layout(*ours))

    def attend() -> torch.Tensor:
        control = x if name == "abc" else (torch.nn.functional.logsigmoid(x.float()) / 8.0).to(x.dtype)
        return fla_peer.fla_attention(name, q, k, v, control, op=op)

    return _case(attend, (B, N, H, d), (q, k, v, x), params, device, **fla_peer.fla_record())


def _sdpa(params: dict, device) -> Case:
    """SDPA on q, k, v [B, H, N, d]; on CUDA in half precision the flash kernel only."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    B, H, N, d, _ = _dims(params)
    q, k, v = (_randn((B, H, N, d), params, device) for _ in range(3))
    flash = device.type == "cuda" and params["dtype"] in ("bfloat16", "float16")

    def attend() -> torch.Tensor:  # the backward follows the forward's kernel
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION) if flash else contextlib.nullcontext():
            return sdpa(q, k, v, is_causal=True)

    return _case(attend, (B, H, N, d), (q, k, v), params, device, flash_only=flash)


def _to(modules, params: dict, device) -> list:
    """Parameters of ``modules`` moved to the device and dtype, in training mode."""
    dtype = flags.DTYPES[params["dtype"]]
    return [p for m in modules if m is not None for p in m.to(device, dtype).train().parameters()]


def _fairseq_mha(params: dict, device) -> Case:
    """fairseq's ``MultiheadAttention`` on x [N, B, H*d] with its decoder's float -inf causal mask."""
    from fairseq.modules import MultiheadAttention

    B, H, N, d, _ = _dims(params)
    module = MultiheadAttention(embed_dim=H * d, num_heads=H, self_attention=True)
    weights, x = _to([module], params, device), _randn((N, B, H * d), params, device)
    mask = torch.triu(torch.full((N, N), float("-inf"), device=device, dtype=x.dtype), diagonal=1)
    return _case(lambda: module(x, x, x, attn_mask=mask, need_weights=False)[0], (N, B, H * d), (x, *weights),
                 params, device)


def _abc_module(params: dict, device) -> Case:
    """``ABCMultiheadAttention(causal=True)`` with its W_phi on x [N, B, H*d], no mask (causal built in)."""
    from abc_fairseq.modules import ABCMultiheadAttention
    from abc_fairseq.strategies import ABCAttentionSpec

    B, H, N, d, n = _dims(params)
    spec = ABCAttentionSpec.create("abc", n, H * d, H)
    module = ABCMultiheadAttention(H * d, H, self_attention=True, causal=True, spec=spec)
    weights, x = _to([module, spec.shared], params, device), _randn((N, B, H * d), params, device)
    return _case(lambda: module(x, x, x, need_weights=False)[0], (N, B, H * d), (x, *weights), params, device)


def _strategy(name: str, params: dict, device, backend: str = "auto") -> Case:
    """A strategy's causal parallel form on q, k, v [B, H, N, d] and control input x [B, N, H*d] with
    its (and its tied) parameters, no projections; Linformer's N_max = N."""
    from abc_fairseq.strategies import StrategyOptions, get_strategy

    B, H, N, d, n = _dims(params)
    options, cls = StrategyOptions(linformer_max_positions=N), get_strategy(name)
    shared = cls.build_shared(H * d, H, n, options)
    strategy = cls(H, d, n, "causal", shared=shared, options=options, backend=backend)
    weights = _to([strategy, shared], params, device)
    q, k, v = (_randn((B, H, N, d), params, device) for _ in range(3))
    x = _randn((B, N, H * d), params, device)
    inputs = [q, k, v, x] if cls.uses_control_input else [q, k, v]  # autograd.grad rejects unused inputs
    return _case(lambda: strategy.causal(q, k, v, x, None), (B, H, N, d), inputs + weights, params, device,
                 strategy=type(strategy).__name__)


METHODS: Dict[str, Callable[[dict, torch.device], Case]] = {
    "abc": functools.partial(_abc, "auto"), "abc-torch": functools.partial(_abc, "torch"),
    "abc-triton": functools.partial(_abc, "triton"), "sdpa": _sdpa,
    "gsa-op": functools.partial(_gsa, "auto"), "abc-strategy": functools.partial(_strategy, "abc"),
    "fla-abc": functools.partial(_fla, "abc"), "fla-gsa": functools.partial(_fla, "gsa"),
    "gsa-torch": functools.partial(_strategy, "gsa", backend="torch"), "fairseq-mha": _fairseq_mha,
    "abc-module": _abc_module, **{name: functools.partial(_strategy, name) for name in STRATEGIES
                                  if name != "abc" and "causal" in STRATEGIES[name].modes},
}


def _flat(rows: dict, low: int, high: int, max_ratio: float) -> dict:
    """ABC's time per token from N = low to high within ``max_ratio``."""
    return spread(f"abc time per token flat within {max_ratio:g}x from N={low} to N={high}",
                  [row for (m, n), row in sorted(rows.items()) if m == "abc" and low <= n <= high],
                  "us_per_token", max_ratio, ends=(low, high))


def _speed(rows: dict, n: int, minimum: float, reference: str = "sdpa", name: str = "", method: str = "abc") -> dict:
    return compare(name or f"{method} >= {minimum:g}x faster than {reference} at N={n}", rows.get((method, n)),
                   rows.get((reference, n)), "median_s", minimum, True, (f"{method} at N={n}", reference))


def _every_length(rows: dict, reference: str, minimum: float, name: str, start: int = 0,
                  method: str = "abc") -> dict:
    """``method`` against ``reference`` at every N >= ``start`` where the reference ran; the worst decides."""
    checks = [check for check in (_speed(rows, n, minimum, reference, method=method) for (m, n) in sorted(rows)
                                  if m == reference and n >= start) if check["status"] != "SKIP"]
    if not checks:
        return {"name": name, "status": "SKIP", "detail": f"{reference} has no result at N >= {start or 1}"}
    # Failed lengths have the smallest values (below the bound), a method that did not finish none at all.
    worst = min(checks, key=lambda check: check.get("value", float("-inf")))
    return {**worst, "name": name, "detail": f"worst of {len(checks)} lengths: {worst['detail']}"}


def _gsa_within(rows: dict, method: str, reference: str) -> dict:
    """``method`` (a GSA form) at most GSA_MAX_RATIO x ``reference``'s (ABC's) time at every N."""
    return _every_length(rows, reference, 1 / GSA_MAX_RATIO,
                         f"{method} within {GSA_MAX_RATIO:g}x {reference}'s time at every N", method=method)


def check_targets(rows: dict) -> List[dict]:
    """CPU targets against torch's SDPA in fp32 at 32k tokens per call, and GSA's against ABC's
    when a GSA method ran; ``rows`` by (method, N)."""
    targets = [_speed(rows, 4096, 3.0), _speed(rows, 8192, 6.0),
               _speed(rows, 512, 1 / 1.5, name="abc at most 1.5x slower than sdpa at N=512"),
               _flat(rows, 512, 8192, 1.3),
               compare("abc peak memory at N=4096 <= 2x sdpa's", rows.get(("abc", 4096)), rows.get(("sdpa", 4096)),
                       "peak_mib", 2.0, False, ("abc at N=4096 (MiB)", "sdpa"))]
    if any(method in ("gsa-op", "gsa") for method, _ in rows):
        targets += [_gsa_within(rows, "gsa-op", "abc"), _gsa_within(rows, "gsa", "abc-strategy")]
    return targets


def check_gpu_targets(rows: dict) -> List[dict]:
    """GPU targets (one H100 or H200, bf16, 32k tokens per call, H = 8, d = n = 64)."""
    return [_flat(rows, 512, 16384, 1.3),
            _every_length(rows, "abc-torch", 5.0, "abc >= 5x faster than abc-torch at every N"),
            _every_length(rows, "fla-abc", 1.0, "abc at least as fast as fla-abc wherever both run"),
            _every_length(rows, "sdpa", 1.0 + 1e-9, "abc faster than flash sdpa from N=8192 on", start=8192)]


class AttentionSuite(Suite):
    name, description, call = "attention", __doc__, "forward+backward call"
    progress = "{ms_per_call:.2f} ms/call, {us_per_token:.3f} us/token, {peak_mib:.1f} MiB"
    tiny = {"batch": 1, "length": 16}
    columns = (Column("N", "N"), Column("batch", "batch"), Column("method", "method", right=False),
               Column("ms/call", "ms_per_call", ".2f", status=True), Column("us/token", "us_per_token", ".3f"),
               Column("x sdpa speed", "speed_vs_sdpa", "x"), Column("peak MiB", "peak_mib", ".1f"),
               Column("x sdpa memory", "memory_vs_sdpa", "x"))
    relative = [("sdpa", (("median_s", "speed_vs_sdpa", True), ("peak_mib", "memory_vs_sdpa", False)))]
    plot = Plot("lines", (Panel("Forward + backward time per token", "microseconds per token (log)", "us_per_token"),
                          Panel("Peak memory increase over the inputs", "MiB (log)", "peak_mib")),
                xlabel="sequence length N (log2)")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        flags.add_flags(parser, ("--lengths", flags.positive_int, None, "sequence lengths N (default: " +
                                 " ".join(map(str, DEFAULT_LENGTHS)) + f"; on CUDA also {GPU_DEFAULT_LENGTHS[-1]})",
                                 {"nargs": "+", "metavar": "N"}),
                        ("--tokens", flags.positive_int, 32768, "tokens per call: batch = tokens // N (>= the "
                         "largest N)"),
                        ("--heads", flags.positive_int, 8, "attention heads H"),
                        ("--head-dim", flags.positive_int, 64, "dimension d per head"),
                        ("--memory", flags.positive_int, 64, "ABC memory slots n"),
                        flags.methods_flag(METHODS, None, f"methods to measure (default: {' '.join(DEFAULT_METHODS)};"
                                           f" on CUDA: {' '.join(GPU_DEFAULT_METHODS)})"))
        flags.add_common_flags(parser, self, repeats=5, warmup=2, max_seconds=120.0)

    def validate(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
        """The device's default lengths and methods; --tokens must cover the longest N."""
        on_gpu = args.device.startswith("cuda")
        args.lengths = args.lengths or (GPU_DEFAULT_LENGTHS if on_gpu else DEFAULT_LENGTHS)
        args.methods = args.methods or list(GPU_DEFAULT_METHODS if on_gpu else DEFAULT_METHODS)
        if args.tokens < max(args.lengths):
            parser.error(f"--tokens {args.tokens} is smaller than the largest of --lengths ({max(args.lengths)}); "
                         "batch = tokens // N would be 0")

    def measurements(self, args: argparse.Namespace) -> List[Measurement]:
        """One case per (method, N), N outermost; q, k, v [B = tokens // N, H, N, d]."""
        sizes = {"heads": args.heads, "head_dim": args.head_dim, "memory": args.memory, "dtype": args.dtype}
        return [Measurement(f"{method} N={n} batch={batch}", dict(sizes, method=method, length=n, batch=batch),
                            {"method": method, "N": n, "batch": batch, "tokens_per_call": batch * n})
                for n in args.lengths for method in args.methods for batch in [args.tokens // n]]

    def build_case(self, params: dict, device) -> Case:
        return METHODS[params["method"]](params, device)

    def derive(self, row: dict, seconds) -> None:
        if seconds is not None:
            row.update(median_s=seconds, ms_per_call=seconds * 1e3, us_per_token=seconds * 1e6 / row["tokens_per_call"])

    def header(self, config: dict) -> str:
        return f"{config['tokens']} tokens per call, H={config['heads']}, d={config['head_dim']}, n={config['memory']};"

    def notes(self, config: dict, rows: List[dict]) -> List[str]:
        return ["- x sdpa speed = sdpa time / method time (above 1: faster); x sdpa memory = method peak / sdpa peak."]

    def targets(self, rows: List[dict], config: dict) -> List[dict]:
        by_case = {(row["method"], row["N"]): row for row in rows}
        return check_gpu_targets(by_case) if config["device"].startswith("cuda") else check_targets(by_case)


SUITE = AttentionSuite()
