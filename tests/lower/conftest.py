"""Shared fixtures for the lowering tests (the session's cache directory is set in tests/conftest.py)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def rng():
    return torch.Generator().manual_seed(1234)
