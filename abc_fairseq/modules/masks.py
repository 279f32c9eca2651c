"""fairseq's future mask as ABC sees it: causality is built in, so the mask is only checked."""

import torch

# An additive float mask entry at or below this value counts as "masked" (fairseq uses -inf;
# some callers use -1e8 or -1e4 in half precision).
_MASKED_BELOW = -1e4


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
