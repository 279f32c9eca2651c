"""Developer tools run from the repository root (``python -m tools.<tool>``), not part of the plugin:

- ``gpu_compile``: compiles every Triton kernel for each GPU architecture (no GPU needed) and writes
  the compile table the causal launcher reads (``abc_fairseq/ops/triton/compile_table.json``).
"""
