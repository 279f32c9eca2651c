"""ELU kernel attention (Katharopoulos et al. 2020), a kernel baseline of the paper (Table 2b):
f(x) = elu(x) + 1 > 0, normalised. The feature size is the head dim d (there is no projection):
the memory flag is not used. No parameters. State per head: S [d x d], z [d]."""

import torch.nn.functional as F

from ._kernel import KernelAttention
from .registry import register


@register
class ELUAttention(KernelAttention):
    name = "elu"
    paper = "kernel baseline, Table 2b (ELU; Katharopoulos et al. 2020)"

    def naive_features(self, q, k, v):
        return F.elu(q) + 1, F.elu(k) + 1, v

    def query_features(self, q):
        return F.elu(q) + 1.0

    def key_features(self, k, v):
        return F.elu(k) + 1.0, v
