"""Helpers shared by the lowering tests (imported by name: this folder is on sys.path)."""

from __future__ import annotations

import torch


def rel_err(got: torch.Tensor, ref: torch.Tensor) -> float:
    """max |got - ref| / max |ref| (norm-wise relative error)."""
    assert tuple(got.shape) == tuple(ref.shape), (got.shape, ref.shape)
    scale = ref.abs().max().item() or 1.0
    return (got - ref).abs().max().item() / scale


def check_graph(graph, inputs=None, tol: float = 1e-4, **kw):
    """Compile ``graph``, run it on ``inputs`` (random by default) and compare with ``graph.run``."""
    from lower import compile_graph
    inputs = inputs if inputs is not None else graph.random_inputs(0)
    cg = compile_graph(graph, **kw)
    got = cg(inputs)
    ref = graph.run(inputs)
    assert len(got) == len(ref)
    for k, (a, b) in enumerate(zip(got, ref)):
        e = rel_err(a, b)
        assert e <= tol, f"output {k}: relative error {e:.3g} > {tol}\n{cg.plan}"
    return cg
