"""``python -m abc_fairseq.selfcheck``: prove the Triton kernels on the GPU at hand (or, on a
machine without one, under Triton's interpreter at small sizes).

- ``checks``: every Triton op against the PyTorch path (values, gradients, no future leak, state
  passing, padding) with stated tolerances.
- ``timing``: forward + backward times against fused softmax attention and fla's ``chunk_abc``.
"""
