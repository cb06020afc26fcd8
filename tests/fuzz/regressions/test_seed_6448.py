"""Fuzz regression (seed 6448): crash, the compiled original segfaulted: LLVM turned pow(x, float(bool)) into
llvm.powi, whose libgcc routine (__powisf2) the JIT could not resolve and called at address 0 (reduced by hand)."""

import torch

from rewrite.ir.builder import GraphBuilder
from tests.fuzz.oracle import check


def build():
    b = GraphBuilder("fuzz6448")
    v0 = b.input("x0", (4, 1))
    v1 = b.weight("w0", torch.tensor([[0.25]], dtype=torch.float32))
    v2 = b.op("ge", v0, v1)
    v3 = b.op("cast", v2, dtype="float32")
    v4 = b.input("x2", (4, 1))
    v5 = b.op("power", v4, v3)
    return b.build([v5])


def test_fuzz_seed_6448():
    outcome = check(build(), seed=6448)
    assert not outcome.failed, outcome.detail
