"""T2R (Kasai et al. 2021, "Finetuning pretrained transformers into RNNs"), a kernel baseline of
the paper (Table 2b): a learned single-layer MLP then ReLU as the feature map, shared by queries
and keys, f(x) = relu(W x + b) with W [n x d] per head and per layer; normalised, the denominator
gets + EPS (f can be 0). The memory flag is the feature size n. State per head: S [n x d], z [n]."""

import torch
import torch.nn as nn

from ._kernel import KernelAttention
from .registry import register


@register
class T2RAttention(KernelAttention):
    name = "t2r"
    paper = "kernel baseline, Table 2b (T2R; Kasai et al. 2021)"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        bound = self.head_dim ** -0.5  # nn.Linear's default initialisation, per head
        self.feature_weight = nn.Parameter(torch.empty(self.num_heads, self.memory_size, self.head_dim))
        self.feature_bias = nn.Parameter(torch.empty(self.num_heads, self.memory_size))
        nn.init.uniform_(self.feature_weight, -bound, bound)
        nn.init.uniform_(self.feature_bias, -bound, bound)

    def _features(self, x):
        weight = self.feature_weight.to(x.dtype)
        bias = self.feature_bias.to(x.dtype)[None, :, None, :]
        return torch.relu(torch.matmul(x, weight.transpose(-1, -2)[None]) + bias)

    def query_features(self, q):
        return self._features(q)

    def key_features(self, k, v):
        return self._features(k), v
