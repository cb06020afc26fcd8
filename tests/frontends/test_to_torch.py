"""rewrite.to_torch: a graph back to a torch.fx.GraphModule that computes the same thing."""

from __future__ import annotations

import pytest
import torch

import bench.models as bench_models
from rewrite.egraph.limits import Limits
from rewrite.frontends import from_torch, to_torch
from rewrite.ir.builder import GraphBuilder
from rewrite.pipeline import optimize
from tests.tiers import models


def test_builder_graph_with_split_and_weights_round_trips():
    b = GraphBuilder("g")
    x = b.input("x", (4, 6))
    w = b.weight("w", torch.randn(6, 6))
    left, right = b.split(b.matmul(x, w), 1, [2, 4])
    g = b.build([b.relu(left), b.sigmoid(right)])
    gm = to_torch(g)
    assert isinstance(gm, torch.fx.GraphModule)
    xin = torch.randn(4, 6)
    outs = gm(xin)
    assert isinstance(outs, tuple) and len(outs) == 2
    for a, r in zip(outs, g.run([xin])):
        assert torch.equal(a, r)
    g.weights["w"].zero_()  # the module holds a copy
    assert torch.equal(gm(xin)[0], outs[0])
    assert "call_op('matmul'" in gm.code.replace("rewrite_frontends_to_torch_call_op", "call_op")


@pytest.mark.parametrize("name", models(sorted(bench_models.MODELS), fast=()))
def test_builtin_models_original_and_optimized(name):
    module, inputs = bench_models.load(name)
    graph = from_torch(module, inputs, name=name)
    result = optimize(graph, limits=Limits(iterations=2, nodes=20_000, seconds=30), extractor="greedy")
    with torch.no_grad():
        ref = module(*inputs)
    for g in (graph, result.graph):
        out = to_torch(g)(*inputs)
        assert out.shape == ref.shape
        assert torch.allclose(out, ref, rtol=1e-4, atol=1e-4 * max(1.0, ref.abs().max().item()))
