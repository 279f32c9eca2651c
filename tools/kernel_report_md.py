"""The markdown of ``python -m tools.kernel_report``: a summary computed from the rows (TF32 share
for fp16 inputs, where registers spill, programs per SM), then one table per op."""

from collections import defaultdict
from typing import Dict, List

COUNTED = ("LDG", "STG", "LDS", "STS", "LDSM", "STSM", "LDGSTS", "LDL", "STL", "MUFU", "BAR")
TILE_NAMES = ("C", "BT", "BC", "BS", "BK", "BV", "BLOCK", "REVERSE")


# The report's ops, in the order its tables list them (tools.kernel_launches runs each).
OPS = ("causal_abc", "causal_gsa", "bidirectional", "decoding", "gsa_decoding", "fla_chunk_abc", "fla_chunk_gsa")


def _op_order(op: str) -> tuple:
    return (OPS.index(op) if op in OPS else len(OPS), op)


def _tile(row: Dict) -> str:
    parts = [f"{k}={row['tiles'][k]}" for k in TILE_NAMES if k in row["tiles"]]
    if row.get("config"):
        parts.append(f"cfg {row['config'][0] + 1}/{row['config'][1]}")
    text = " ".join(parts)
    return f"**{text}**" if row.get("pick") else text


def _chunk(row: Dict) -> str:
    return "" if row["chunk"] is None else f"C={row['chunk']}" + ("*" if row.get("pick") else "")


def _range(values) -> str:
    values = sorted(set(values))
    return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def _good(rows: List[Dict]) -> List[Dict]:
    return [r for r in rows if "error" not in r]


def tf32_table(rows: List[Dict]) -> List[str]:
    """Per op, architecture, width and chunk: the tensor-core instructions of its kernels with
    fp16 inputs by operand type (each distinct kernel once)."""
    groups = defaultdict(lambda: defaultdict(int))
    for r in _good(rows):
        if r["dtype"] == "fp16":
            g = groups[(r["op"], r["arch"], r["width"], _chunk(r).rstrip("*"))]
            for operand, n in r["mma_by_operand"].items():
                g[operand] += n
    lines = ["| op | arch | d = n | chunk | tensor-core instructions | F16 | BF16 | TF32 | TF32 share |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (op, arch, width, chunk), g in sorted(groups.items(), key=lambda kv: (_op_order(kv[0][0]), kv[0][1:])):
        total = sum(g.values())
        share = f"{g['TF32'] / total:.0%}" if total else "-"
        lines.append(f"| {op} | sm_{arch} | {width} | {chunk or '-'} | {total} | {g['F16']} | {g['BF16']} | "
                     f"{g['TF32']} | {share} |")
    return lines


def spill_table(rows: List[Dict]) -> List[str]:
    """Per op, architecture, width and chunk: the kernels that spill, with their spill stores
    (bytes per thread, range over the dtypes that spill)."""
    groups = defaultdict(lambda: defaultdict(list))
    for r in _good(rows):
        if r["spill_stores"]:
            groups[(r["op"], r["arch"], r["width"], _chunk(r).rstrip("*"))][r["kernel"]].append(
                (r["spill_stores"], r["dtype"]))
    lines = ["| op | arch | d = n | chunk | kernels spilling: spill stores in B per thread (dtypes) |",
             "|---|---|---|---|---|"]
    for (op, arch, width, chunk), kernels in sorted(groups.items(), key=lambda kv: (_op_order(kv[0][0]), kv[0][1:])):
        text = "; ".join(f"{k} {_range(b for b, _ in v)} ({', '.join(sorted({d for _, d in v}))})"
                         for k, v in sorted(kernels.items()))
        lines.append(f"| {op} | sm_{arch} | {width} | {chunk or '-'} | {text} |")
    return lines


def occupancy_table(rows: List[Dict]) -> List[str]:
    """Per op, architecture and width: programs per SM over its kernels, dtypes and chunks, and
    the kernels held to one program."""
    groups = defaultdict(list)
    for r in _good(rows):
        groups[(r["op"], r["arch"], r["width"])].append(r)
    lines = ["| op | arch | d = n | programs per SM (range) | bound by | kernels at 1 program per SM (chunks) |",
             "|---|---|---|---|---|---|"]
    for (op, arch, width), group in sorted(groups.items(), key=lambda kv: (_op_order(kv[0][0]), kv[0][1:])):
        single = defaultdict(set)
        for r in group:
            if r["programs_per_sm"] == 1:
                single[r["kernel"]].add(r["chunk"])
        text = ", ".join(f"{k} ({', '.join(f'C={c}' for c in sorted(c for c in cs if c))})" if any(cs) else k
                         for k, cs in sorted(single.items())) or "-"
        lines.append(f"| {op} | sm_{arch} | {width} | {_range(r['programs_per_sm'] for r in group)} | "
                     f"{', '.join(sorted({r['limited_by'] for r in group}))} | {text} |")
    return lines


def op_table(rows: List[Dict]) -> List[str]:
    head = ("| arch | dtype | d = n | kernel | tile | warps / stages | registers | spill st / ld (B) | shared (B) "
            "| programs / SM | tensor-core instructions | TF32 | " + " | ".join(COUNTED) + " | instructions |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in sorted(rows, key=lambda r: (r["arch"], r["dtype"], r["width"], r["chunk"] or 0, r["kernel"], r["key"])):
        if "error" in r:
            lines.append(f"| sm_{r['arch']} | {r['dtype']} | {r['width']} | {r['kernel']} | not compiled: "
                         f"{r['error']} |")
            continue
        mma = ", ".join(f"{op} x{n}" for op, n in r["mma"].items()) or "-"
        tf32 = "-" if r["tf32_share"] is None else f"{r['tf32_share']:.0%}"
        lines.append(f"| sm_{r['arch']} | {r['dtype']} | {r['width']} | {r['kernel']} | {_tile(r)} | "
                     f"{r['warps']} / {r['stages']} | {r['registers']} | {r['spill_stores']} / {r['spill_loads']} | "
                     f"{r['shared']} | {r['programs_per_sm']} ({r['limited_by']}) | {mma} | {tf32} | "
                     + " | ".join(str(r[c]) for c in COUNTED) + f" | {r['instructions']} |")
    return lines


def _coverage(rows: List[Dict]) -> str:
    """What the rows cover (a resumed or restricted run covers part of the grid)."""
    def seen(field, fmt=str):
        return ", ".join(fmt(v) for v in sorted({r[field] for r in rows}))

    errors = sum("error" in r for r in rows)
    seconds = sum(r.get("seconds", 0) for r in rows)
    return (f"Rows: {len(rows)} kernels ({errors} not compiled) over ops {seen('op')}; archs "
            f"{seen('arch', lambda a: f'sm_{a}')}; dtypes {seen('dtype')}; d = n {seen('width')}. Compiling and "
            f"disassembling them took {seconds / 60:.0f} min of this machine's time, summed over the rows.")


def _runs(rows: List[Dict]) -> str:
    """Which runs compiled the rows (a run keeps the rows of earlier runs that it does not cover)."""
    made = {}
    for r in rows:
        by = r.get("made_by") or {}
        key = (by.get("commit"), by.get("command"))
        made[key] = made.get(key, 0) + 1
    return "rows compiled by " + ", ".join(f"`{command}` at {commit} ({count})"
                                           for (commit, command), count in sorted(made.items(), key=str))


def markdown(rows: List[Dict], meta: Dict) -> str:
    from tools import sass

    limits = "; ".join(f"sm_{a}: {lim.blocks} blocks, {lim.warps} warps, {lim.registers} registers, "
                       f"{lim.shared_sm} B shared per SM ({lim.shared_block} B per block)"
                       for a, lim in sorted(sass.LIMITS.items()))
    lines = [
        "# Triton kernels, compiled and disassembled per architecture", "",
        f"Generated by `{meta['command']}` (commit {meta['commit']}, {meta['date']}; triton {meta['triton']}, "
        f"fla-core {meta['fla']}); {_runs(rows)}. "
        "On CPU: Triton's compiler and the ptxas and nvdisasm in its wheel, no GPU. "
        "Each op's forward and backward (decoding: one step) is run on CPU tensors with Triton's launches "
        "recorded instead of run, at d = n = dv = the width, and each launch compiled at the tiles, warps "
        "and stages its launcher passed (`tools/kernel_launches.py`).", "",
        "- **registers, spill st / ld**: per thread, from `ptxas -v` (bytes of spill stores / loads).",
        "- **shared**: bytes per block (Triton's metadata). **programs / SM**: resident blocks per SM, the least "
        "of the bounds from blocks, warps, registers and shared memory (bound in brackets), with "
        f"{limits} (CUDA C++ Programming Guide, compute capability table; 1 KB reserved per block, "
        "registers in units of 256 per warp, shared memory in units of 128 B).",
        "- **tensor-core instructions**: HMMA (mma.sync) and HGMMA (wgmma) by shape and operand type: "
        "`HMMA.16816.F32` takes fp16, `.BF16` bf16, `HMMA.1688.F32.TF32` tf32 (fp32 operands). **TF32**: "
        "their TF32 share. Counts are static (each instruction of the binary once, loops not unrolled "
        "into trip counts). An sm_90 HGMMA is one warpgroup's 64 x N x 16 product where an HMMA is one warp's "
        "16 x 8 x 16 (or 16 x 8 x 8 in TF32): compare operand shares within an architecture, not counts across.",
        "- **LDG / STG** global, **LDS / STS** shared, **LDSM / STSM** ldmatrix / stmatrix, **LDGSTS** "
        "cp.async, **LDL / STL** local (spills), **MUFU** special functions (exp2, rcp, ...), **BAR** barriers.",
        "- **tile**: the causal ops' chunk C at every candidate of their launcher, **bold** (and * in the "
        "summary) where the compile table's guess on that architecture (`sizes.pick_chunk`) takes it (the "
        "launcher times the candidates on the device); the bidirectional kernels' rows block BT at the first "
        "(BT, stages) whose shared memory fits, as `launch_rows` does; fla's at their launchers' tiles, "
        "an autotuned fla kernel at one config (`cfg i/n`: the closest to 4 warps and 3 stages).",
        "- fla's tile lists chosen at import from the device's shared memory are taken as on an A100 / "
        "H100 (both pass the same checks); fla's chunk is 64.", "",
        _coverage(rows), "",
        "## Summary (as measured)", "",
        "### Tensor-core instructions with fp16 inputs, by operand type", "", *tf32_table(rows), "",
        "### Where registers spill", "", *spill_table(rows), "",
        "### Programs per SM", "", *occupancy_table(rows), "",
    ]
    by_op = defaultdict(list)
    for r in rows:
        by_op[r["op"]].append(r)
    for op in sorted(by_op, key=_op_order):
        lines += [f"## {op}", "", *op_table(by_op[op]), ""]
    return "\n".join(lines)
