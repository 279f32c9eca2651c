"""The Triton launches an op makes, captured on CPU tensors without running a kernel: what
``python -m tools.kernel_report`` compiles.

An op's forward and backward run on small CPU tensors with Triton's launch replaced by a recorder:
every ``kernel[grid](...)`` is kept with its arguments and options (the launchers' own tiles, warps
and stages), and its outputs stay uninitialised (PyTorch code between launches still runs, on
whatever they hold). A recorded launch is bound per architecture by Triton's own binder
(``Launch.bind``): the signature, constexprs and specialisation Triton would compile on a GPU.

- Autotuned kernels (fla's): every config the autotuner would time is recorded (``config`` i of n).
- The bidirectional launchers' ``launch_rows`` (rows block BT and pipelining depth, the first pair
  the device accepts): every pair is recorded in the launcher's order (``alternatives``); the
  report compiles them in that order and keeps the first that fits the architecture's shared memory.
"""

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.util
import sys
import types
import warnings
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import torch

# Problem size of the capture: B = H = 2 and N = 256 keep Triton's integer specialisation (values
# of 1 become constants, multiples of 16 are marked divisible) what a real batch gets.
BATCH, HEADS, TOKENS = 2, 2, 256
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
DROPOUT = 0.1  # the launches take their costlier path: attention dropout on, padding present


class Launch(NamedTuple):
    """One recorded launch: the JIT function, its positional and keyword arguments, which config
    of an autotuned kernel it is (``config``: (i, n), or None) and the launcher's alternatives
    (list of option dicts tried in order) or None."""

    fn: object
    args: tuple
    kwargs: Dict
    config: Optional[Tuple[int, int]] = None
    alternatives: Optional[List[Dict]] = None

    @property
    def name(self) -> str:
        return self.fn.fn.__name__

    def bind(self, arch: int, extra: Optional[Dict] = None):
        """(signature, constexprs, attrs, options dict) Triton compiles this launch with on
        sm_``arch`` (``extra``: options that replace the recorded ones, e.g. one alternative)."""
        from triton.backends.compiler import GPUTarget
        from triton.compiler import make_backend
        from triton.runtime.jit import create_function_from_signature

        backend = make_backend(GPUTarget("cuda", arch, 32))
        binder = create_function_from_signature(self.fn.signature, self.fn.params, backend)
        kwargs = dict(self.kwargs, **(extra or {}))
        kwargs.setdefault("debug", False)
        bound, specialization, options = binder(*self.args, **kwargs)
        options, signature, constexprs, attrs = self.fn._pack_args(backend, kwargs, bound, specialization, options)
        return signature, constexprs, attrs, dict(options.__dict__)


@contextlib.contextmanager
def recording(launches: List[Launch]):
    """Within: Triton launches are recorded into ``launches`` instead of run."""
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    from abc_fairseq.ops.bidirectional.triton import function as bidirectional
    from abc_fairseq.ops.triton import sizes

    config = [None]

    def run(self, *args, grid, warmup, **kwargs):
        launches.append(Launch(self, args, kwargs, config[0]))

    def tune(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        configs = self.prune_configs(kwargs) if len(self.configs) > 1 else self.configs
        for i, c in enumerate(configs):
            config[0] = (i, len(configs))
            self.fn.run(*args, **kwargs, **c.all_kwargs())
        config[0] = None

    def launch_rows(kernel, grid, args, rows, device, **tiles):
        options = [dict(BT=bt, num_stages=stages) for bt in rows for stages in sizes.PIPELINE_STAGES]
        launches.append(Launch(kernel, tuple(args), dict(tiles, **options[0]), None, options))
        return rows[0]

    saved = JITFunction.run, Autotuner.run, bidirectional.launch_rows
    JITFunction.run, Autotuner.run, bidirectional.launch_rows = run, tune, launch_rows
    try:
        yield launches
    finally:
        JITFunction.run, Autotuner.run, bidirectional.launch_rows = saved


def _inputs(dtype: torch.dtype, width: int, layout: str, *names: str) -> List[torch.Tensor]:
    """Random leaf tensors [B, H, N, width] (layout "bhn") or [B, N, H, width] ("bnh")."""
    shape = (BATCH, HEADS, TOKENS, width) if layout == "bhn" else (BATCH, TOKENS, HEADS, width)
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(shape, generator=generator).to(dtype).requires_grad_() for _ in names]


def _backward(out: torch.Tensor) -> None:
    out.float().sum().backward()


def _keep(width: int) -> torch.Tensor:
    return torch.rand(BATCH, HEADS, TOKENS, width, generator=torch.Generator().manual_seed(1)) >= DROPOUT


def causal_abc(dtype, width, chunk):
    from abc_fairseq.ops.causal.triton.function import triton_causal_abc

    q, k, v, logits = _inputs(dtype, width, "bhn", "q", "k", "v", "logits")
    _backward(triton_causal_abc(q, k, v, logits, width ** -0.5, chunk, None, False, _keep(width),
                                1.0 / (1.0 - DROPOUT), state_dtype=torch.float32))


def causal_gsa(dtype, width, chunk):
    from abc_fairseq.ops.gsa.triton.function import triton_causal_gsa

    q, k, v, gates = _inputs(dtype, width, "bhn", "q", "k", "v", "gates")
    log_gates = torch.nn.functional.logsigmoid(gates.detach().float()).to(dtype).requires_grad_()
    _backward(triton_causal_gsa(q, k, v, log_gates, width ** -0.5, chunk, None, False, _keep(width),
                                1.0 / (1.0 - DROPOUT), state_dtype=torch.float32))


def bidirectional(dtype, width, chunk):
    from abc_fairseq.ops.bidirectional.triton.function import memory_read, memory_write

    q, k, v, logits = _inputs(dtype, width, "bhn", "q", "k", "v", "logits")
    padding = torch.zeros(BATCH, TOKENS, dtype=torch.bool)
    padding[0, -3:] = True
    key_memory, value_memory = memory_write(k, v, logits, padding)
    _backward(memory_read(q, key_memory, value_memory, width ** -0.5, DROPOUT, _keep(width)))


def decoding(dtype, width, chunk):
    from abc_fairseq.ops.causal.state import ABCState
    from abc_fairseq.ops.causal.triton.recurrent import causal_step

    q, k, v, logits = (x.detach()[:, :, :1] for x in _inputs(dtype, width, "bhn", "q", "k", "v", "logits"))
    state = ABCState(torch.zeros(BATCH, HEADS, width, width), torch.zeros(BATCH, HEADS, width, width),
                     torch.zeros(BATCH, HEADS, width))
    causal_step(q, k, v, logits, state, width ** -0.5)


def gsa_decoding(dtype, width, chunk):
    from abc_fairseq.ops.causal.triton.recurrent import gsa_step
    from abc_fairseq.ops.gsa.state import GSAState

    q, k, v, gates = (x.detach()[:, :, :1] for x in _inputs(dtype, width, "bhn", "q", "k", "v", "gates"))
    state = GSAState(torch.zeros(BATCH, HEADS, width, width), torch.zeros(BATCH, HEADS, width, width))
    gsa_step(q, k, v, torch.nn.functional.logsigmoid(gates.float()).to(dtype), state, width ** -0.5)


@functools.lru_cache(maxsize=1)
def import_fla(shared_memory: int):
    """fla's ops imported as on a GPU with ``shared_memory`` bytes per block: fla picks some tile
    lists at import from the device's shared memory (``check_shared_mem``), which on a CPU machine
    reads as none. fla's package ``__init__`` (which imports every op) is skipped so that the
    hardware module can be set first. Returns (chunk_abc, chunk_gsa)."""
    if "fla.ops" in sys.modules:  # imported earlier in this process, not here
        raise RuntimeError("fla's ops are already imported (with this machine's tile choices): "
                           "capture fla's launches in a fresh process")
    if "fla" not in sys.modules:
        spec = importlib.util.find_spec("fla")
        if spec is None:
            raise RuntimeError("fla (fla-core) is not installed")
        package = types.ModuleType("fla")
        package.__path__ = list(spec.submodule_search_locations)
        package.__file__ = spec.origin
        package.__version__ = importlib.metadata.version("fla-core")
        sys.modules["fla"] = package
    hardware = importlib.import_module("fla.utils.hardware")
    hardware.get_all_max_shared_mem = lambda: [shared_memory]
    hardware.check_shared_mem.cache_clear()
    from fla.ops.abc import chunk_abc
    from fla.ops.gsa import chunk_gsa

    return chunk_abc, chunk_gsa


FLA_SHARED_MEMORY = 166912  # an A100's block; fla's import-time checks read the same on an H100


def fla_chunk_abc(dtype, width, chunk):
    chunk_abc = import_fla(FLA_SHARED_MEMORY)[0]
    q, k, v, s = _inputs(dtype, width, "bnh", "q", "k", "v", "s")
    out = chunk_abc(q, k, v, s)
    _backward(out[0] if isinstance(out, tuple) else out)


def fla_chunk_gsa(dtype, width, chunk):
    chunk_gsa = import_fla(FLA_SHARED_MEMORY)[1]
    q, k, v, s, gates = _inputs(dtype, width, "bnh", "q", "k", "v", "s", "gates")
    log_gates = torch.nn.functional.logsigmoid(gates.detach().float()).to(dtype).requires_grad_()
    out = chunk_gsa(q, k, v, s, log_gates)
    _backward(out[0] if isinstance(out, tuple) else out)


# op -> (runner(dtype, width, chunk), whether the chunk is the launcher's free tile)
OPS: Dict[str, Tuple[Callable, bool]] = {
    "causal_abc": (causal_abc, True), "causal_gsa": (causal_gsa, True), "bidirectional": (bidirectional, False),
    "decoding": (decoding, False), "gsa_decoding": (gsa_decoding, False),
    "fla_chunk_abc": (fla_chunk_abc, False), "fla_chunk_gsa": (fla_chunk_gsa, False),
}


def capture(op: str, dtype: str, width: int, chunk: Optional[int] = None) -> List[Launch]:
    """The launches of ``op``'s forward and backward (decoding: one step) at d = n = dv = ``width``
    and inputs of ``dtype``, the causal ops at ``chunk`` rows per chunk."""
    runner = OPS[op][0]
    launches: List[Launch] = []
    with recording(launches), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fla warns that the machine has no GPU
        runner(DTYPES[dtype], width, chunk)
    return launches
