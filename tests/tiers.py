"""Test tiers: which built-in models (and which case x epilogue pairs) run in the fast tier (``make test``) and
which only in ``make test-all``."""

import pytest

# the model whose whole-model tests take about a second; nasrnn's optimize and ONNX round trip take 4-5 s each
# (its saturation), so they run in the slow tier, and the fast tier keeps nasrnn in the e-graph loading and
# ILP tests (test_egraph_load, test_ilp, test_egraph)
FAST_MODELS = ("squeezenet",)


def models(names, fast=FAST_MODELS):
    """``pytest.param`` per model name; names outside ``fast`` are marked slow."""
    return [pytest.param(n, marks=() if n in fast else pytest.mark.slow) for n in names]


def rotated(cases, variants, slow=()):
    """``pytest.param(case, variant)`` for every pair; the fast tier takes each case once, with the variants in
    turn (case i with variant i mod len(variants)), the other pairs are marked slow, and so is every pair of a
    case in ``slow``.  Ids ``{variant}-{case}`` for string cases, else ``{variant}-case{i}``."""
    return [
        pytest.param(
            case,
            v,
            marks=() if j == i % len(variants) and case not in slow else pytest.mark.slow,
            id=f"{v}-{case}" if isinstance(case, str) else f"{v}-case{i}",
        )
        for i, case in enumerate(cases)
        for j, v in enumerate(variants)
    ]
