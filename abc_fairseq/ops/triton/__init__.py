"""Causal ABC as Triton kernels (GPU training speed), exact against the PyTorch path.

Nothing here imports ``triton`` at package import: ``dispatch`` decides whether the kernels apply
and imports them only then, so the ops keep working where Triton is absent.

- ``dispatch``: backend choice, shape limits, the once-per-reason fallback warning.
- ``geometry``: prefix normalisers and chunk-boundary anchors (a few PyTorch calls).
- ``tiles``: ``triton.jit`` helpers shared by the kernels (loads, chunk factors, matmul precision).
- ``exact``: the row-by-row intra-chunk path for chunks whose logits rise too steeply.
- ``forward`` / ``scan`` / ``backward``: the kernels; ``function``: the autograd Function.
"""
