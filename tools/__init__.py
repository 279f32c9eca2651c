"""Developer tools run from the repository root (``python -m tools.<tool>``), not part of the plugin:

- ``gpu_compile``: compiles every Triton kernel for each GPU architecture (no GPU needed) and writes
  the compile table the causal launcher reads (``abc_fairseq/ops/triton/compile_table.json``).
- ``kernel_report``: every Triton kernel of every op, ours and fla's, compiled and disassembled per
  architecture (registers, spills, programs per SM, tensor-core and memory instructions:
  ``docs/gpu_kernels/``), with ``kernel_launches`` (an op's launches recorded on CPU) and ``sass``.
- ``causal_cost``: the cost model of causal ABC on the Triton kernels (per launch, PyTorch glue
  included: programs, sequential steps, multiply-adds, bytes, and the time they take at a device's peaks).
- ``kernel_profile``: every kernel of causal ABC forward + backward timed by torch.profiler beside
  that model (``docs/gpu.md``, "Where the time goes").
- ``cost_model``: ours, fla's ``chunk_abc`` and flash attention as counted work (ops, launches,
  dependent steps, bytes), its constants fitted on the H100's saved timings with leave-one-out,
  and the predictions in ``docs/gpu.md`` (``docs/gpu_cost/model.md``).
  Its parts: ``cost_terms`` (the six constants, a call's ``Cost`` as the fit's row), ``cost_launches``
  (the launches of ours, fla, flash attention, the harnesses and a decoding step), ``cost_fit`` (the
  saved rows, non-negative least squares, leave-one-out).
- ``kernel_counts``: one forward + backward of ours and fla's ops counted under Triton's interpreter
  (``docs/gpu_counts/``); its parts: ``interpreter_counter``, ``fla_interpreter_shims``, ``kernel_count_report``.
- ``paper_settings``: the recipes' dry runs against the paper's settings (``docs/paper_settings.md``);
  its parts: ``paper_recipes`` (table, dry run, parse), ``paper_compare`` (the comparison).
- ``context_window``: scores a language model's split as ``fairseq-eval-lm`` does, with and without
  ``--context-window``, token by token, and separates the effect of more context from that of a
  later position (``docs/quickstart/context_window.md``).
"""
