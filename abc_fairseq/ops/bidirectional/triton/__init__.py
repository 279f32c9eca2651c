"""Bidirectional ABC's Triton kernels (imported by ``ops.backend`` only when they run): ``memory``
(the write, forward and backward), ``read`` (the read, forward and backward) and ``function`` (the
autograd Functions and the ops' entry points)."""
