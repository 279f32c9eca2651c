"""ABC as Triton kernels (GPU training and decoding speed), exact against the PyTorch path.

Nothing here imports ``triton`` at package import: ``dispatch`` decides whether the kernels apply
and imports them only then, so the ops keep working where Triton is absent.

Names, in every kernel: real sizes are ``N`` (rows of a sequence), ``M`` (query rows of a read),
``n`` (memory slots, the paper's n), ``K`` (key / query head dim) and ``V`` (value head dim);
block sizes, powers of two >= 16 covering them, are ``BT`` (rows per program; ``C``, the chunk,
in the causal kernels), ``BS`` (slots), ``BK`` and ``BV`` (key and value columns). ``PREC`` is
``tl.dot``'s input precision. Locals are named by role (``p_``/``_ptr`` pointers, ``i_`` or ``z``,
``c`` program ids); ``sizes`` pads, picks precision and tiles for every launcher.

- ``dispatch``: backend choice, shape limits, the once-per-reason fallback warning, and the
  fallback to PyTorch when a kernel cannot compile or launch.
- ``sizes``: padding, precision, the tiles each launcher can pick (the causal chunk from the
  device's architecture and shared memory, through ``compile_table.json``).
- Causal ABC: ``causal_geometry`` (prefix normalisers and chunk anchors, a few PyTorch calls),
  ``causal_tiles`` (``triton.jit`` helpers: loads, chunk factors, matmuls, the program prologue),
  ``causal_exact`` (the row-by-row path for chunks whose logits rise too steeply),
  ``causal_forward`` / ``causal_scan`` / ``causal_backward`` (the kernels) and
  ``causal_function`` (the autograd Function and the op's entry point), ``causal_gated`` (gated
  slot attention on the same kernels, with its normalisers given: ``ops.gated.causal_gsa``).
- Bidirectional ABC and decoding: ``layout`` (their program prologue), ``memory_kernels``,
  ``read_kernels`` and ``bidirectional`` (the autograd Functions), ``step_kernel``.
"""
