"""Fixtures of the kernel tests."""

import pytest


@pytest.fixture(scope="module")
def interpreted_kernels():
    """Triton and the kernels imported afresh under Triton's interpreter for one test module (CPU
    tensors, no GPU), the earlier modules and environment put back afterwards (triton_helpers)."""
    from triton_helpers import interpret_kernels

    yield from interpret_kernels()
