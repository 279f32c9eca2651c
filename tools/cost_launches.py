"""The launches of every timed call the cost model (``tools.cost_model``) describes: the timing
harnesses' own ops, ours on the Triton kernels (``tools.causal_cost``), torch's flash attention,
fla's ``chunk_abc``, and a greedy decoding step (its PyTorch ops counted on CPU by ``decode_ops``).
"""

import math
from typing import List, Optional, Sequence, Tuple

from . import causal_cost
from .causal_cost import F, Launch
from .cost_terms import FLA_BC, FLA_BT, H100, Cost

# ---- the timing harnesses' own ops (they are inside every timed call) ----

def harness_launches(harness: str, out_elems: int, P: int, leaves: Sequence[int]) -> List[Launch]:
    """``selfcheck``: out.backward(ones_like(out)), gradients accumulated into the leaves (one add
    each; ``leaves``: bytes of each leaf); ``attention`` (``benchmarks attention``): loss =
    sum(out * weight), autograd.grad (the multiply, the sum, and the multiply's backward)."""
    if harness == "selfcheck":
        return [Launch("harness: ones_like", 1, 0, 0, 0, out_elems * P, "torch"),
                Launch("harness: grad accumulation", len(leaves), 0, 0, 0, 3 * sum(leaves), "torch")]
    if harness == "attention":
        return [Launch("harness: sum(out * weight) and its backward", 3, 0, 0, 0, 6 * out_elems * P, "torch")]
    raise ValueError(f"unknown harness {harness!r}")


def ours(Z: int, N: int, d: int, n: int, C: int, P: int, harness: str, logit_bytes: Optional[int] = None,
         split_columns: bool = True, normaliser: str = "chunked", grouped_scan: bool = True) -> Cost:
    """Causal ABC on the Triton kernels (``tools.causal_cost``) inside ``harness``; dv = d.
    ``normaliser``: "chunked" (the current default) or "logcumsumexp" (the previous PyTorch scan);
    the code the H100 run timed is ``normaliser="logcumsumexp", split_columns=False, grouped_scan=False``."""
    L = P if logit_bytes is None else logit_bytes
    launches = causal_cost.causal_launches(Z, N, d, d, n, C, P, logit_bytes=L, split_columns=split_columns,
                                           normaliser=normaliser, grouped_scan=grouped_scan)
    leaves = [Z * N * d * P] * 3 + [Z * N * n * L]
    return Cost(launches + harness_launches(harness, Z * N * d, P, leaves))


def two_launch_floor(Z: int, N: int, d: int, n: int, P: int, harness: str) -> Cost:
    """The least any causal ABC design with one Triton launch forward and one backward (autograd
    calls them apart) can cost in the model: each launch moves only what it must (forward: q, k,
    v, logits in, out; backward: those and dO in, their four gradients out), no PyTorch op of its
    own, products free, inside ``harness``; dv = d."""
    rows, inputs = Z * N, (3 * d + n) * P
    return Cost([Launch("one forward launch", 1, Z, 1, 0, rows * (inputs + d * P)),
                 Launch("one backward launch", 1, Z, 1, 0, rows * (2 * inputs + d * P))]
                + harness_launches(harness, rows * d, P, []))


def flash_launches(Z: int, N: int, d: int, P: int) -> Tuple[List[Launch], float]:
    """torch's flash attention 2, causal, forward + backward: (launches, FLOPs). FLOPs: 7 N d per
    token and head (forward 2 N d, backward 5 N d: causal halves of 4 and 10). Two PyTorch ops:
    the forward, and the backward (its dq accumulator fill, do . o, main kernel and dq conversion).
    Bytes: q, k, v, o, do, dq, dk, dv once each, the log-sum-exp and do . o rows, the fp32 dq
    accumulator written and read (k, v re-read per query block hit the L2: not counted)."""
    rows = Z * N
    launches = [Launch("flash forward", 1, 0, 0, 0, rows * (4 * d * P + F), "torch"),
                Launch("flash backward", 1, 0, 0, 0, rows * (8 * d * P + 3 * F + 2 * d * F), "torch")]
    return launches, 7.0 * N * d * rows


def flash(Z: int, N: int, d: int, P: int, harness: str) -> Cost:
    launches, flops = flash_launches(Z, N, d, P)
    return Cost(launches + harness_launches(harness, Z * N * d, P, [Z * N * d * P] * 3), flops)


def fla_launches(Z: int, T: int, K: int, V: int, M: int, P: int) -> List[Launch]:
    """fla-core 0.6.0 ``chunk_abc`` forward + backward called with its documented layout
    [B, T, H, *] (Z = B * H sequence-heads of T tokens, K = V = M <= 64 per tile), read from its
    ``ops/abc/chunk.py``: chunk BT = 64, sub-chunk 16, ``num_stages=1``. Six loops over the
    chunks (T / 64 dependent steps, one program per sequence-head and 64-wide tile): the
    key and value chunk states forward (``fwd_kernel_h``), their gradients (``bwd_kernel_dh``),
    ``rcum_inter`` and the slot normaliser's ``logcumsumexp_fwd_kernel`` (autotuned block: 64
    rows assumed). Chunk states are stored per chunk in the inputs' dtype; the slot scores,
    softmax and gradients as its code allocates them. Bytes: each tensor read or written once
    per launch that takes it; products: the chunk-level ones, at half-precision rates.
    The transposes to [B, H, T, *] cost a copy of q, k, v, s and of the output gradient."""
    BT, BC = FLA_BT, FLA_BC
    NT, NC = math.ceil(T / BT), BT // BC
    NK, NV, NM = (math.ceil(w / 64) for w in (K, V, M))
    rows, chunks = Z * T, Z * NT
    q = k = K * P
    v, s, do, dq, dk, dv = V * P, M * P, V * P, K * P, K * P, V * P
    z = p = dp = dsv = dsk = ds = M * F
    ok = qv = dok = doo = M * P
    A = BT * P  # the intra-chunk score rows Ak, Av and their gradients
    hk, hv = K * M * P, M * V * P  # a chunk state (and its gradient)

    def kernel(name, programs, macs_per_row, bytes_, steps=1):
        return Launch(name, 1, programs, steps, rows * macs_per_row, bytes_)

    def glue(name, launches, bytes_):
        return Launch(f"PyTorch: {name}", launches, 0, 0, 0, bytes_, "torch")

    return [
        glue("transposes to [B, H, T, *]", 4, 2 * rows * (q + k + v + s)),
        kernel("logcumsumexp_fwd_kernel", Z, 0, rows * (s + z), steps=math.ceil(T / 64)),
        kernel("fwd_kernel_h (keys)", Z * NK * NM, K * M, rows * (k + s + z) + chunks * hk, steps=NT),
        kernel("fwd_kernel_K", Z * NM * NT, K * M + BT * K, rows * (q + k + z + ok + A) + chunks * hk),
        kernel("fwd_kernel_intra_K", Z * NM * NT * NC, BT * M / 2, rows * (s + z + A + ok)),
        glue("ok0 + ok1", 1, rows * 3 * ok),
        kernel("softmax_fwd", rows, 0, rows * (ok + p)),
        glue("p.to(dtype)", 1, rows * (p + qv)),
        kernel("fwd_kernel_h (values)", Z * NV * NM, M * V, rows * (s + v + z) + chunks * hv, steps=NT),
        glue("Av zeros, Av.sum(0)", 2, rows * A * (2 * NM + 1)),
        kernel("fwd_kernel_intra_V", Z * NM * NT * NC * NC, BT * M / 2, rows * (qv + s + z + NM * A)),
        kernel("fwd_kernel_V", Z * NV * NT, M * V + BT * V, rows * (qv + v + z + A + v) + chunks * hv),
        glue("do contiguous, p.to(dtype)", 2, rows * (2 * do + p + qv)),
        kernel("bwd_kernel_dh (values)", Z * NM * NV, M * V, rows * (qv + z + do) + chunks * hv, steps=NT),
        glue("dAv, dsv0 zeros", 2, rows * (A + dsv)),
        kernel("bwd_kernel_V", Z * NM * NT, 2 * M * V + BT * V + BT * M,
               rows * (s + v + z + A + do + dp + dsv + NM * dv + A) + chunks * 2 * hv),
        glue("dv.sum(0)", 1, rows * dv * (NM + 1)),
        kernel("bwd_kernel_intra_V", Z * NM * NT * NC, BT * M, rows * (qv + s + z + A + dp + dsv)),
        glue("dp, dsv adds", 2, rows * 3 * (dp + dsv)),
        kernel("softmax_bwd", rows, 0, rows * (p + dp + dok)),
        kernel("bwd_kernel_dh (keys)", Z * NK * NM, K * M, rows * (q + z + dok) + chunks * hk, steps=NT),
        glue("dAk zeros, dAk.sum(0), Ak zeros", 3, rows * A * (2 * NM + 1 + NK)),
        kernel("bwd_kernel_intra_K", Z * NM * NT * NC * NC, BT * M / 2, rows * (s + z + dok + NM * A)),
        kernel("bwd_kernel_K", Z * NK * NT, 2 * K * M + 2 * BT * K + BT * M,
               rows * (q + k + s + z + A + dok + dq + dk + NK * (dsk + A)) + chunks * 2 * hk),
        glue("Ak.sum(0), dsk1.sum(0)", 2, rows * (A + dsk) * (NK + 1)),
        kernel("bwd_kernel_intra_KV", Z * NM * NT * NC, BT * M / 2, rows * (s + z + A + dok + dsk)),
        glue("ds sums, ok * dok + p * dp", 5, rows * (3 * dsk + 3 * dsv + 3 * ok + 6 * p)),
        kernel("bwd_kernel_rcum_inter", Z * NM, 0, rows * (s + z + p + doo), steps=NT),
        kernel("bwd_kernel_rcum_intra", Z * NM * NT * NC, BT * M / 2, rows * (s + z + p + doo)),
        glue("ds -= doo, ds.to(dtype)", 2, rows * (3 * ds + doo + ds + s)),
    ]


def fla(B: int, T: int, H: int, d: int, n: int, P: int, harness: str, leaf_bytes: Optional[List[int]] = None) -> Cost:
    """fla's chunk_abc on [B, T, H, *] inputs inside ``harness`` (half-precision products)."""
    Z = B * H
    leaves = leaf_bytes if leaf_bytes is not None else [Z * T * d * P] * 3 + [Z * T * n * P]
    return Cost(fla_launches(Z, T, d, d, n, P) + harness_launches(harness, Z * T * d, P, leaves),
                mac_rate=H100["macs_half"])


# ---- greedy decoding (``benchmarks decode``): a step is one PyTorch op after another ----

def decode_ops(method: str, config: dict) -> Tuple[int, int]:
    """(PyTorch ops, Triton launches) of one greedy decoding step of ``benchmarks decode``'s model
    with the saved ``config``'s layers, heads and memories, counted on CPU in fp16 at toy widths
    (the count does not depend on them), at a steady step (the fourth). An aten op counts when it
    writes a new or in-place tensor or reads a value back to the host. What runs on the kernels on
    CUDA counts as one Triton launch in place of its PyTorch ops: ABC's ``causal_abc_step`` (the
    fused step) and ``abc_read`` (the cross-attention read of the cached memory)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    from abc_fairseq.ops.bidirectional import op as bidirectional_op
    from abc_fairseq.ops.causal import op as causal_op
    from benchmarks.decode import build_translation_model, greedy_step, sizes_of

    class Counter(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops, self.triton, self.paused = 0, 0, False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            name = func.overloadpacket.__name__
            if self.paused or name.startswith(("empty", "new_empty", "_shape_as_tensor", "lift_fresh")):
                return out
            inputs = {x.untyped_storage().data_ptr() for x in tree_leaves((args, kwargs))
                      if isinstance(x, torch.Tensor)}
            new = any(x.untyped_storage().data_ptr() not in inputs for x in tree_leaves(out)
                      if isinstance(x, torch.Tensor))
            if new or name.endswith("_") or name in ("_local_scalar_dense", "item", "is_nonzero"):
                self.ops += 1
            return out

    counter = Counter()
    # the PyTorch forms the ops call on CPU, whose CUDA forms are one Triton launch each
    on_kernels = [(causal_op, "recurrent_causal_abc_step"), (bidirectional_op, "parallel_abc_read")]
    torch_forms = [getattr(module, name) for module, name in on_kernels]

    def one_launch(torch_form):
        def launch(*args, **kwargs):
            counter.paused, counter.triton = True, counter.triton + 1
            try:
                return torch_form(*args, **kwargs)
            finally:
                counter.paused = False
        return launch

    params = dict(vocab=64, encoder_layers=1, decoder_layers=config["decoder_layers"], embed_dim=8 * config["heads"],
                  heads=config["heads"], ffn_dim=16 * config["heads"], method=method, length=16, batch=2,
                  sizes=sizes_of(config))
    torch.manual_seed(0)
    model, dictionary = build_translation_model(params)
    model = model.to(torch.float16)
    src = torch.randint(dictionary.nspecial, len(dictionary), (2, 16))
    src[:, -1] = dictionary.eos()
    for (module, name), torch_form in zip(on_kernels, torch_forms):
        setattr(module, name, one_launch(torch_form))
    try:
        with torch.inference_mode():
            encoder_out = model.encoder(src, src_lengths=torch.full((2,), 16, dtype=torch.long))
            tokens, state = torch.full((2, 6), dictionary.eos(), dtype=torch.long), {}
            for t in range(4):
                counter.ops = counter.triton = 0
                with counter:
                    greedy_step(model, tokens, t, encoder_out, state, dictionary.pad())
    finally:
        for (module, name), torch_form in zip(on_kernels, torch_forms):
            setattr(module, name, torch_form)
    return counter.ops, counter.triton


def decode_step(method: str, config: dict, result: dict, ops: Tuple[int, int]) -> Cost:
    """One decoding step (no per-call constant): ``ops`` = (PyTorch ops, Triton launches) and the
    bytes it reads: the decoder's weights (each layer 8 E^2 + 2 E F, the output projection V E) and
    the state (``result["state_bytes"]`` after the last step: softmax reads the cross-attention
    cache and, on average, half its final self-attention cache; ABC reads its state and writes
    a new self-attention state)."""
    E, FF, P = config["embed_dim"], config["ffn_dim"], dtype_bytes(config["dtype"])
    weights = P * (config["decoder_layers"] * (8 * E * E + 2 * E * FF) + config["vocab"] * E)
    state = result["state_bytes"]
    state_read = state["cross"] + (state["self"] / 2 if method == "softmax" else 2 * state["self"])
    return Cost([Launch("decode: PyTorch ops", ops[0], 0, 0, 0, weights + state_read, "torch"),
                 Launch("decode: Triton launches", ops[1], 0, 0, 0, 0)], calls=0.0)



def dtype_bytes(dtype: str) -> int:
    return {"float16": 2, "bfloat16": 2, "float32": 4}[dtype]
