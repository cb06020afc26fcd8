"""E-graph loading, shape analysis in egglog vs the registry, limits and stop reasons."""

from collections import Counter

import pytest
import torch

from bench.models import load
from rewrite import GraphBuilder
from rewrite.egraph.prelude import EGG_TO_OP
from rewrite.egraph.saturate import Limits, SaturationError, StopReason, saturate
from rewrite.extract.egraph_data import read_serialized
from rewrite.frontends import from_torch
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import parse_rules
from tests.tiers import models


@pytest.mark.parametrize(
    "model", models(["squeezenet", "bert", "nasrnn", "inceptionv3"], fast=("squeezenet", "nasrnn"))
)
def test_egglog_shapes_agree_with_registry(model):
    g = from_torch(*load(model))
    sat = saturate(g, [], Limits(iterations=0))
    raw = sat.serialized()
    data = read_serialized(raw)
    let_class = {info["let"]: cid for cid, info in raw["class_data"].items() if "let" in info}
    assert not data.dropped
    for v, name in sat.encoding.lets.items():
        assert data.shapes[let_class[name]] == g.shape_of(v), (model, v)
    const = g.weight_only()
    for v, name in sat.encoding.lets.items():
        assert (let_class[name] in data.weight_only) == (v.node in const), (model, v)


def _chain_graph():
    b = GraphBuilder("chain")
    x = b.input("x", (4, 8))
    ys = [b.matmul(x, b.weight(f"w{i}", torch.randn(8, 8))) for i in range(6)]
    acc = ys[0]
    for y in ys[1:]:
        acc = b.add(acc, y)
    return b.build([acc])


def test_node_limit_is_overshot_by_at_most_one_bounded_step():
    g = _chain_graph()
    lim = Limits(iterations=50, nodes=300, seconds=30, match_limit=50)
    sat = saturate(g, load_rules(), lim)
    assert sat.stop_reason is StopReason.NODE_LIMIT
    before_last = sat.iterations[-2].enodes if len(sat.iterations) > 1 else 0
    assert before_last < lim.nodes <= sat.enodes
    # one iteration adds at most (rules x budget x rhs size) e-nodes
    assert sat.enodes - before_last <= 60 * lim.match_limit * 8


def test_iteration_and_time_limits_and_saturation():
    g = _chain_graph()
    assert saturate(g, load_rules(), Limits(iterations=1)).stop_reason is StopReason.ITERATION_LIMIT
    assert saturate(g, load_rules(), Limits(iterations=1000, nodes=10**7, seconds=0.05)).stop_reason in (
        StopReason.TIME_LIMIT,
        StopReason.NODE_LIMIT,
    )
    relu = parse_rules("relu-idem: (relu (relu ?x)) => (relu ?x)")
    b = GraphBuilder()
    x = b.input("x", (3,))
    small = b.build([b.relu(b.relu(x))])
    sat = saturate(small, relu, Limits(iterations=10))
    assert sat.stop_reason is StopReason.SATURATED and sat.rules_fired["relu-idem"] >= 1
    assert [s.enodes for s in sat.iterations][-1] == sat.enodes


@pytest.mark.parametrize(
    "lim, msg",
    [
        (Limits(iterations=-1), "iteration limit"),
        (Limits(nodes=0), "node limit"),
        (Limits(seconds=0), "time limit"),
        (Limits(match_limit=0), "match limit"),
    ],
)
def test_impossible_limits_are_rejected(lim, msg):
    with pytest.raises(ValueError, match=msg):
        saturate(_chain_graph(), [], lim)


def test_unsound_rule_that_changes_shape_is_caught():
    bad = parse_rules("bad-transpose: (relu ?x) => (transpose ?x :perm [1 0])", "bad.rules")
    b = GraphBuilder()
    x = b.input("x", (2, 3))
    g = b.build([b.relu(x)])
    with pytest.raises(SaturationError, match="unsound"):
        saturate(g, bad, Limits(iterations=3))


def test_iteration_figures_come_from_egglogs_reports():
    """Per-rule matches/applied and phase times from the run report; sizes from the size report."""
    sat = saturate(_chain_graph(), load_rules(), Limits(iterations=4, nodes=100_000, match_limit=5))
    for s in sat.iterations:
        assert set(s.applied) <= set(s.matches) and all(n <= s.matches[k] for k, n in s.applied.items())
        assert min(s.search_seconds, s.apply_seconds, s.rebuild_seconds, s.analysis_seconds) >= 0
        assert set(s.rule_seconds) == set(s.matches)
    # over the budget of 5 a rule is held back for the step: found but not applied; the budget then grows
    assert any(s.matches[k] > s.applied.get(k, 0) for s in sat.iterations for k in s.matches)
    assert sat.match_limit > 5
    assert sat.rules_fired == sum((Counter(s.applied) for s in sat.iterations), Counter())
    nodes = [n for n in sat.serialized()["nodes"].values() if n["op"] in EGG_TO_OP]
    assert (len(nodes), len({n["eclass"] for n in nodes})) == (sat.enodes, sat.eclasses)


@pytest.mark.slow  # ~7 s; bounded steps and the node limit are checked fast above
def test_bounded_families_run_in_the_first_iteration_only():
    """A rule of a bounded family (``split``) sees the input graph, not what other rules build later."""

    def chain(depth: int):
        b = GraphBuilder()
        v = b.input("x", (4, 4))
        for _ in range(depth):
            v = b.relu(v)
        return b.build([b.tanh(v)])

    grow = parse_rules("grow: (tanh ?x) => (tanh (relu (relu ?x)))", family="algebra")
    shrink = parse_rules("shrink: (relu (relu ?x)) => (relu ?x)", family="split")
    limits = Limits(iterations=4, nodes=10_000, seconds=10)
    built = saturate(chain(0), grow + shrink, limits)
    assert [s.matches for s in built.iterations] == [{"grow": n} for n in (1, 2, 3, 4)]
    given = saturate(chain(2), grow + shrink, limits)
    assert given.iterations[0].matches == {"shrink": 1, "grow": 1}
    assert all("shrink" not in s.matches for s in given.iterations[1:])


def test_time_limit_stops_before_an_iteration_predicted_to_run_past_it():
    """egglog cannot be interrupted inside an iteration: the next one is estimated from the last one's
    time, scaled by how much it grew the e-graph, and not started when it would end past the limit."""
    from rewrite.egraph.saturate import IterationStat, _next_iteration_estimate, _Progress

    state = _Progress(enodes=100, eclasses=50, budget=10, cap=100)
    assert _next_iteration_estimate(state, 0) == 0.0  # nothing run yet: always start
    state.record(IterationStat(1, 200, 90, 1.0, {}))
    assert _next_iteration_estimate(state, 0) == pytest.approx(1.0)  # the first: its own time
    state.record(IterationStat(2, 600, 200, 2.0, {}))
    assert _next_iteration_estimate(state, 0) == pytest.approx(6.0)  # tripled the e-graph: 3 x 2 s
    state.record(IterationStat(3, 300, 150, 1.5, {}))
    assert _next_iteration_estimate(state, 0) == pytest.approx(1.5)  # a shrinking e-graph: no discount


def _shared_lhs_graph(k: int):
    b = GraphBuilder()
    x = b.input("x", (1, 64))
    return b.build([b.relu(b.matmul(x, b.weight(f"w{i}", torch.randn(64, 32)))) for i in range(k)])


@pytest.mark.parametrize("k", [3, 5])
def test_least_merges_only_contiguous_runs_of_weights(k):
    """``(least (wfirst ?w2))`` merges each merged weight with the next weight only: k matmuls of one input
    build the k(k-1)/2 runs w_i..w_j (one match each once saturated), where the rule without it builds every
    subset of two or more (2^k - k - 1); the merge of all k is among the runs, and extraction takes it."""
    merge = next(r for r in load_rules() if r.name == "merge-matmul-shared-lhs")
    limits = Limits(iterations=20, nodes=10_000, seconds=30)
    sat = saturate(_shared_lhs_graph(k), [merge], limits)
    assert sat.stop_reason is StopReason.SATURATED
    assert sat.iterations[-1].matches[merge.name] == k * (k - 1) // 2
    unguarded = parse_rules(merge.text.replace("(least (wfirst ?w2))", ""), family="multi")
    assert unguarded[0].least is None
    assert saturate(_shared_lhs_graph(k), unguarded, limits).iterations[-1].matches[merge.name] == 2**k - k - 1
    shapes = read_serialized(sat.serialized()).shapes.values()
    assert (1, 32 * k) in shapes and (64, 32 * k) in shapes  # the merge of all k: its matmul and its weight
