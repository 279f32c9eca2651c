"""Causal ABC's Triton kernels (imported by ``ops.backend`` only when they run; names and shared
pieces in ``ops/triton/__init__.py``): ``geometry`` (the prefix normalisers: found by the kernels chunk
by chunk for ABC, given for GSA), ``common``
(``triton.jit`` helpers), ``exact`` (the row-by-row path for chunks whose logits rise too
steeply), ``forward`` / ``scan`` / ``backward`` (the kernels), ``function`` (the autograd
Function, the measured chunk, the op's entry point) and ``recurrent`` (the fused decoding step)."""
