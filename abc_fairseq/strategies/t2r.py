"""T2R (Kasai et al. 2021, "Finetuning pretrained transformers into RNNs"), a kernel baseline of
the paper (Table 2b): a learned single-layer MLP then ReLU as the feature map, shared by queries
and keys, f(x) = relu(W x + b) with W [n x d] per head and per layer; normalised, the denominator
gets + EPS (f can be 0). The memory flag is the feature size n. State per head: S [n x d], z [n]."""

import torch

from ._kernel import KernelAttention, head_affine, head_affine_parameters
from .registry import register


@register
class T2RAttention(KernelAttention):
    name = "t2r"
    paper = "kernel baseline, Table 2b (T2R; Kasai et al. 2021)"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.feature_weight, self.feature_bias = head_affine_parameters(self.num_heads, self.memory_size,
                                                                        self.head_dim, random_bias=True)

    def _features(self, x):
        return torch.relu(head_affine(x, self.feature_weight, self.feature_bias))

    def naive_features(self, q, k, v):
        def features(x):  # relu(W x + b) per head
            return torch.relu(torch.einsum("bhnd,hmd->bhnm", x, self.feature_weight) + self.feature_bias[:, None])

        return features(q), features(k), v

    def query_features(self, q):
        return self._features(q)

    def key_features(self, k, v):
        return self._features(k), v
