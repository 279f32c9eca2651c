"""The chunk scan (``ops/causal/triton/scan.py``) under Triton's interpreter against the sequential
recurrence it computes, written out in float64: chunk counts below, at and across several groups
of ``SCAN_GROUP`` chunks (a group loaded and combined at once), forward with and without a carried
memory and ABC's normalisers, and in reverse; slots that nothing has written (-inf totals).
"""

import importlib.util

import pytest
import torch

if importlib.util.find_spec("triton") is None:  # not imported here: see triton_helpers
    pytest.skip("triton is not installed", allow_module_level=True)

pytestmark = [pytest.mark.usefixtures("interpreted_kernels"),
              pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")]

Z, n, W = 2, 3, 24  # n * W = 72: fewer lanes than a scan block (128), so some are masked


def _sequential(sums, decay, carry, reverse):
    """The memories entering each chunk in scan order, and the one after the last, float64."""
    nc = sums.shape[1]
    acc = torch.zeros_like(sums[:, 0]) if carry is None else carry.clone()
    out = torch.empty_like(sums)
    for c in (reversed(range(nc)) if reverse else range(nc)):
        out[:, c] = acc
        acc = decay[:, c, :, None] * acc + sums[:, c]
    return out, acc


def _normalised(sums, totals, g_before, carry):
    """ABC's forward scan from chunk totals, float64: (memories, final, e_prev, e_end, decay)."""
    e_end = torch.logaddexp(g_before[:, None], torch.logcumsumexp(totals, dim=1))
    e_prev = torch.cat([g_before[:, None], e_end[:, :-1]], dim=1)
    decay = torch.where(e_end == float("-inf"), 0.0, torch.exp(e_prev - e_end))
    written = torch.where(totals == float("-inf"), 0.0, torch.exp(totals - e_end))[..., None] * sums
    mem, final = _sequential(written, decay, carry, reverse=False)
    return mem, final, e_prev, e_end, decay


@pytest.mark.parametrize("nc,group", [(1, None), (8, None), (9, None), (20, None), (9, "1"), (20, "4")])
@pytest.mark.parametrize("mode", ["forward", "forward carried", "reverse", "normalised", "normalised carried"])
def test_scan_equals_the_sequential_recurrence(nc, group, mode, monkeypatch):
    """nc: one group, exactly one, one more, 8 + 8 + 4 chunks; ``ABC_TRITON_SCAN_GROUP`` 1 (one chunk
    a step, the scan before the grouped one) and 4."""
    from abc_fairseq.ops.causal.triton import function

    if group is not None:
        monkeypatch.setenv("ABC_TRITON_SCAN_GROUP", group)

    gen = torch.Generator().manual_seed(nc)
    sums = torch.randn(Z, nc, n, W, generator=gen, dtype=torch.float64)
    carried = "carried" in mode
    carry = torch.randn(Z, n, W, generator=gen, dtype=torch.float64) if carried else None
    mem = sums.float().contiguous()
    final = torch.empty(Z, n, W) if mode != "reverse" else None
    kernel_carry = None if carry is None else carry.float().contiguous()
    if mode.startswith("normalised"):
        totals = 30.0 * torch.randn(Z, nc, n, generator=gen, dtype=torch.float64)
        totals[0, : nc // 2 + 1, 0] = float("-inf")  # a slot nothing writes for a while
        totals[1, :, 1] = float("-inf")  # and one nothing ever writes
        g_before = 10.0 * torch.randn(Z, n, generator=gen, dtype=torch.float64) if carried \
            else torch.full((Z, n), float("-inf"), dtype=torch.float64)
        if carried:
            g_before[1, 1] = float("-inf")  # an empty prefix in the slot nothing writes (its memory is 0)
            carry[1, 1] = 0.0
            kernel_carry = carry.float().contiguous()
        outs = [torch.empty(Z, nc, n) for _ in range(3)]  # decay, e_prev, e_end
        function._scan(mem, outs[0], kernel_carry, final, False, totals.float().contiguous(),
                       g_before.float().contiguous() if carried else None, outs[1], outs[2])
        want, want_final, *normalisers = _normalised(sums, totals, g_before, carry)
        for got, expected, name in zip((outs[1], outs[2], outs[0]), normalisers, ("e_prev", "e_end", "decay")):
            torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-5, msg=name)
    else:
        decay = torch.rand(Z, nc, n, generator=gen, dtype=torch.float64)
        decay[:, ::3, 0] = 0.0  # a decay of 0 forgets everything before
        function._scan(mem, decay.float().contiguous(), kernel_carry, final, mode == "reverse")
        want, want_final = _sequential(sums, decay, carry, mode == "reverse")
    torch.testing.assert_close(mem.double(), want, rtol=1e-5, atol=1e-5)
    if final is not None:
        torch.testing.assert_close(final.double(), want_final, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("value", ["3", "32", "eight"])
def test_a_scan_group_the_kernel_cannot_take_is_refused_by_name(value, monkeypatch):
    from abc_fairseq.ops.triton import sizes

    monkeypatch.setenv("ABC_TRITON_SCAN_GROUP", value)
    with pytest.raises(ValueError, match="ABC_TRITON_SCAN_GROUP"):
        sizes.scan_group()


def test_the_interpreter_sets_up_the_language_once_per_launch(monkeypatch):
    """``ops/triton/interpreter``: a launch sets up triton.language a fixed number of times, however
    many helper calls it makes (the scan calls one per chunk of each group), and computes the same."""
    from triton.runtime import interpreter

    from abc_fairseq.ops.causal.triton import function
    from abc_fairseq.ops.triton.interpreter import language_once_per_launch

    assert language_once_per_launch()  # applied when the kernels were imported; applying again is a no-op
    set_ups = []
    original = interpreter._patch_builtin
    monkeypatch.setattr(interpreter, "_patch_builtin", lambda *a: (set_ups.append(a[0]), original(*a))[1])
    counts = {}
    for nc in (2, 1, 24):  # the first launch warms up (Triton's library helpers gain names after it)
        set_ups.clear()
        gen = torch.Generator().manual_seed(nc)
        sums, decay = torch.randn(Z, nc, n, W, generator=gen), torch.rand(Z, nc, n, generator=gen)
        mem = sums.clone()
        function._scan(mem, decay, None, torch.empty(Z, n, W), False)
        want, _ = _sequential(sums.double(), decay.double(), None, False)
        torch.testing.assert_close(mem.double(), want, rtol=1e-5, atol=1e-5)
        counts[nc] = len(set_ups)
    assert 0 < counts[1] == counts[24] <= 12, counts  # 96 helper calls at 24 chunks
