"""The differential fuzzer in the tests: 6 random graphs (fast tier) and 54 more (slow tier) through
optimize and compile, against float64.

``make fuzz N=...`` runs many more in parallel (tests/fuzz/run.py); failures it
finds are shrunk and land in tests/fuzz/regressions/ as their own tests.
"""

import pytest

from tests.fuzz.gen import random_graph
from tests.fuzz.oracle import check

FAST_SEEDS = range(6)  # ~2 s each: the fast tier keeps under its time budget
SLOW_SEEDS = range(6, 60)


@pytest.mark.parametrize("seed", [*FAST_SEEDS, *(pytest.param(s, marks=pytest.mark.slow) for s in SLOW_SEEDS)])
def test_random_graph(seed):
    graph = random_graph(seed)
    outcome = check(graph, seed)
    assert not outcome.failed, f"seed {seed}: {outcome.kind}: {outcome.detail}\n{graph.pretty()}"


def test_generator_covers_the_op_set():
    """Over the fast seeds and a few hundred more, every compute op of the registry appears."""
    from rewrite.ir.ops import OPS, Group
    from tests.fuzz.gen import STEPS

    seen = {n.op for seed in range(400) for n in random_graph(seed)}
    compute = {name for name, d in OPS.items() if d.group is not Group.SOURCE} - STEPS
    assert compute - seen == set()


def test_nan_for_inf_is_float_order_but_finite_for_inf_is_wrong():
    """Fuzz seeds 454 and 1432: a reassociated sum of +inf and -inf gives NaN where the reference
    has inf.  That (and only that) is float order; any finite/non-finite or sign change is wrong.
    Seed 1709: with an infinity among the inputs, ``maximum(NaN, x)`` against ``maximum(-inf, x)``
    carries the order on, so NaN against a finite value is order too; without one it is wrong."""
    import torch

    from tests.fuzz.oracle import _inf_order_only

    inf, nan = float("inf"), float("nan")
    ref = [torch.tensor([1.0, inf, nan, -inf])]
    for inf_in in (False, True):
        assert _inf_order_only(ref, [torch.tensor([1.0, nan, inf, nan])], inf_in) == 3
        assert _inf_order_only(ref, [torch.tensor([1.0, -inf, nan, -inf])], inf_in) == 0  # +inf became -inf
        assert _inf_order_only(ref, [torch.tensor([2.0, nan, nan, -inf])], inf_in) == 0  # a finite value is off
        assert _inf_order_only(ref, [torch.tensor([1.0, 7.0, nan, -inf])], inf_in) == 0  # finite for +inf
    assert _inf_order_only(ref, [torch.tensor([1.0, inf, 5.0, -inf])], False) == 0  # finite where ref is NaN
    assert _inf_order_only(ref, [torch.tensor([1.0, inf, 5.0, -inf])], True) == 1  # ... after an infinite input


def test_reassociated_matmul_chain_with_infinite_inputs_is_not_wrong():
    """Seed 454 shrunk: (x @ w1) @ w2 → x @ (w1 @ w2) meets infinities in another order."""
    import torch

    from rewrite.ir.builder import GraphBuilder

    g = torch.Generator().manual_seed(0)
    b = GraphBuilder("fuzz454")
    x = b.input("x1", (4, 5, 2))
    y = b.op(
        "matmul",
        b.op("matmul", x, b.weight("w1", torch.randn(1, 2, 6, generator=g))),
        b.weight("w2", torch.randn(1, 6, 5, generator=g)),
    )
    outcome = check(b.build([y]), seed=454)
    assert not outcome.failed, outcome.detail
