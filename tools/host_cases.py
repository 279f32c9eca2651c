"""The calls ``python -m tools.host_time`` times: each op on the Triton path on small CPU tensors
(forward + backward where it trains), a greedy decoding step of ``benchmarks decode``'s model with
ABC and with softmax attention, and two rows for scale (one PyTorch op; one op through autograd).
Each ``Case.build(width, tokens, dtype)`` returns the call, ready to repeat."""

from typing import Callable, List, NamedTuple

import torch


class Case(NamedTuple):
    name: str
    what: str
    build: Callable  # (width, tokens, dtype) -> the call to time


def _leaves(width: int, tokens: int, dtype, count: int = 4, batch: int = 1, heads: int = 4) -> List[torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(batch, heads, tokens, width, generator=generator).to(dtype).requires_grad_()
            for _ in range(count)]


def _forward_backward(forward: Callable[[], torch.Tensor], leaves: List[torch.Tensor]) -> Callable[[], None]:
    grad = torch.ones_like(leaves[0])

    def call() -> None:
        torch.autograd.grad(forward(), leaves, grad)
    return call


def causal_abc_case(width, tokens, dtype):
    from abc_fairseq.ops import causal_abc

    q, k, v, logits = leaves = _leaves(width, tokens, dtype)
    return _forward_backward(lambda: causal_abc(q, k, v, logits, backend="triton"), leaves)


def causal_gsa_case(width, tokens, dtype):
    from abc_fairseq.ops.gsa import causal_gsa

    q, k, v, gates = leaves = _leaves(width, tokens, dtype)
    with torch.no_grad():
        gates.copy_(torch.nn.functional.logsigmoid(gates.float()))
    return _forward_backward(lambda: causal_gsa(q, k, v, gates, backend="triton"), leaves)


def bidirectional_case(width, tokens, dtype):
    from abc_fairseq.ops import abc

    q, k, v, logits = leaves = _leaves(width, tokens, dtype)
    return _forward_backward(lambda: abc(q, k, v, logits, backend="triton"), leaves)


def _token(width, dtype):
    return [x.detach()[:, :, :1].contiguous() for x in _leaves(width, 1, dtype)]


def abc_step_case(width, tokens, dtype):
    from abc_fairseq.ops import causal_abc_step

    q, k, v, logits = _token(width, dtype)
    state = causal_abc_step(q, k, v, logits, None, backend="torch", in_place=True)[1]
    return lambda: causal_abc_step(q, k, v, logits, state, backend="triton", in_place=True)


def gsa_step_case(width, tokens, dtype):
    from abc_fairseq.ops.gsa import causal_gsa_step

    q, k, v, gates = _token(width, dtype)
    gates = torch.nn.functional.logsigmoid(gates.float()).to(dtype)
    state = causal_gsa_step(q, k, v, gates, None, backend="torch", in_place=True)[1]
    return lambda: causal_gsa_step(q, k, v, gates, state, backend="triton", in_place=True)


def read_case(width, tokens, dtype):
    from abc_fairseq.ops import abc_memory, abc_read

    q = _token(width, dtype)[0]
    _, k, v, logits = _leaves(width, tokens, dtype)
    key_memory, value_memory = abc_memory(k.detach(), v.detach(), logits.detach(), backend="torch")
    return lambda: abc_read(q, key_memory, value_memory, backend="triton")


def _decoder_step(method: str, dtype):
    """One greedy step of ``benchmarks decode``'s translation model (6 decoder layers, 8 heads;
    ABC: 32 cross and 8 causal slots) at toy widths (embedding 64, vocabulary 64: the host work
    does not depend on them), batch 16, at step 8 of an incremental state, in ``dtype``."""
    from benchmarks.decode import build_translation_model, sizes_of

    config = dict(cross_memory=32, causal_memory=8, rfa_memory=(256, 128), t2r_memory=(32, 4))
    params = dict(vocab=64, encoder_layers=1, decoder_layers=6, embed_dim=64, heads=8, ffn_dim=128, method=method,
                  length=16, batch=16, sizes=sizes_of(config))
    torch.manual_seed(0)
    model, dictionary = build_translation_model(params)
    model = model.to(dtype)
    src = torch.randint(dictionary.nspecial, len(dictionary), (16, 16))
    src[:, -1] = dictionary.eos()
    with torch.inference_mode():
        encoder_out = model.encoder(src, src_lengths=torch.full((16,), 16, dtype=torch.long))
    tokens = torch.full((16, 10), dictionary.eos(), dtype=torch.long)
    state: dict = {}

    def step(t: int) -> None:
        with torch.inference_mode():
            logits, _ = model.decoder(tokens[:, : t + 1], encoder_out=encoder_out, incremental_state=state)
            scores = logits[:, -1]
            scores[:, dictionary.pad()] = float("-inf")
            tokens[:, t + 1] = scores.argmax(dim=-1)

    for t in range(8):
        step(t)
    snapshot = {key: dict(buffer) for key, buffer in state.items()}

    def call() -> None:  # step 8 again from the same state (softmax's cache does not grow)
        state.clear()
        state.update({key: dict(buffer) for key, buffer in snapshot.items()})
        step(8)
    return call


# The decoder steps run in fp32 whatever the dtype: CPU kernels of fp16 matmuls are slow emulations
# that would weigh on softmax's bmm over its cache, not host work a GPU would see.
def abc_decoder_case(width, tokens, dtype):
    return _decoder_step("abc", torch.float32)


def softmax_decoder_case(width, tokens, dtype):
    return _decoder_step("softmax", torch.float32)


def torch_op_case(width, tokens, dtype):
    x = _leaves(width, tokens, dtype, count=1)[0].detach()
    return lambda: torch.add(x, x)


def autograd_floor_case(width, tokens, dtype):
    x = _leaves(width, tokens, dtype, count=1)
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
    Case("one PyTorch op", "torch.add on the same CPU (scale)", torch_op_case),
    Case("autograd floor", "one PyTorch op forward + backward (scale)", autograd_floor_case),
)
