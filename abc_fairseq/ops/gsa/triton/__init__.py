"""Gated slot attention on causal ABC's Triton kernels (imported by ``ops.backend`` only when they
run): ``function``, the autograd Function and the op's entry point, GSA's weights written in the
kernels' form by ``causal.triton.geometry.gated_normalisers``."""
