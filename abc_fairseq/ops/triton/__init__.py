"""What the Triton kernels of every op family share (the kernels live in ``<family>/triton/``).

Nothing here imports ``triton`` at package import: ``ops.backend`` decides whether the kernels
apply and imports them only then, so the ops keep working where Triton is absent.

Names, in every kernel: real sizes are ``N`` (rows of a sequence), ``M`` (query rows of a read),
``n`` (memory slots, the paper's n), ``K`` (key / query head dim) and ``V`` (value head dim);
block sizes, powers of two >= 16 covering them, are ``BT`` (rows per program; ``C``, the chunk,
in the causal kernels), ``BS`` (slots), ``BK`` and ``BV`` (key and value columns). ``PREC`` is
``tl.dot``'s input precision. Locals are named by role (``p_``/``_ptr`` pointers, ``i_`` or ``z``,
``c`` program ids).

- ``layout``: the program prologue and column ranges every kernel starts with.
- ``interpreter``: under ``TRITON_INTERPRET=1`` (CPU, CI), Triton's interpreter made to set up
  ``triton.language`` once per launch rather than once per helper call (applied when ``layout``
  is imported; nothing changes on a GPU).
- ``sizes``: every launcher's tiles in one place: padding, precision, the causal chunk (from the
  device's architecture and shared memory, through ``compile_table.json``) and the rows block
  and pipelining depth of the bidirectional launchers (the largest the device accepts).

The families' kernels: ``causal.triton`` (``geometry``: prefix normalisers and chunk anchors;
``common``: ``triton.jit`` helpers; ``exact``: the row-by-row path for chunks whose logits rise
too steeply; ``forward`` / ``scan`` / ``backward``: the kernels; ``function``: the autograd
Function; ``recurrent``: the fused decoding step), ``gsa.triton`` (gated slot attention on the
causal kernels, its normalisers given), ``bidirectional.triton`` (``memory``, ``read`` and the
autograd Functions in ``function``).
"""
