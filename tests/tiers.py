"""Test tiers: which built-in models run in the fast tier (``make test``) and which only in ``make test-all``."""

import pytest

FAST_MODELS = ("nasrnn", "squeezenet")  # the two whose whole-model tests take about a second


def models(names, fast=FAST_MODELS):
    """``pytest.param`` per model name; names outside ``fast`` are marked slow."""
    return [pytest.param(n, marks=() if n in fast else pytest.mark.slow) for n in names]
