"""Causal ABC's Triton kernels (imported by ``ops.backend`` only when they run; names and shared
pieces in ``ops/triton/__init__.py``): ``geometry`` (how the prefix normalisers are found: by the
kernels chunk by chunk, or the previous PyTorch ``logcumsumexp``; GSA's given ones), ``common``
(``triton.jit`` helpers), ``exact`` (the row-by-row path for chunks whose logits rise too
steeply), ``forward`` / ``scan`` / ``backward`` (the kernels), ``function`` (the autograd
Function, the measured chunk, the op's entry point) and ``recurrent`` (the fused decoding step)."""
