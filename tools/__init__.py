"""Developer tools run from the repository root (``python -m tools.<tool>``), not part of the plugin:

- ``gpu_compile``: compiles every Triton kernel for each GPU architecture (no GPU needed) and writes
  the compile table the causal launcher reads (``abc_fairseq/ops/triton/compile_table.json``).
- ``context_window``: scores a language model's split as ``fairseq-eval-lm`` does, with and without
  ``--context-window``, token by token, and separates the effect of more context from that of a
  later position (``docs/quickstart/context_window.md``).
"""
