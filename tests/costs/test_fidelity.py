"""Cost-model fidelity: Spearman by hand, random extraction, measured ranking of candidates."""

import math
import random

import pytest
import torch

from costs.fidelity import fidelity, ranks, spearman
from rewrite import GraphBuilder
from rewrite.extract.egraph_data import EGraphData, ENode
from rewrite.extract.greedy import ExtractionError
from rewrite.extract.ilp import is_valid_selection
from rewrite.extract.sample import random_select, sample_graphs, sample_selections


def test_ranks_and_spearman():
    assert ranks([10, 30, 20, 20]) == [1.0, 4.0, 2.5, 2.5]
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)  # 1 - 6 * 4 / (5 * 24)
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(0.9486832980505138)  # ties: Pearson on ranks
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))


def _cyclic_egraph():
    n = lambda nid, op, kids: ENode(nid, op, {}, kids)
    classes = {
        "x": [n("x0", "input", ())],
        "A": [n("a_cyc", "relu", ("B",)), n("a_leaf", "exp", ("x",)), n("a_tanh", "tanh", ("x",))],
        "B": [n("b_cyc", "identity", ("A",)), n("b_leaf", "tanh", ("x",))],
        "R": [n("r0", "add", ("A", "B")), n("r1", "mul", ("B", "A"))],
    }
    return EGraphData(classes, {c: (4,) for c in classes}, ["R"])


def test_random_select_is_valid_and_varied():
    data = _cyclic_egraph()
    rng = random.Random(0)
    sels = [random_select(data, rng) for _ in range(200)]
    assert all(is_valid_selection(data, s) for s in sels)
    distinct = {frozenset(n.id for n in s.values()) for s in sels}
    # acyclic choices: R in 2 ways x (A leaf/tanh with B cyc or leaf, or A cyc with B leaf) = 2 x 5
    assert len(distinct) == 10
    assert len(sample_selections(data, 50, seed=1)) == 10  # no more distinct ones exist
    prefer = {"R": data.classes["R"][0], "A": data.classes["A"][1], "B": data.classes["B"][1]}
    always = random_select(data, random.Random(3), prefer, p_random=0.0)
    assert {n.id for n in always.values()} == {"r0", "a_leaf", "b_leaf", "x0"}
    stuck = EGraphData({"A": [ENode("a", "relu", {}, ("A",))]}, {"A": (4,)}, ["A"])
    with pytest.raises(ExtractionError):
        random_select(stuck, rng)


def _qkv_graph():
    torch.manual_seed(0)
    b = GraphBuilder("qkv")
    x = b.input("x", (16, 32))
    outs = [b.matmul(x, b.weight(f"w{i}", torch.randn(32, 32) / 6)) for i in range(3)]
    return b.build([b.add(b.add(outs[0], outs[1]), outs[2])])


def test_sampled_graphs_are_distinct_and_correct():
    from rewrite.egraph.saturate import Limits, saturate
    from rewrite.extract.egraph_data import read_serialized
    from rewrite.rulelang.loader import load_rules
    from rewrite.verification.numeric import verify

    g = _qkv_graph()
    data = read_serialized(saturate(g, load_rules(), Limits(iterations=6, nodes=5000, seconds=10)).serialized())
    graphs = sample_graphs(data, g, 6, seed=0)
    assert len(graphs) >= 3
    assert len({gr.pretty() for gr in graphs}) == len(graphs)
    for gr in graphs:
        gr.validate()
        assert verify(g, gr).ok


def _matmul_graph(n: int, extra_weight_work: bool = False):
    torch.manual_seed(n)
    b = GraphBuilder(f"mm{n}")
    x = b.input("x", (n, n))
    w = b.weight("w", torch.randn(n, n) / n)
    if extra_weight_work:  # weight-only: folded into a weight before timing, free in the prediction
        w = b.matmul(w, b.weight("v", torch.randn(n, n) / n))
    return b.build([b.relu(b.matmul(x, w))])


def test_fidelity_compares_predictions_with_measurements(monkeypatch):
    """The plumbing and the scores, on deterministic "measurements" (timing itself is bench/'s business)."""
    from costs import fidelity as fid
    from costs.analytical import AnalyticalCost
    from costs.model import graph_cost

    model = AnalyticalCost()
    graphs = [_matmul_graph(384), _matmul_graph(16, extra_weight_work=True), _matmul_graph(128)]
    # weight-only work is precomputed: priced like the plain 16x16 graph
    assert graph_cost(graphs[1], model) == pytest.approx(graph_cost(_matmul_graph(16), model))
    seen = []

    def fake_measure(gs, repeats, warmup, seed, on_progress):
        seen.append((len(gs), repeats, warmup))
        return [3e-3, 1e-5, 2e-4]  # the sizes' order: 384 > 128 > 16

    monkeypatch.setattr(fid, "measure_graphs", fake_measure)
    res = fidelity(graphs, model, repeats=5, warmup=1)
    assert seen == [(3, 5, 1)]
    assert res["candidates"] == 3 and res["measured"] == [3e-3, 1e-5, 2e-4]
    assert res["spearman"] == pytest.approx(1.0)  # the model ranks the three sizes in the same order
    rel = [abs(p - m) / m for p, m in zip(res["predicted"], res["measured"])]
    assert res["median_rel_err"] == pytest.approx(sorted(rel)[1])


def test_agreement_scores():
    from costs.fidelity import agreement

    r = agreement([1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 4.0, 3.0])
    assert r["spearman"] == pytest.approx(0.6) and r["candidates"] == 4
    assert r["median_rel_err"] == pytest.approx((1 / 3 + 1 / 2) / 2)  # |p - m| / m = 1/2, 1, 1/4, 1/3
