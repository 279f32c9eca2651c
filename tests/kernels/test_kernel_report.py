"""The static kernel report (``python -m tools.kernel_report``): the SASS counter on literal
listings, the occupancy bound, and one real kernel compiled for sm_90 and counted."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tools import sass  # noqa: E402

LISTING = """
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*4e50*/                   HMMA.1688.F32.TF32 R136, R136, R188, RZ ;
        /*4ee0*/              @!P0 HMMA.1688.F32.TF32 R120, R120, R142, R136 ;
        /*4f00*/                   HMMA.16816.F32 R4, R8, R12, R4 ;
        /*4f10*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*4f20*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT ;
        /*4f30*/                   LDG.E.128 R4, desc[UR6][R2.64] ;
        /*4f40*/              @P1  STG.E.U16 desc[UR6][R2.64], R5 ;
        /*4f50*/                   LDSM.16.M88.4 R8, [R3] ;
        /*4f60*/                   LDS.64 R8, [R3+0x10] ;
        /*4f70*/                   STS [R3], R9 ;
        /*4f80*/                   STL.64 [R1+0x8], R10 ;
        /*4f90*/                   LDL R10, [R1+0x8] ;
        /*4fa0*/                   MUFU.EX2 R7, R7 ;
        /*4fb0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*4fc0*/                   NOP ;
"""


def test_counter_on_a_literal_listing():
    counts = sass.count(LISTING)
    assert counts["mma"] == {"HGMMA.64x64x16.F32.BF16": 1, "HMMA.16816.F32": 1, "HMMA.16816.F32.BF16": 1,
                             "HMMA.1688.F32.TF32": 2}
    assert counts["mma_by_operand"] == {"BF16": 2, "F16": 1, "TF32": 2}
    assert counts["mma_total"] == 5 and counts["tf32_share"] == 0.4
    expected = dict(LDG=1, STG=1, LDS=1, STS=1, LDSM=1, LDL=1, STL=1, MUFU=1, BAR=1, STSM=0, LDGSTS=0)
    assert {k: counts[k] for k in expected} == expected
    assert counts["instructions"] == 15  # NOP padding left out
    assert sass.count("no instructions here")["tf32_share"] is None


def test_operand_types():
    assert sass.mma_operand("HMMA.16816.F32") == "F16"
    assert sass.mma_operand("HMMA.16816.F16") == "F16"
    assert sass.mma_operand("HMMA.1688.F32.TF32") == "TF32"
    assert sass.mma_operand("HGMMA.64x128x16.F32.BF16") == "BF16"


def test_occupancy_bounds():
    # 221 registers x 32 threads -> 7168 per warp (units of 256): 9 warps' worth of 65536, one 8-warp block.
    assert sass.occupancy(90, 221, 34816, 8) == dict(programs_per_sm=1, limited_by="registers", warps_per_sm=8)
    # 32 registers, 4 warps: 16 blocks by warps (64 / 4); 8 KB shared (+1 KB reserved) allows 25 on sm_90.
    assert sass.occupancy(90, 32, 8192, 4)["programs_per_sm"] == 16
    # Shared memory binds: 100 KB + 1 KB per block, 164 KB per SM on sm_80 -> 1.
    assert sass.occupancy(80, 32, 100 * 1024, 4) == dict(programs_per_sm=1, limited_by="shared", warps_per_sm=4)
    assert sass.occupancy(80, 32, 200 * 1024, 4)["programs_per_sm"] == 0  # over the per-block limit


needs_triton = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton is not installed")


@needs_triton
def test_one_kernel_compiled_and_counted(tmp_path):
    """columns_kernel, fp16 inputs, d = n = 64, C = 16, sm_90: real figures, consistent with its SASS."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(PYTHONPATH=str(ROOT), TRITON_DEFAULT_FP_FUSION="1", TRITON_CACHE_DIR=str(tmp_path / "cache"))
    out_json, out_md = tmp_path / "k.json", tmp_path / "k.md"
    proc = subprocess.run([sys.executable, "-m", "tools.kernel_report", "--archs", "90", "--widths", "64",
                           "--dtypes", "fp16", "--ops", "causal_abc", "--kernels", "columns_kernel", "--chunks", "16",
                           "--json", str(out_json), "--md", str(out_md)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out_json.read_text())
    (row,) = report["kernels"]
    assert (row["op"], row["arch"], row["dtype"], row["width"], row["chunk"]) == ("causal_abc", 90, "fp16", 64, 16)
    assert row["tiles"]["C"] == 16 and row["tiles"]["BK"] == 64 and row["warps"] == 8
    assert 0 < row["registers"] <= 255 and 0 < row["shared"] <= sass.LIMITS[90].shared_block
    # fp16 operands on the tensor cores (the products of inputs), TF32 for the fp32 chunk factors.
    assert row["mma_by_operand"].get("F16", 0) > 0 and row["mma_by_operand"].get("TF32", 0) > 0
    assert row["mma_total"] == sum(row["mma"].values()) == sum(row["mma_by_operand"].values())
    assert row["LDG"] > 0 and row["STG"] > 0 and row["MUFU"] > 0 and row["BAR"] > 0
    assert row["programs_per_sm"] == sass.occupancy(90, row["registers"], row["shared"], 8)["programs_per_sm"]
    assert report["command"].startswith("python -m tools.kernel_report --archs 90")
    text = out_md.read_text()
    assert "| causal_abc | sm_90 | 64 | C=16 |" in text and "columns_kernel" in text


@needs_triton
def test_counts_match_the_disassembly(tmp_path, monkeypatch):
    """The figures of one compiled launch against its own listing, counted by plain text search."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    from tools import kernel_launches, kernel_report

    (launch,) = [x for x in kernel_launches.capture("decoding", "fp16", 64)]
    figures, listing = kernel_report.compile_launch(launch, 80, launch.bind(80))
    lines = [line for line in listing.splitlines() if line.strip().startswith("/*")]
    assert figures["instructions"] == sum(not line.split("*/")[1].strip().startswith("NOP") for line in lines)
    assert figures["MUFU"] == sum(" MUFU." in line for line in lines) > 0
    assert figures["LDG"] == sum(" LDG." in line or " LDG " in line for line in lines) > 0
    assert figures["mma_total"] == sum("MMA." in line for line in lines)
    assert figures["registers"] > 0 and figures["warps"] == 4


def test_help_does_nothing_else(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tools.kernel_report", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0 and "--archs" in proc.stdout and not list(tmp_path.iterdir())


def test_bad_flag_names_it(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tools.kernel_report", "--archs", "75", "--json",
                           str(tmp_path / "k.json")], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode != 0 and "--archs" in proc.stderr and not list(tmp_path.iterdir())
