"""The linear attention of de Brebisson & Vincent ("A cheap linear attention mechanism with fast
lookups and fixed-size representations"), as attention positions of a transformer.

``linear``: R = C q with C = sum_t h_t h_t^T (their Eq. in §3.1-3.2), no softmax, no normaliser.
With separate key and value projections C = sum_t v_t k_t^T, so out_t = sum_{i<=t} (q_t . k_i) v_i
(k = v = h recovers the paper). The query carries the usual 1 / sqrt(d) scale (a reparametrisation
q_proj could learn; it keeps sums of N outer products from starting large).
``gated-linear``: their gated variant C_{t+1} = C_t + f f^T with f = sigmoid(W h + b) (.) h (§4): here
one gate per head and token from its key, g = sigmoid(W_g k + b_g), W_g [d x d] per head and per
layer, writing (g (.) v)(g (.) k)^T.

Neither has a feature size besides d: the memory flag is not used. State per head: C [d x d].
Sums are not normalised (as in the paper), so their scale grows with the sequence length.
"""

import torch

from ._kernel import KernelAttention, head_affine, head_affine_parameters
from .registry import register


@register
class LinearAttention(KernelAttention):
    name = "linear"
    paper = "de Brebisson & Vincent, §3 (C = sum h h^T)"
    normalized = False

    def naive_features(self, q, k, v):
        return q * self.scale, k, v

    def query_features(self, q):
        return q * self.scale

    def key_features(self, k, v):
        return k, v


@register
class GatedLinearAttention(LinearAttention):
    name = "gated-linear"
    paper = "de Brebisson & Vincent, §4 (gated linear attention)"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.gate_weight, self.gate_bias = head_affine_parameters(self.num_heads, self.head_dim, self.head_dim,
                                                                  random_bias=False)

    def naive_features(self, q, k, v):
        gate = torch.sigmoid(torch.einsum("bhnd,hed->bhne", k, self.gate_weight) + self.gate_bias[:, None])
        return q * self.scale, gate * k, gate * v  # g (.) k and g (.) v, g = sigmoid(W_g k + b_g)

    def key_features(self, k, v):
        gate = torch.sigmoid(head_affine(k, self.gate_weight, self.gate_bias))
        return gate * k, gate * v
