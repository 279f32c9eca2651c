"""Developer tools run from the repository root (``python -m tools.<tool>``), not part of the plugin:

- ``gpu_compile``: compiles every Triton kernel for each GPU architecture (no GPU needed) and writes
  the compile table the causal launcher reads (``abc_fairseq/ops/triton/compile_table.json``).
- ``causal_cost``: the cost model of causal ABC on the Triton kernels (per launch, PyTorch glue
  included: programs, sequential steps, multiply-adds, bytes, and the time they take at a device's peaks).
- ``kernel_profile``: every kernel of causal ABC forward + backward timed by torch.profiler beside
  that model (``docs/gpu.md``, "Where the time goes").
- ``cost_model``: ours, fla's ``chunk_abc`` and flash attention as counted work (ops, launches,
  dependent steps, bytes), its constants fitted on the H100's saved timings with leave-one-out,
  and the predictions in ``docs/gpu.md`` (``docs/gpu_cost/model.md``).
- ``context_window``: scores a language model's split as ``fairseq-eval-lm`` does, with and without
  ``--context-window``, token by token, and separates the effect of more context from that of a
  later position (``docs/quickstart/context_window.md``).
"""
