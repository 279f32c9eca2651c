"""Random feature attention, RFA (Peng et al. 2021), a kernel baseline of the paper (Table 2b).

Queries and keys are l2-normalised, then mapped with m = n / 2 random frequencies w_i ~ N(0, I_d)
(per layer and head) and a learned inverse scale s = 1 / sigma per head:
    f(x) = sqrt(1 / m) [sin(s w_1 . x), ..., sin(s w_m . x), cos(s w_1 . x), ..., cos(s w_m . x)]
so that f(x) . f(y) ~ exp(-s^2 ||x - y||^2 / 2), the Gaussian kernel, proportional to exp(s^2 x . y)
for unit vectors. The memory flag is the feature size n (even). The frequencies are drawn once at
construction and stored as a buffer (``omega``, saved with the model); Peng et al. redraw them every
training step, which is not done here so that the parallel, recurrent and cached-memory forms use
one feature map. f(q) . z can be negative or zero: the denominator is kept at least EPS away from
0 with its sign. No gating. State per head: S [n x d], z [n].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from ._kernel import EPS, KernelAttention
from .registry import register


@register
class RandomFeatureAttention(KernelAttention):
    name = "rfa"
    paper = "kernel baseline, Table 2b (RFA; Peng et al. 2021)"

    @classmethod
    def validate(cls, memory_size, options, mode=None) -> None:
        super().validate(memory_size, options, mode)
        if memory_size % 2:
            raise ValueError(f"{options.flag('memory_size')} must be even for rfa (sin and cos features "
                             f"of n / 2 random frequencies), got {memory_size}")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        frequencies = self.memory_size // 2
        self.register_buffer("omega", torch.randn(self.num_heads, frequencies, self.head_dim))
        self.log_inverse_sigma = nn.Parameter(torch.zeros(self.num_heads))

    def _features(self, x):
        x = F.normalize(x, dim=-1, eps=EPS)
        scale = self.log_inverse_sigma.exp().to(x.dtype)[None, :, None, None]
        angles = scale * torch.matmul(x, self.omega.to(x.dtype).transpose(-1, -2)[None])
        return torch.cat([angles.sin(), angles.cos()], dim=-1) * (2.0 / self.memory_size) ** 0.5

    def naive_features(self, q, k, v):
        def features(x):  # sqrt(1 / m) [sin(s w_i . x), cos(s w_i . x)] of the unit vector x
            angles = torch.einsum("bhnd,hmd->bhnm", x / x.norm(dim=-1, keepdim=True), self.omega.to(x.dtype))
            angles = angles * self.log_inverse_sigma.exp()[:, None, None]
            return torch.cat([angles.sin(), angles.cos()], dim=-1) / (self.memory_size / 2) ** 0.5

        return features(q), features(k), v

    def query_features(self, q):
        return self._features(q)

    def key_features(self, k, v):
        return self._features(k), v

    def denominator(self, den):
        return torch.where(den >= 0, den.clamp_min(EPS), den.clamp_max(-EPS))
