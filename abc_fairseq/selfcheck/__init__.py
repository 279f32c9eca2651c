"""``python -m abc_fairseq.selfcheck``: prove the Triton kernels on the GPU at hand (or, on a
machine without one, under Triton's interpreter at small sizes).

- ``checks``: every Triton op against the PyTorch path (values, gradients, no future leak, state
  passing, padding) with stated tolerances.
- ``timing``: forward + backward times against fused softmax attention and fla's ``chunk_abc``.
- ``fla_peer``: flash-linear-attention's ``chunk_abc`` / ``chunk_gsa`` on our problem (its layout
  [B, T, H, *] and arguments built from ours, once for every caller) and its recorded version.
"""
