"""``triton.jit`` helpers shared by the bidirectional and decoding-step kernels: which sequence a
program serves, and the column ranges of its head tiles."""

import triton
import triton.language as tl

from .interpreter import language_once_per_launch

language_once_per_launch()  # CPU runs under Triton's interpreter: see ``interpreter``


@triton.jit
def sequence_program(H):
    """(z, b, h): the sequence z = b * H + h this program serves (grid axis 0)."""
    z = tl.program_id(0)
    return z, z // H, z % H


@triton.jit
def head_columns(BK: tl.constexpr, BV: tl.constexpr):
    """Column ranges of key-width and value-width tiles."""
    return tl.arange(0, BK), tl.arange(0, BV)
