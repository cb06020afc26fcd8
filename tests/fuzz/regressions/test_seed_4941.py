"""Fuzz regression (seed 4941): wrong, compiled original: output 0: non-finite values differ at 8 position(s); compiled optimized: output 0; 1 seed(s) like it."""

from rewrite.ir.builder import GraphBuilder
from tests.fuzz.oracle import check


def build():
    b = GraphBuilder("fuzz4941")
    v0 = b.input("x0", (4, 1))
    v1 = b.input("x1", (1, 1, 5, 2))
    v2 = b.op(
        "resize",
        v1,
        size=(8, 2),
        mode="bilinear",
        align_corners=0,
        coord="torch",
        nearest_mode="round_prefer_floor",
        scale_h=0.0,
        scale_w=0.0,
    )
    return b.build([v2])


def test_fuzz_seed_4941():
    outcome = check(build(), seed=4941)
    assert not outcome.failed, outcome.detail
