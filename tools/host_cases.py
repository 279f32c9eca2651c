"""The calls ``python -m tools.host_time`` times: each op on the Triton path (forward + backward
where it trains), a greedy decoding step of ``benchmarks decode``'s model with ABC and with softmax
attention, and two rows for scale (one PyTorch op; one op through autograd). Each
``Case.build(problem)`` returns the call, ready to repeat, on the problem's device."""

from typing import Callable, List, NamedTuple

import torch


class Problem(NamedTuple):
    width: int  # d = n = dv
    tokens: int
    dtype: torch.dtype
    device: torch.device


class Case(NamedTuple):
    name: str
    what: str
    build: Callable[[Problem], Callable[[], object]]


def _leaves(p: Problem, count: int = 4, tokens: int = 0, batch: int = 1, heads: int = 4) -> List[torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    shape = (batch, heads, tokens or p.tokens, p.width)
    return [torch.randn(shape, generator=generator).to(p.device, p.dtype).requires_grad_() for _ in range(count)]


def _forward_backward(forward: Callable[[], torch.Tensor], leaves: List[torch.Tensor]) -> Callable[[], None]:
    grad = torch.ones_like(leaves[0])

    def call() -> None:
        torch.autograd.grad(forward(), leaves, grad)
    return call


def causal_abc_case(p: Problem):
    from abc_fairseq.ops import causal_abc

    q, k, v, logits = leaves = _leaves(p)
    return _forward_backward(lambda: causal_abc(q, k, v, logits, backend="triton"), leaves)


def causal_gsa_case(p: Problem):
    from abc_fairseq.ops.gsa import causal_gsa

    q, k, v, gates = leaves = _leaves(p)
    with torch.no_grad():
        gates.copy_(torch.nn.functional.logsigmoid(gates.float()))
    return _forward_backward(lambda: causal_gsa(q, k, v, gates, backend="triton"), leaves)


def bidirectional_case(p: Problem):
    from abc_fairseq.ops import abc

    q, k, v, logits = leaves = _leaves(p)
    return _forward_backward(lambda: abc(q, k, v, logits, backend="triton"), leaves)


def _token(p: Problem) -> List[torch.Tensor]:
    return [x.detach() for x in _leaves(p, tokens=1)]


def abc_step_case(p: Problem):
    from abc_fairseq.ops import causal_abc_step

    q, k, v, logits = _token(p)
    state = causal_abc_step(q, k, v, logits, None, backend="torch", in_place=True)[1]
    return lambda: causal_abc_step(q, k, v, logits, state, backend="triton", in_place=True)


def gsa_step_case(p: Problem):
    from abc_fairseq.ops.gsa import causal_gsa_step

    q, k, v, gates = _token(p)
    gates = torch.nn.functional.logsigmoid(gates.float()).to(p.dtype)
    state = causal_gsa_step(q, k, v, gates, None, backend="torch", in_place=True)[1]
    return lambda: causal_gsa_step(q, k, v, gates, state, backend="triton", in_place=True)


def read_case(p: Problem):
    from abc_fairseq.ops import abc_memory, abc_read

    q = _token(p)[0]
    _, k, v, logits = (x.detach() for x in _leaves(p))
    key_memory, value_memory = abc_memory(k, v, logits, backend="torch")
    return lambda: abc_read(q, key_memory, value_memory, backend="triton")


def _decoder_step(method: str, p: Problem):
    """One greedy step of ``benchmarks decode``'s translation model (6 decoder layers, 8 heads;
    ABC: 32 cross and 8 causal slots) at toy widths (embedding 64, vocabulary 64: the host work
    does not depend on them), batch 16, at step 8 of an incremental state. On CPU in fp32
    whatever the dtype: CPU kernels of fp16 matmuls are slow emulations that would weigh on
    softmax's reads of its cache, not host work a GPU would see."""
    from benchmarks.decode import build_translation_model, greedy_step, sizes_of

    config = dict(cross_memory=32, causal_memory=8, rfa_memory=(256, 128), t2r_memory=(32, 4))
    params = dict(vocab=64, encoder_layers=1, decoder_layers=6, embed_dim=64, heads=8, ffn_dim=128, method=method,
                  length=16, batch=16, sizes=sizes_of(config))
    torch.manual_seed(0)
    model, dictionary = build_translation_model(params)
    model = model.to(p.device, torch.float32 if p.device.type == "cpu" else p.dtype)
    src = torch.randint(dictionary.nspecial, len(dictionary), (16, 16), device=p.device)
    src[:, -1] = dictionary.eos()
    with torch.inference_mode():
        encoder_out = model.encoder(src, src_lengths=torch.full((16,), 16, dtype=torch.long, device=p.device))
    tokens = torch.full((16, 10), dictionary.eos(), dtype=torch.long, device=p.device)
    state: dict = {}

    def step(t: int) -> None:
        with torch.inference_mode():
            greedy_step(model, tokens, t, encoder_out, state, dictionary.pad())

    for t in range(8):
        step(t)
    snapshot = {key: dict(buffer) for key, buffer in state.items()}

    def call() -> None:  # step 8 again from the same state (softmax's cache does not grow)
        state.clear()
        state.update({key: dict(buffer) for key, buffer in snapshot.items()})
        step(8)
    return call


def abc_decoder_case(p: Problem):
    return _decoder_step("abc", p)


def softmax_decoder_case(p: Problem):
    return _decoder_step("softmax", p)


def torch_op_case(p: Problem):
    x = _leaves(p, count=1)[0].detach()
    return lambda: torch.add(x, x)


def autograd_floor_case(p: Problem):
    x = _leaves(p, count=1)
    return _forward_backward(lambda: x[0] * 2.0, x)


CASES = (
    Case("causal_abc", "forward + backward (training)", causal_abc_case),
    Case("causal_gsa", "forward + backward (training)", causal_gsa_case),
    Case("abc", "bidirectional forward + backward (encoder)", bidirectional_case),
    Case("causal_abc_step", "one decoding step, in place", abc_step_case),
    Case("causal_gsa_step", "one decoding step, in place", gsa_step_case),
    Case("abc_read", "one query reading a cached memory (decoding's cross attention)", read_case),
    Case("decoder step, abc", "a greedy step of 6 ABC decoder layers (benchmarks decode's model)",
         abc_decoder_case),
    Case("decoder step, softmax", "the same step of fairseq's transformer decoder", softmax_decoder_case),
    Case("one PyTorch op", "torch.add on the same device (scale)", torch_op_case),
    Case("autograd floor", "one PyTorch op forward + backward (scale)", autograd_floor_case),
)
