"""Shared helpers for the lowering tests.

Kernels are compiled into a fresh per-session cache directory (hermetic runs)
unless ``EQSAT_CACHE_DIR`` is already set.
"""

from __future__ import annotations

import os
import tempfile

import pytest
import torch

if "EQSAT_CACHE_DIR" not in os.environ:
    os.environ["EQSAT_CACHE_DIR"] = tempfile.mkdtemp(prefix="eqsat-test-kernels-")


@pytest.fixture
def rng():
    return torch.Generator().manual_seed(1234)
