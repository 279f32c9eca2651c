"""Clustering-based attention as ABC (paper §3.2, Eq. 7-8; Table 1: Clustering).

Keys are assigned to n clusters (membership M shared by keys and values) and queries attend to the
centroids, each the mean of its members: phi_i = sum_j M_ij / (sum_l M_lj) e_j.

Assignment: spherical k-means against n learned centroids per head and layer (unit vectors,
buffer ``centroids``): key k_i joins the centroid of highest cosine similarity. The assignment is
a function of k_i alone, so the causal form never looks ahead: row t reads the running means of
the members among tokens 1..t (the normaliser runs over the prefix as in ABC_MLP), a state of
n centroids whatever the length. Clusters with no member yet are left out of the softmax.
Centroids are not trained by gradient (argmax has none): in training mode every forward pass moves
each centroid towards the mean of its unit-normalised member keys, an exponential moving average
with decay CLUSTER_DECAY (online k-means, as in Routing Transformer), after computing the outputs.
The moving averages are per worker (buffers are not all-reduced); decoding never updates them.

Training O(N (C d + d n)) time, O(N (C + n)) memory; decoding state per head: member sums K~, V~
[n, d], member counts [n].
"""

import torch
import torch.nn.functional as F

from ._common import compute_dtype
from ._slots import SlotStrategy
from .registry import register

CLUSTER_DECAY = 0.999


@register
class Clustering(SlotStrategy):
    """Keys and values pooled into n clusters by nearest centroid. No parameters (EMA centroids)."""

    name = "cluster"
    paper = "§3.2, Eq. 7-8 (Table 1: Clustering)"
    normalize = True
    mask_empty = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        centroids = F.normalize(torch.randn(self.num_heads, self.memory_size, self.head_dim), dim=-1)
        self.register_buffer("centroids", centroids)

    @torch.no_grad()
    def assign(self, k: torch.Tensor) -> torch.Tensor:
        """k [B, H, N, d] -> cluster index [B, H, N] (highest cosine similarity)."""
        unit = F.normalize(k.to(self.centroids.dtype), dim=-1)
        return torch.matmul(unit, self.centroids.transpose(-1, -2)[None]).argmax(dim=-1)

    def naive_phi(self, rank, key):
        """e_j, j the centroid of highest cosine similarity with the key, per head (the mean over
        members comes from ``normalize``)."""
        similarity = torch.einsum("hnd,hd->hn", self.centroids.to(key.dtype), key / key.norm(dim=-1, keepdim=True))
        return F.one_hot(similarity.argmax(dim=-1), self.memory_size)

    def control(self, ranks, valid, k, dtype):
        phi = F.one_hot(self.assign(k), self.memory_size).to(compute_dtype(k.dtype))  # needs no rank
        return phi * valid[:, None, :, None].to(phi.dtype)

    @torch.no_grad()
    def written(self, k: torch.Tensor, phi: torch.Tensor) -> None:
        """Training: move the centroids towards their members (after the outputs are computed)."""
        if not self.training:
            return
        unit = F.normalize(k.to(phi.dtype), dim=-1)
        counts = phi.sum(dim=(0, 2))  # [H, n]
        means = torch.einsum("bhin,bhid->hnd", phi, unit) / counts.clamp_min(1)[..., None]
        moved = F.normalize(CLUSTER_DECAY * self.centroids.to(phi.dtype) + (1 - CLUSTER_DECAY) * means, dim=-1)
        self.centroids.copy_(torch.where(counts[..., None] > 0, moved, self.centroids.to(phi.dtype)))
