"""Every benchmark model imports through torch.export and computes what the module computes."""

from __future__ import annotations

import pytest
import torch

import bench.models as bench_models
from rewrite.frontends import from_torch
from tests.tiers import models


@pytest.mark.parametrize("name", models(sorted(bench_models.MODELS), fast=("nasrnn", "squeezenet", "bert")))
def test_model_imports_and_matches_torch(name):
    model, inputs = bench_models.load(name)
    g = from_torch(model, inputs, name=name)
    g.validate()
    assert g.name == name
    assert len(g.inputs) == len(inputs)

    out = g.run(list(inputs))
    with torch.no_grad():
        ref = model(*inputs)
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    assert len(out) == len(refs)
    for a, b in zip(out, refs):
        assert a.shape == b.shape
        scale = max(1.0, b.abs().max().item())
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-4 * scale), (a - b).abs().max().item()

    # linear weights are transposed at import: no run-time transpose reads a weight
    weights = {n.id for n in g.weight_nodes}
    assert not [n for n in g if n.op == "transpose" and n.inputs[0].node in weights]
    # every parameter is captured once, under its qualified name (or <name>_t for linear weights)
    params = dict(model.named_parameters())
    for wname in g.weights:
        base = wname[:-2] if wname.endswith("_t") else wname
        assert base in params or base in dict(model.named_buffers()), wname
