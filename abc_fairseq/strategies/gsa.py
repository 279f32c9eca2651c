"""Gated slot attention (GSA; Zhang et al., 2024, arXiv 2409.07146): ABC's bounded memory with a
per-slot forget gate instead of the prefix normaliser. Causal self attention only.

Per head and slot j, with a gate projection W_alpha of the control input (tied across the layers
of the position like W_phi; ``--untie-phi`` unties it) and the temperature tau (``--gsa-temperature``,
8 as in the paper):
    a_t = exp(logsigmoid(W_alpha x_t) / tau) = sigmoid(W_alpha x_t) ** (1 / tau)   in (0, 1)
    K~_t = diag(a_t) K~_{t-1} + (1 - a_t) (x) k_t,   V~_t likewise
    o_t = V~_t^T softmax(scale * K~_t q_t)
The paper's layer adds feature maps, norms and output gates around this op: those are model
choices, left out; the op is the part above. Padding gets the log gate 0 (a = 1): it writes
nothing and keeps the memory. tau is a positive real (the paper and flash-linear-attention use 8;
a checkpoint that stored it as an integer loads as that number).

Causal training: the chunked ``causal_gsa`` op, O(N (n + C)) memory; on GPUs it runs ABC's Triton
kernels with GSA's weights (``ops/gsa/triton/function.py``). Decoding state per head:
K~ [n, d] and V~ [n, dv], nothing else.
"""

from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from ..ops.gsa import GSAState, causal_gsa, causal_gsa_step
from . import reference
from ._common import advance_in_place, compute_dtype
from .base import Setting, State, Strategy
from .phi import SlotControl, SlotProjection
from .registry import register

TEMPERATURE = Setting("gsa_temperature", "temperature",
                      "gsa: tau, the gate temperature, a_t = sigmoid(W_alpha x_t) ** (1 / tau): a higher tau keeps "
                      "the gates nearer 1 (longer memory); 8 as in the paper", default=8.0, metavar="TAU",
                      kind=float)


class GateProjection(SlotProjection):
    """W_alpha, the gate logits of GSA. One per attention position, shared by its layers (registered
    once by the model, like W_phi)."""


@register
class GatedSlotAttention(SlotControl, Strategy):
    """GSA's gated recurrence over n slots. ``shared``: the position's GateProjection."""

    name = "gsa"
    paper = "Zhang et al. 2024, Gated Slot Attention (arXiv 2409.07146), §3"
    modes = frozenset({"causal"})
    projection = GateProjection
    settings = (TEMPERATURE,)

    @classmethod
    def applies_dropout(cls) -> bool:
        return True  # over the slot probabilities, in the parallel form (training only)

    @property
    def temperature(self) -> float:
        return float(self.options.get(TEMPERATURE))

    def log_gates(self, x: torch.Tensor, valid: Optional[torch.Tensor]) -> torch.Tensor:
        """x [B, N, C] -> g = log a [B, H, N, n] in fp32 (fp64 stays), 0 at padding."""
        logits = self.slot_logits(x)
        gates = F.logsigmoid(logits.to(compute_dtype(logits.dtype))) / self.temperature
        if valid is not None:
            gates = gates.masked_fill(~valid[:, None, :, None], 0.0)
        return gates

    def naive(self, q, k, v, x, valid, keep=None, p=0.0):
        """The recurrence of the module docstring row by row, log a = log(sigmoid(W_alpha x) ** (1 / tau)),
        0 at padding."""
        B, N = x.shape[:2]
        logits = self.shared(x).view(B, N, self.num_heads, self.memory_size).permute(0, 2, 1, 3)
        log_gates = F.logsigmoid(logits) / self.temperature
        if valid is not None:
            log_gates = log_gates.masked_fill(~valid[:, None, :, None], 0.0)
        return reference.reference_causal_gsa(q, k, v, log_gates, self.scale, dropout_p=p, dropout_mask=keep)

    def causal(self, q, k, v, x, valid):
        keep = self.keep_mask((*q.shape[:3], self.memory_size), q.device)  # [B, H, N, n]: row, slot
        return causal_gsa(q, k, v, self.log_gates(x, valid), scale=self.scale,
                          dropout_p=0.0 if keep is None else self.read_dropout(), dropout_mask=keep,
                          backend=self.backend)

    def step(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        return self.extend(q, k, v, x, valid, state)

    def extend(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        gates = self.log_gates(x, valid)
        previous = GSAState(**state) if state else None
        if q.shape[2] == 1:
            out, new = causal_gsa_step(q, k, v, gates, previous, scale=self.scale, backend=self.backend,
                                       in_place=advance_in_place(previous))
        else:  # several tokens: continue the chunked op from the saved memories
            out, new = causal_gsa(q, k, v, gates, scale=self.scale, initial_state=previous, return_state=True,
                                  backend=self.backend)
        return out, new._asdict()
