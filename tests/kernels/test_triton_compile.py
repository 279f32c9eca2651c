"""Every Triton kernel compiles for an H100 (sm_90) with Triton's real compiler, no GPU needed.

The interpreter tests run the kernels as NumPy and would not see what only the compiler rejects
(unsupported constructs, layouts, more shared memory than a block has). One subprocess compiles
the causal kernels (ABC's and GSA's) at small tiles and the bidirectional and step kernels at their widest (128),
where shared memory is tightest.
"""

import importlib.util
import os
import subprocess
import sys

import pytest

if importlib.util.find_spec("triton") is None:
    pytest.skip("triton is not installed", allow_module_level=True)

COMPILE_CHECK = """
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from abc_fairseq.ops.bidirectional.triton import memory as memory_kernels, read as read_kernels
from abc_fairseq.ops.causal.triton import (backward as causal_backward, forward as causal_forward,
                                          recurrent as step_kernel, scan as causal_scan)
from abc_fairseq.ops.gsa.triton import gates as gsa_gates

FLOATS = {"scale", "keep_scale"}
SHARED_MEMORY = 227 * 1024  # per block on an H100


def compile_for_sm90(fn, pointers, constants):
    signature = {}
    for name in fn.arg_names:
        if name in constants:
            signature[name] = "constexpr"
        elif name.endswith("_ptr"):
            signature[name] = pointers.get(name, "*fp32")
        else:
            signature[name] = "fp32" if name in FLOATS else "i32"
    constexprs = {(fn.arg_names.index(k),): v for k, v in constants.items() if k in fn.arg_names}
    kernel = triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", 90, 32))
    assert kernel.asm["ptx"] and kernel.metadata.shared < SHARED_MEMORY, (fn, kernel.metadata.shared)


# Causal kernels.
for dtype, precision in (("bf16", "tf32"), ("fp32", "ieee")):
    inputs = {name: "*" + dtype for name in ("q_ptr", "k_ptr", "v_ptr", "do_ptr", "o_ptr", "dq_ptr",
                                              "dk_ptr", "dv_ptr")}
    inputs["keep_ptr"] = "*i8"
    tiles = dict(C=16, BS=16, BK=32, BV=16, SAFE=60.0, GATED=dtype == "bf16", PREC=precision)  # GSA, ABC
    for fn in (causal_forward.chunk_sums_kernel, causal_backward.columns_kernel):
        compile_for_sm90(fn, inputs, tiles)
    for fn in (causal_forward.output_kernel, causal_backward.rows_kernel):
        compile_for_sm90(fn, inputs, dict(tiles, DROPOUT=dtype == "bf16"))
    compile_for_sm90(gsa_gates.gate_grads_kernel, {"gate_ptr": "*" + dtype}, dict(C=64, BS=64, CB=16, SPAN=4))
for reverse in (False, True):
    compile_for_sm90(causal_scan.chunk_scan_kernel, {}, dict(BLOCK=128, GROUP=8, REVERSE=reverse,
                                                       HAS_CARRY=not reverse, HAS_FINAL=not reverse,
                                                       NORMALISE=not reverse))

# Bidirectional write / read and the decoding step, at the widest tiles the launchers use (fp32
# inputs take the most shared memory).
inputs = {name: "*fp32" for name in ("q_ptr", "k_ptr", "v_ptr", "l_ptr", "out_ptr", "dk_ptr", "dv_ptr",
                                      "dl_ptr", "dq_ptr", "do_ptr")}
inputs.update(pad_ptr="*u8", keep_ptr="*u8")
wide = dict(K=128, V=128, BK=128, BV=128)
compile_for_sm90(memory_kernels.memory_write_fwd, inputs,
                 dict(wide, BT=64, BS=64, HAS_PAD=True, PREC="ieee"))
compile_for_sm90(memory_kernels.memory_write_bwd, inputs,
                 dict(wide, BT=32, BS=128, HAS_PAD=True, PREC="ieee"))
compile_for_sm90(read_kernels.memory_read_fwd, inputs,
                 dict(wide, BT=64, BS=128, HAS_DROPOUT=True, PREC="ieee"))
compile_for_sm90(read_kernels.memory_read_bwd, inputs,
                 dict(wide, BT=16, BS=128, HAS_DROPOUT=True, PREC="ieee"))
compile_for_sm90(step_kernel.causal_step_kernel, inputs, dict(wide, BS=128))
"""


@pytest.mark.slow
def test_every_kernel_compiles_for_a_gpu(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_DEFAULT_FP_FUSION="1", TRITON_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", COMPILE_CHECK], cwd=root, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
