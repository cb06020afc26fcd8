"""The differential fuzzer's fast tier: 30 random graphs through optimize and compile, against float64.

``make fuzz N=...`` runs many more in parallel (tests/fuzz/run.py); failures it
finds are shrunk and land in tests/fuzz/regressions/ as their own tests.
"""

import pytest

from tests.fuzz.gen import random_graph
from tests.fuzz.oracle import check

FAST_SEEDS = range(30)


@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_random_graph(seed):
    graph = random_graph(seed)
    outcome = check(graph, seed)
    assert not outcome.failed, f"seed {seed}: {outcome.kind}: {outcome.detail}\n{graph.pretty()}"


def test_generator_covers_the_op_set():
    """Over the fast seeds and a few hundred more, every compute op of the registry appears."""
    from rewrite.ir.ops import OPS, Group

    seen = {n.op for seed in range(300) for n in random_graph(seed)}
    compute = {name for name, d in OPS.items() if d.group is not Group.SOURCE}
    assert compute - seen == set()
