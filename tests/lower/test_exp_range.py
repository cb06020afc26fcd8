"""The compiled exp at the bottom of its range, and the causal softmax that lives there.

``eqsat_exp`` returns 0 below -103.972 (as torch does) without running its core on a value whose product is
subnormal; between -103.972 and -87.3 its results are subnormal and exact.  A softmax over attention scores
masked with float32's lowest value (GPT-2, Llama) reads mostly such lanes."""

from __future__ import annotations

import torch

from rewrite.ir.builder import GraphBuilder
from rewrite.pipeline import compile

EDGES = [
    float("-inf"),
    -3.4028234663852886e38,
    -1e30,
    -1e4,
    -200.0,
    -104.0,
    -103.98,
    -103.96,
    -100.0,
    -95.0,
    -87.4,
    -87.3,
    -1.0,
    0.0,
    1.0,
    88.7,
    89.0,
    float("inf"),
    float("nan"),
]


def test_exp_matches_torch_at_the_bottom_of_its_range():
    b = GraphBuilder("e")
    x = b.input("x", (len(EDGES),))
    run = compile(b.build([b.exp(x)]), threads=1)
    xs = torch.tensor(EDGES)
    got, want = run([xs])[0], torch.exp(xs)
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    ok = ~torch.isnan(want)
    assert torch.equal(got[ok] == 0, want[ok] == 0)  # zero exactly where torch's is, subnormals kept
    torch.testing.assert_close(got[ok], want[ok], rtol=2e-7, atol=0)


def test_a_causally_masked_softmax_matches_torch():
    s = 64
    b = GraphBuilder("s")
    x = b.input("x", (1, 4, s, s))
    run = compile(b.build([b.softmax(x, axis=-1)]), threads=1)
    scores = torch.randn(1, 4, s, s, generator=torch.Generator().manual_seed(0))
    causal = torch.triu(torch.ones(s, s, dtype=torch.bool), 1)
    for fill in (torch.finfo(torch.float32).min, -1e4, float("-inf")):
        masked = scores.masked_fill(causal, fill)
        got, want = run([masked])[0], torch.softmax(masked, -1)
        assert torch.equal(got[..., causal], torch.zeros_like(got[..., causal]))
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)
