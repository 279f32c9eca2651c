"""Shared by the strategy tests: tiny float64 problems run fastest on one thread (intra-op
parallelism only adds synchronisation at these sizes, badly so on a busy machine)."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
