"""Shared fixtures for the lowering tests (the session's cache directory is set in tests/conftest.py)."""

from __future__ import annotations

import pytest
import torch

from rewrite.config import TEST_TARGET


def pytest_collection_modifyitems(config, items):
    """Under ``EQSAT_TEST_TARGET=cuda`` (make gpu-check) the per-op graphs compile for the GPU; a test of a CPU
    kernel's form (``cpu_form``) has nothing to check there."""
    target = TEST_TARGET.text()
    if target in ("", "llvm"):
        return
    skip = pytest.mark.skip(reason=f"checks a CPU kernel form; EQSAT_TEST_TARGET={target}")
    for item in items:
        if "cpu_form" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    return torch.Generator().manual_seed(1234)
