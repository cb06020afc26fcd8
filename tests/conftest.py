"""Fixtures shared by the test files."""

import pytest
import torch


@pytest.fixture
def one_thread():
    """Time with one torch thread: on a shared, oversubscribed machine a second intra-op thread
    waits for a time slice (~20 ms per op), which swamps what these tests look at."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
