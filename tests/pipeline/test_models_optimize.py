"""Every benchmark model optimizes under the default limits, verifies, and gets no more expensive."""

import pytest

from bench.models import MODELS, load
from rewrite.frontends import from_torch
from rewrite.pipeline import optimize
from tests.tiers import models


@pytest.mark.parametrize("name", models(sorted(MODELS)))
def test_model_optimizes_and_verifies(name):
    graph = from_torch(*load(name), name=name)
    result = optimize(graph)
    s = result.stats
    assert s.verified is True, s
    assert s.cost_after <= s.cost_before
    assert s.seconds.total < 60
    result.graph.validate()
    # positional callers rely on the input order
    assert [n.attrs["name"] for n in result.graph.inputs] == [n.attrs["name"] for n in graph.inputs]
