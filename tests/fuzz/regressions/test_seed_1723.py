"""Fuzz regression (seed 1723): wrong, compiled original: output 1: non-finite values differ at 5 position(s); compiled optimized: output 1; 3 seed(s) like it."""

import torch

from rewrite.ir.builder import GraphBuilder
from tests.fuzz.oracle import check


def build():
    b = GraphBuilder("fuzz1723")
    v0 = b.input("x0", (2, 1))
    v1 = b.weight(
        "w0", torch.tensor([[-0.6530978679656982, 1.4184619188308716, 0.09239799529314041]], dtype=torch.float32)
    )
    v2 = b.weight(
        "w1", torch.tensor([0.9513127207756042, -0.5910934209823608, -0.678188145160675], dtype=torch.float32)
    )
    v3 = b.op("matmul_bias_act", v0, v1, v2, act="sigmoid")
    v4 = b.weight(
        "w2",
        torch.tensor(
            [
                [-1.2121508121490479, -0.5458062291145325, -0.09506987780332565],
                [1.0931593179702759, -0.7492569088935852, -0.885312557220459],
            ],
            dtype=torch.float32,
        ),
    )
    v5 = b.op("power", v4, v3)
    v6 = b.input("x1", (1, 1, 4, 3))
    return b.build([v5])


def test_fuzz_seed_1723():
    outcome = check(build(), seed=1723)
    assert not outcome.failed, outcome.detail
