"""A compiled kernel's SASS, counted: disassembly (the ``nvdisasm`` in Triton's wheel), instruction
counts by class, tensor-core products by shape and operand type, and occupancy (programs per SM).

Counts are static: each instruction of the binary once, whatever its loop trip count.
"""

import os
import re
import subprocess
import tempfile
from collections import Counter
from typing import Dict, NamedTuple

# "/*0ab0*/   @!P0 HMMA.16816.F32.BF16 R4, ..." -> the opcode with its modifiers (HGMMA's shape is
# lower case: "HGMMA.64x64x16.F32.BF16").
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)")

# Instruction classes the report counts: class -> opcode base names it takes (the first dotted
# part). LDSM / STSM (ldmatrix / stmatrix) and LDGSTS (cp.async, global to shared) apart from the
# plain shared-memory and global loads and stores.
CLASSES = {
    "LDG": ("LDG",), "STG": ("STG",), "LDS": ("LDS",), "STS": ("STS",), "LDSM": ("LDSM",),
    "STSM": ("STSM",), "LDGSTS": ("LDGSTS",), "LDL": ("LDL",), "STL": ("STL",), "MUFU": ("MUFU",),
    "BAR": ("BAR",), "TMA": ("UTMALDG", "UTMASTG", "UBLKCP"), "ATOM": ("ATOM", "ATOMG", "RED", "REDG"),
}
TENSOR_CORE = ("HMMA", "HGMMA", "IMMA", "DMMA")
IDLE = ("NOP",)


class Limits(NamedTuple):
    """One architecture's per-SM limits (CUDA C++ Programming Guide, "Technical Specifications per
    Compute Capability"; allocation units from CUDA's occupancy calculator)."""

    blocks: int  # resident blocks per SM
    warps: int  # resident warps per SM
    registers: int  # 32-bit registers per SM
    shared_sm: int  # shared memory per SM (bytes)
    shared_block: int  # shared memory per block, opt-in maximum (bytes)
    register_unit: int = 256  # registers are allocated per warp in units of 256
    shared_unit: int = 128  # shared memory is allocated per block in units of 128 bytes
    shared_reserved: int = 1024  # the runtime reserves 1 KB of shared memory per block


LIMITS = {
    80: Limits(blocks=32, warps=64, registers=65536, shared_sm=167936, shared_block=166912),  # A100
    86: Limits(blocks=16, warps=48, registers=65536, shared_sm=102400, shared_block=101376),  # RTX 30, A10
    89: Limits(blocks=24, warps=48, registers=65536, shared_sm=102400, shared_block=101376),  # RTX 40, L4
    90: Limits(blocks=32, warps=64, registers=65536, shared_sm=233472, shared_block=232448),  # H100, H200
}


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def occupancy(arch: int, registers: int, shared: int, warps: int) -> Dict:
    """Programs (blocks) resident per SM on sm_``arch`` for a kernel of ``registers`` per thread,
    ``shared`` bytes of shared memory per block and ``warps`` per block: the least of the bounds
    from blocks, warps, registers and shared memory, and which one binds (0: it cannot launch)."""
    lim = LIMITS[arch]
    per_warp = _round_up(max(registers, 1) * 32, lim.register_unit)
    bounds = {"blocks": lim.blocks, "warps": lim.warps // warps,
              "registers": (lim.registers // per_warp) // warps,
              "shared": (0 if shared > lim.shared_block else
                         lim.shared_sm // _round_up(shared + lim.shared_reserved, lim.shared_unit))}
    programs = min(bounds.values())
    return dict(programs_per_sm=programs, limited_by=min(bounds, key=bounds.get),
                warps_per_sm=programs * warps)


def disassemble(cubin: bytes) -> str:
    """The SASS of ``cubin`` from the nvdisasm Triton ships (runs without a GPU)."""
    import triton

    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        done = subprocess.run([tool, "-c", path], capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"nvdisasm failed ({done.returncode}): {done.stderr[-500:]}")
    return done.stdout


def opcodes(sass: str) -> Counter:
    """Full opcode (with modifiers) -> how many instructions of the listing carry it."""
    found = Counter()
    for line in sass.splitlines():
        match = _INSTRUCTION.match(line)
        if match:
            found[match.group(1)] += 1
    return found


def mma_operand(opcode: str) -> str:
    """The operand type of a tensor-core opcode: "TF32", "BF16", "F16" (no suffix after the
    accumulator: HMMA.16816.F32 and HMMA.16816.F16 take fp16), or the suffix as written
    (integer and fp8 types)."""
    parts = opcode.split(".")
    last = parts[-1]
    if len(parts) <= 3 and last in ("F32", "F16"):
        return "F16"
    return last


def count(sass: str) -> Dict:
    """The report's figures of one kernel's SASS: instructions (NOP padding excluded), each class
    of ``CLASSES``, tensor-core instructions by full opcode and by operand type, and the TF32
    share of them."""
    ops = opcodes(sass)
    base = Counter()
    for opcode, n in ops.items():
        base[opcode.split(".")[0]] += n
    classes = {name: sum(base[b] for b in bases) for name, bases in CLASSES.items()}
    mma = {op: n for op, n in sorted(ops.items()) if op.split(".")[0] in TENSOR_CORE}
    by_operand = Counter()
    for op, n in mma.items():
        by_operand[mma_operand(op)] += n
    total_mma = sum(mma.values())
    return dict(instructions=sum(n for op, n in base.items() if op not in IDLE), **classes, mma=mma,
                mma_total=total_mma, mma_by_operand=dict(sorted(by_operand.items())),
                tf32_share=round(by_operand["TF32"] / total_mma, 3) if total_mma else None)
