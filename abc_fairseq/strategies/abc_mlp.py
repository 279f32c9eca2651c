"""ABC_MLP (paper §4, Eq. 12) and its ReLU / sigmoid variants (Appendix C.2, Table 7).

Per head, l_i = W_phi x_i in R^n (W_phi tied across layers), alpha_i = f(l_i) > 0 and
    phi_i = alpha_i / sum_j alpha_j      (sum over all real tokens; over the prefix j <= i in causal
                                          attention, footnote 5 / Appendix B.1)
with
    abc          f(l) = exp(l)
    abc-relu     f(l) = relu(l) + EPS_RELU   (EPS_RELU = 1e-6: a slot every token leaves at 0 still
                 has a positive normaliser, t * EPS_RELU after t tokens, and then stores the mean)
    abc-sigmoid  f(l) = sigmoid(l)          (never 0, no epsilon needed)
Every variant runs through the exp-based ops with logits log f(l): exp(log f(l)) = f(l), and the
ops' log-space normaliser keeps the prefix sums exact. Padding gets the logit PAD_LOGIT (causal) or
-inf (bidirectional), so its alpha is exactly 0; the normaliser is never 0 for a prefix holding a real
token, and rows that have seen only padding give finite outputs that are ignored.

Causal training: the chunked ``causal_abc`` op, O(N (n + C)) memory. Decoding state per head:
K~, V~ [n, d] and the log-normaliser [n].
"""

from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from ..ops import ABCState, abc_memory, abc_read, causal_abc, causal_abc_step
from . import reference
from ._common import PAD_LOGIT, advance_in_place, compute_dtype
from .base import Memory, State, Strategy
from .phi import PhiProjection, SlotControl
from .registry import register

EPS_RELU = 1e-6


@register
class ABCMLP(SlotControl, Strategy):
    """ABC_MLP with exp control (the paper's model). ``shared``: the position's PhiProjection."""

    name = "abc"
    paper = "§4, Eq. 12 (Table 1: ABC_MLP)"
    projection = PhiProjection

    dropout_through_keep_mask = False  # causal_abc and abc_read draw the mask (tested in tests/ops)

    @classmethod
    def applies_dropout(cls) -> bool:
        return True  # over the slot probabilities, in causal_abc and abc_read (training only)

    def log_alpha(self, logits: torch.Tensor) -> torch.Tensor:
        """log f(l): the logits the exp-based ops take (here f = exp: the logits themselves, in
        their own dtype; the ops compute in fp32 whatever they are given)."""
        return logits

    def control_logits(self, x: torch.Tensor, valid: Optional[torch.Tensor], pad_value: float) -> torch.Tensor:
        """x [B, N, C] -> log alpha [B, H, N, n]: fp32 (fp64 stays) with ``pad_value`` at padding
        (PAD_LOGIT has no half-precision value); without padding, as ``log_alpha`` gives it."""
        logits = self.log_alpha(self.slot_logits(x))
        if valid is not None:
            logits = logits.to(compute_dtype(logits.dtype)).masked_fill(~valid[:, None, :, None], pad_value)
        return logits

    def naive(self, q, k, v, x, valid, keep=None, p=0.0):
        """Eq. 12 over the prefix (causal) or the whole sequence: alpha_i = f(W_phi x_i)."""
        B, N = x.shape[:2]
        logits = self.shared(x).view(B, N, self.num_heads, self.memory_size).permute(0, 2, 1, 3)
        return reference.naive_abc(q, k, v, self.log_alpha(logits), valid, self.scale, self.mode == "causal",
                                   keep, p)

    def causal(self, q, k, v, x, valid):
        return causal_abc(q, k, v, self.control_logits(x, valid, PAD_LOGIT), scale=self.scale,
                          dropout_p=self.read_dropout(), backend=self.backend)

    def step(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        return self.extend(q, k, v, x, valid, state)

    def extend(self, q, k, v, x, valid, state: Optional[State]) -> Tuple[torch.Tensor, State]:
        logits = self.control_logits(x, valid, PAD_LOGIT)
        previous = ABCState(**state) if state else None
        if q.shape[2] == 1:
            out, new = causal_abc_step(q, k, v, logits, previous, scale=self.scale, backend=self.backend,
                                       in_place=advance_in_place(previous))
        else:  # several tokens: continue the chunked op from the saved memory
            out, new = causal_abc(q, k, v, logits, scale=self.scale, initial_state=previous,
                                  return_state=True, backend=self.backend)
        return out, new._asdict()

    def memory(self, k, v, x, valid) -> Memory:
        # The logits are handed over, not kept: abc_memory frees them once phi exists.
        key_memory, value_memory = abc_memory(k, v, self.control_logits(x, None, PAD_LOGIT),
                                              None if valid is None else ~valid, overwrite_logits=True,
                                              backend=self.backend)
        return {"key_memory": key_memory, "value_memory": value_memory}

    def read(self, q, memory: Memory):
        return abc_read(q, memory["key_memory"], memory["value_memory"], scale=self.scale,
                        dropout_p=self.read_dropout(), backend=self.backend)


@register
class ABCMLPReLU(ABCMLP):
    """ABC_MLP with alpha = relu(W_phi x) + EPS_RELU (Table 7, MLP-ReLU)."""

    name = "abc-relu"
    paper = "Appendix C.2, Table 7 (MLP-ReLU)"

    def log_alpha(self, logits):
        return torch.log(torch.relu(logits.to(compute_dtype(logits.dtype))) + EPS_RELU)


@register
class ABCMLPSigmoid(ABCMLP):
    """ABC_MLP with alpha = sigmoid(W_phi x) (Table 7, MLP-sigmoid)."""

    name = "abc-sigmoid"
    paper = "Appendix C.2, Table 7 (MLP-sigmoid)"

    def log_alpha(self, logits):
        return F.logsigmoid(logits.to(compute_dtype(logits.dtype)))
