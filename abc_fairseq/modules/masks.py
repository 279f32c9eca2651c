"""Masks as ABC sees them: padding that must never be written, and fairseq's future mask."""

from typing import Optional

import torch

# Logit given to padding in causal ABC. Finite on purpose: the causal op anchors exponents on the
# prefix normaliser, and a prefix made only of -inf (left padding) would give inf - inf = NaN.
# With this value exp(PAD_LOGIT - g) is exactly 0 (fp32 and fp64) once any real token has been
# seen, so padding never reaches a real token's memory; rows that only see padding stay finite.
PAD_LOGIT = -1e30

# An additive float mask entry at or below this value counts as "masked" (fairseq uses -inf;
# some callers use -1e8 or -1e4 in half precision).
_MASKED_BELOW = -1e4


def mask_padding_logits(phi_logits: torch.Tensor, key_padding_mask: Optional[torch.Tensor]) -> torch.Tensor:
    """phi_logits: [B, H, N, n]; key_padding_mask: [B, N] bool, True at padding.

    Returns the logits in fp32 (fp64 stays fp64) with padding set to ``PAD_LOGIT``. The cast comes
    first because PAD_LOGIT does not fit in fp16.
    """
    if phi_logits.dtype in (torch.float16, torch.bfloat16):
        phi_logits = phi_logits.float()
    if key_padding_mask is None:
        return phi_logits
    return phi_logits.masked_fill(key_padding_mask[:, None, :, None], PAD_LOGIT)


def is_future_mask(attn_mask: torch.Tensor, length: int) -> bool:
    """True when ``attn_mask`` is the standard causal mask of ``length`` rows.

    Accepts the forms fairseq layers pass: [T, T] additive float (0 on and below the diagonal,
    -inf or a large negative number above it) or bool/uint8 (True/1 above the diagonal).
    """
    if attn_mask.dim() != 2 or attn_mask.shape != (length, length):
        return False
    above = torch.ones(length, length, dtype=torch.bool, device=attn_mask.device).triu(1)
    if attn_mask.dtype in (torch.bool, torch.uint8):
        return bool(torch.equal(attn_mask.to(torch.bool), above))
    masked = attn_mask <= _MASKED_BELOW
    return bool(torch.equal(masked, above)) and bool((attn_mask[~above] == 0).all())


class FutureMaskValidator:
    """Checks that an attention mask is the causal mask, once per distinct mask tensor.

    fairseq's decoder hands every layer a slice of one cached mask, so remembering the last
    mask checked (storage, shape, in-place version) makes the check free after the first call
    (and avoids a device sync per layer on GPU).
    """

    def __init__(self):
        self._last_ok = None

    def __call__(self, attn_mask: torch.Tensor, length: int) -> None:
        key = (attn_mask.data_ptr(), tuple(attn_mask.shape), attn_mask.dtype,
               str(attn_mask.device), attn_mask._version)
        if key == self._last_ok:
            return
        if not is_future_mask(attn_mask, length):
            raise ValueError(
                "ABC causal self attention is causal by construction and only accepts the standard "
                f"future mask as attn_mask ([{length}, {length}], masked strictly above the "
                f"diagonal); got a different mask of shape {tuple(attn_mask.shape)}. Custom "
                "attention masks cannot be applied to a bounded memory."
            )
        self._last_ok = key
