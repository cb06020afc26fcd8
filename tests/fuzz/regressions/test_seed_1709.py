"""Fuzz regression (seed 1709): wrong, optimized graph: output 0: non-finite values differ at 4 position(s); compiled optimized: output 0: ; 2 seed(s) like it.

An input row holding -inf gives (x @ w1) @ w2 = NaN (inf - inf) but x @ (w1 @ w2) = +-inf, which
maximum(., x) turns into x: IEEE order carried on by a later op, which the oracle now calls imprecise
where the inputs hold an infinity (``tests.fuzz.oracle._inf_order_only``)."""

import torch

from rewrite.ir.builder import GraphBuilder
from tests.fuzz.oracle import check


def build():
    b = GraphBuilder("fuzz1709")
    v0 = b.input("x0", (1, 5, 4, 1))
    v1 = b.input("x1", (2,))
    v2 = b.input("x2", (1, 2, 6))
    v3 = b.weight(
        "w1",
        torch.tensor(
            [
                [
                    [-0.5149593353271484, 0.533241868019104, 0.6431112289428711, 0.444041907787323],
                    [1.3706687688827515, 1.809251070022583, -0.768388032913208, 0.5164505839347839],
                    [-1.701214075088501, -0.43934008479118347, -0.4708041846752167, 0.7018314599990845],
                    [1.1912729740142822, 1.374746561050415, -0.9683739542961121, -0.6855601668357849],
                    [-0.9357479810714722, -1.270133137702942, 1.9212390184402466, 0.9513144493103027],
                    [0.2745506465435028, -0.14003629982471466, -0.8121199607849121, 1.541763186454773],
                ]
            ],
            dtype=torch.float32,
        ),
    )
    v4 = b.op("matmul", v2, v3)
    v5 = b.weight(
        "w2",
        torch.tensor(
            [
                [
                    [
                        0.9437187314033508,
                        -0.13158956170082092,
                        0.2773095965385437,
                        0.11622681468725204,
                        -0.7683578133583069,
                        0.8461605310440063,
                    ],
                    [
                        -0.0742340087890625,
                        0.5725527405738831,
                        -0.20730802416801453,
                        1.3968639373779297,
                        -2.082728147506714,
                        0.6946211457252502,
                    ],
                    [
                        -0.05428313836455345,
                        -0.3916685879230499,
                        1.4088013172149658,
                        0.7508342862129211,
                        -0.31094300746917725,
                        0.30891215801239014,
                    ],
                    [
                        0.5413230657577515,
                        -1.154744267463684,
                        -0.32428351044654846,
                        0.9318304657936096,
                        -0.28000161051750183,
                        1.3757500648498535,
                    ],
                ]
            ],
            dtype=torch.float32,
        ),
    )
    v6 = b.op("matmul", v4, v5)
    v7 = b.op("maximum", v6, v2)
    v8 = b.input("x3", (5,))
    return b.build([v7])


def test_fuzz_seed_1709():
    outcome = check(build(), seed=1709)
    assert not outcome.failed, outcome.detail
