"""The tolerance ``verify`` holds an optimized graph to: float32's, or the half type's a graph rounds to."""

from __future__ import annotations

import torch

from rewrite.ir.builder import GraphBuilder
from rewrite.ir.target import FP32_REL_TOL, HALF_REL_TOL
from rewrite.verification.numeric import graph_tolerance, verify


def _conv_bias(half: str | None, fused: bool):
    """A convolution and a bias add, as an import writes them (``half``: inputs, weights and every result rounded to
    it) or with the bias folded into the convolution's sum, which rounds once where the import rounds twice."""
    g = torch.Generator().manual_seed(0)
    b = GraphBuilder("convbias")
    x = b.input("x", (1, 16, 12, 12), half or "float32")
    w, bias = torch.randn(32, 16, 3, 3, generator=g), torch.randn(32, generator=g)
    if half:
        w, bias = w.to(getattr(torch, half)), bias.to(getattr(torch, half))
        x = b.cast(x, dtype="float32")

    def rnd(v):
        return b.cast(b.cast(v, dtype=half), dtype="float32") if half else v

    wv, bv = b.weight("w", w), b.weight("b", bias)
    if half:
        wv, bv = b.cast(wv, dtype="float32"), b.cast(bv, dtype="float32")
    bb = b.op("reshape", bv, shape=(1, 32, 1, 1))
    if fused:
        y = rnd(b.op("add", b.op("conv2d", x, wv, padding=(1, 1)), bb))
    else:
        y = rnd(b.op("add", rnd(b.op("conv2d", x, wv, padding=(1, 1))), bb))
    return b.build([b.cast(y, dtype=half) if half else y])


def test_a_half_graph_is_verified_to_its_type_a_float32_one_to_float32():
    assert graph_tolerance(_conv_bias(None, False)) == FP32_REL_TOL
    for half in HALF_REL_TOL:
        assert graph_tolerance(_conv_bias(half, False)) == HALF_REL_TOL[half]
        # one rounding fewer moves results by a unit of the half type: within its tolerance, not float32's
        v = verify(_conv_bias(half, False), _conv_bias(half, True))
        assert v.ok and v.max_rel_err > FP32_REL_TOL, (half, v)
        assert not verify(_conv_bias(half, False), _conv_bias(half, True), rtol=FP32_REL_TOL).ok
