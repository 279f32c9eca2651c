"""Gated slot attention on causal ABC's Triton kernels (imported by ``ops.backend`` only when they
run): ``function``, the autograd Function and the op's entry point (the kernels with ``GATED``,
which build GSA's weights from the log gates chunk by chunk); ``gates``, the kernel chaining the
gradients to the log gates."""
