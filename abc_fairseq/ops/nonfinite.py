"""Causality for non-finite inputs: a masked product must not let a NaN or inf leak across the mask.

Causal forms compute sums over i <= t as a matmul with a weight matrix whose entries i > t are
zero. That is exact for finite values, but IEEE arithmetic makes 0 * NaN = NaN and 0 * inf = NaN,
so one non-finite value in row i turns every earlier row t < i of the same chunk into NaN, while
the recurrent form (and the paper's definition) leaves those rows untouched.

``zero_safe_matmul`` keeps the matmul for finite values (one cheap check) and recomputes only the
batches that hold a non-finite value with a select instead of a product.
"""

from typing import Optional

import torch


def masked_product_sum(weights: torch.Tensor, values: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """sum_k [keep[m, k]] weights[m, k] values[k, e] over batches, never computing
    weight * value where ``keep`` is False.

    weights [..., M, K]; values [..., K, E]; keep: bool broadcastable to [..., M, K].
    Returns [..., M, E]. Materialises [..., M, K, E]: use it on the few batches that need it.
    """
    products = weights.unsqueeze(-1) * values.unsqueeze(-3)
    return torch.where(keep.unsqueeze(-1), products, products.new_zeros(())).sum(-2)


def nonfinite_batches(values: torch.Tensor) -> torch.Tensor:
    """values [..., K, E] -> bool [...]: the batches holding a NaN or an infinity."""
    return ~torch.isfinite(values).flatten(-2).all(-1)


def zero_safe_matmul(weights: torch.Tensor, values: torch.Tensor, keep: torch.Tensor,
                     summary: Optional[torch.Tensor] = None) -> torch.Tensor:
    """weights @ values, where the weights outside ``keep`` are zero and stay out of the sum
    even when the values they would meet are not finite.

    weights [..., M, K]; values [..., K, E] with the same batch dims; keep broadcastable to
    [..., M, K] (True where a weight may be nonzero). ``summary``: a tensor that is non-finite
    whenever ``values`` is (e.g. a sum already computed from them); checking it instead of
    ``values`` spares a pass over the values on the finite path.
    """
    out = torch.matmul(weights, values)
    check = values if summary is None else summary
    if bool(torch.isfinite(check).all()):
        return out
    bad = nonfinite_batches(values)
    if not bool(bad.any()):
        return out
    index = bad.nonzero(as_tuple=True)
    keep = keep.expand(*weights.shape)
    return out.index_put(index, masked_product_sum(weights[index], values[index], keep[index]))
