"""The backtracking search (rewrite.search): small graphs with known optima, its knobs, and nasrnn.

Every graph the search returns is checked against its input with ``verify``.
Most tests price graphs with ``unit_cost`` (one per run-time op plus a little per
FLOP, views nearly free) so that which graph is cheapest does not depend on
this machine's measured peaks.
"""

import itertools

import pytest
import torch

from costs.model import graph_cost
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import SearchError, UsageError
from rewrite.ir.graph import Graph
from rewrite.ir.ops import OPS, Group
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import parse_rules
from rewrite.search import SearchStop, backtrack, graph_hash
from rewrite.search.apply import Expanded
from rewrite.search.backtracking import _Search
from rewrite.search.matching import Matcher, prepare
from rewrite.verification.numeric import verify

VIEWS = {"slice", "reshape", "identity"}


def unit_cost(op, attrs, in_shapes, dtype="float32"):
    if OPS[op].group is Group.SOURCE:
        return 0.0
    if op in VIEWS:
        return 0.01
    out = OPS[op].infer(list(in_shapes), attrs)
    return 1.0 + 1e-7 * OPS[op].flops(list(in_shapes), out, attrs)


def _w(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _search(g: Graph, rules, **kw):
    r = backtrack(g, rules, cost_model=unit_cost, **kw)
    v = verify(g, r.graph)
    assert v.ok, v.why
    r.graph.validate()
    return r


def shared_input_matmuls(weights: bool = True) -> Graph:
    b = GraphBuilder("two-matmuls")
    x = b.input("x", (8, 16))
    if weights:
        w1, w2 = b.weight("w1", _w(16, 32, seed=1)), b.weight("w2", _w(16, 32, seed=2))
    else:
        w1, w2 = b.input("w1", (16, 32)), b.input("w2", (16, 32))
    return b.build([b.tanh(b.matmul(x, w1)), b.sigmoid(b.matmul(x, w2))])


def conv_pair() -> Graph:
    """A 1x1 and a 3x3 conv of one input: merging needs the 1x1 enlarged first (a costlier detour)."""
    b = GraphBuilder("conv-pair")
    x = b.input("x", (1, 8, 16, 16))
    w1, w2 = b.weight("w1", _w(8, 8, 1, 1, seed=1)), b.weight("w2", _w(8, 8, 3, 3, seed=2))
    return b.build([b.conv2d(x, w1), b.conv2d(x, w2, padding=(1, 1))])


# ------------------------------------------------------------------ known optima


def test_two_matmuls_sharing_an_input_merge_with_a_multi_pattern_rule():
    g = shared_input_matmuls()
    r = _search(g, load_rules(["multi"]))
    assert r.graph.summary() == {"matmul": 1, "sigmoid": 1, "slice": 2, "tanh": 1}
    assert r.rules_applied == {"merge-matmul-shared-lhs": 1}
    assert r.cost_after < r.cost_before


def test_relu_chain_collapses_with_every_shipped_rule():
    b = GraphBuilder()
    x = b.input("x", (4, 8))
    g = b.build([b.relu(b.relu(b.relu(x)))])
    r = _search(g, load_rules())
    assert r.graph.summary() == {"relu": 1}
    assert r.stop_reason is SearchStop.EXHAUSTED


def test_split_outputs_match_as_slices():
    b = GraphBuilder()
    x = b.input("x", (4, 8))
    lo, hi = b.split(x, axis=1, sizes=(3, 5))
    g = b.build([b.relu(lo), b.relu(hi)])
    r = _search(
        g,
        parse_rules("r: (slice (relu ?x) :axis ?k :start ?i :end ?j) <=> (relu (slice ?x :axis ?k :start ?i :end ?j))"),
    )
    assert r.graph.summary() == {"relu": 1, "slice": 2}


def test_costs_are_graph_cost_of_the_graphs():
    g = shared_input_matmuls()
    r = _search(g, load_rules(["multi"]))
    assert r.cost_before == graph_cost(g, unit_cost)
    assert r.cost == r.cost_after == graph_cost(r.graph, unit_cost)


def test_inputs_order_and_outputs_are_preserved():
    b = GraphBuilder()
    c, a = b.input("c", (4, 4)), b.input("a", (4, 4))
    w = b.weight("w", _w(4, 4))
    g = b.build([b.relu(b.relu(b.matmul(a, w))), c, b.relu(b.relu(c))])
    r = _search(g, load_rules(["algebra"]))
    assert [n.attrs["name"] for n in r.graph.inputs] == ["c", "a"]
    assert len(r.graph.outputs) == 3 and r.graph.summary() == {"matmul": 1, "relu": 2}


# ------------------------------------------------------------------ alpha, dedup, budgets, trace


def test_alpha_lets_the_search_through_a_costlier_graph():
    g = conv_pair()
    rules = load_rules(["relaxed"])
    greedy = _search(g, rules, alpha=1.0)
    assert greedy.graph.summary()["conv2d"] == 2 and greedy.cost_after == greedy.cost_before
    relaxed = _search(g, rules, alpha=1.05)
    assert relaxed.graph.summary()["conv2d"] == 1 and relaxed.cost_after < relaxed.cost_before
    assert relaxed.rules_applied == {"enlarge-conv-1x1": 1, "merge-conv-shared-input": 1}


def test_graphs_reached_twice_are_expanded_once():
    b = GraphBuilder()
    x = b.input("x", (4, 4))
    g = b.build([b.relu(b.relu(b.relu(b.relu(x))))])
    r = _search(g, parse_rules("r: (relu (relu ?x)) => (relu ?x)"), alpha=2.0)
    # relu^4 -> relu^3 (three ways, one graph) -> relu^2 -> relu: four distinct graphs
    assert r.expansions == 4 and r.graphs_deduplicated >= 2


def test_graph_hash_ignores_numbering_and_commutative_order():
    def build(order: int, swap: bool) -> Graph:
        b = GraphBuilder()
        x, y = b.input("x", (2, 2)), b.input("y", (2, 2))
        if order:
            s = b.sigmoid(y)
            r = b.relu(x)
        else:
            r = b.relu(x)
            s = b.sigmoid(y)
        return b.build([b.add(s, r) if swap else b.add(r, s)])

    hashes = {graph_hash(build(o, s)) for o in (0, 1) for s in (False, True)}
    assert len(hashes) == 1
    b = GraphBuilder()
    x, y = b.input("x", (2, 2)), b.input("y", (2, 2))
    assert graph_hash(b.build([b.sub(b.relu(x), b.sigmoid(y))])) not in hashes


def test_graph_hash_sees_sharing():
    b = GraphBuilder()
    x = b.input("x", (2, 2))
    r = b.relu(x)
    shared = b.build([b.add(r, r)])
    b = GraphBuilder()
    x = b.input("x", (2, 2))
    twice = b.build([b.add(b.relu(x), b.relu(x))])
    assert graph_hash(shared) != graph_hash(twice)


def test_expansion_budget():
    g = shared_input_matmuls()
    r = _search(g, load_rules(), max_expansions=1)
    assert r.expansions == 1 and r.stop_reason is SearchStop.EXPANSION_LIMIT
    r0 = _search(g, load_rules(), max_expansions=0)
    assert r0.expansions == 0 and r0.graph is g and r0.cost_after == r0.cost_before


def test_queue_bound_drops_the_costliest_rewrites():
    g = nas_cell()
    r = _search(g, load_rules(), max_expansions=10, max_queue=20)
    assert r.graphs_dropped > 0 and r.graphs_queued - r.graphs_dropped - r.expansions <= 20
    assert r.cost_after < r.cost_before


def test_time_budget_stops_the_search():
    r = _search(shared_input_matmuls(), load_rules(), seconds=1e-6)
    assert r.stop_reason is SearchStop.TIME_LIMIT and r.expansions <= 1


def test_trace_is_monotone_and_ends_at_the_result():
    b = GraphBuilder()
    x = b.input("x", (8, 16))
    ws = [b.weight(f"w{i}", _w(16, 16, seed=i)) for i in range(4)]
    g = b.build([b.relu(b.relu(b.matmul(x, w))) for w in ws])
    r = _search(g, load_rules(), max_expansions=40)
    times, costs = [t for t, _ in r.trace], [c for _, c in r.trace]
    assert costs[0] == r.cost_before and costs[-1] == pytest.approx(r.cost_after)
    assert all(a > b_ for a, b_ in itertools.pairwise(costs)) and times == sorted(times)
    assert len(r.trace) >= 3  # the relus collapse and the matmuls merge, one at a time


def test_bad_parameters_are_usage_errors():
    g = shared_input_matmuls()
    for kw in ({"alpha": 0.9}, {"seconds": 0}, {"max_expansions": -1}, {"multi_limit": 0}, {"max_queue": 1}):
        with pytest.raises(UsageError):
            backtrack(g, [], **kw)


# ------------------------------------------------------------------ rule semantics


def test_guards_are_respected():
    rule = parse_rules("r: (reshape ?x :shape ?s) => ?x  if (= ?s (shape ?x))")
    b = GraphBuilder()
    x = b.input("x", (2, 6))
    g = b.build([b.relu(b.reshape(b.reshape(x, shape=(2, 6)), shape=(3, 4)))])
    r = _search(g, rule)
    assert r.graph.summary() == {"relu": 1, "reshape": 1}
    assert r.graph.shape_of(r.graph.outputs[0]) == (3, 4)


def test_weight_guards_hold_for_weights_only():
    r = _search(shared_input_matmuls(weights=False), load_rules(["multi"]))
    assert r.graph.summary()["matmul"] == 2 and r.rules_applied == {}


def test_a_rule_that_changes_a_shape_is_rejected_loudly():
    b = GraphBuilder()
    x = b.input("x", (2, 3))
    g = b.build([b.relu(x)])
    with pytest.raises(SearchError, match=r"rule 'bad'.*shape \(2, 3\).*\(3, 2\)"):
        backtrack(g, parse_rules("bad: (relu ?x) => (transpose ?x :perm [1 0])"))
    with pytest.raises(SearchError, match="ill-formed"):
        backtrack(g, parse_rules("bad: (relu ?x) => (matmul ?x ?x)"))


def test_commutation_only_rules_are_dropped_and_operands_match_in_either_order():
    _, dropped = prepare(load_rules(["algebra"]))
    assert {"add-comm", "mul-comm"} <= set(dropped)
    b = GraphBuilder()
    x, y = b.input("x", (4, 4)), b.input("y", (4, 4))
    w = b.weight("w", _w(4, 4))
    # x@w + y@w written with the matmuls in the other order than matmul-distrib-r's left side
    g = b.build([b.add(b.matmul(y, w), b.matmul(x, w))])
    r = _search(g, load_rules(["algebra"]))
    assert r.graph.summary() == {"add": 1, "matmul": 1}


def nas_cell() -> Graph:
    """One NasRNN-like step: combines x@W + h@V feeding a small tree of activations."""
    b = GraphBuilder("cell")
    x, h = b.input("x", (1, 32)), b.input("h", (1, 32))
    t = [
        b.add(
            b.matmul(x, b.weight(f"wx{i}", _w(32, 32, seed=i))),
            b.matmul(h, b.weight(f"wh{i}", _w(32, 32, seed=10 + i))),
        )
        for i in range(4)
    ]
    m0 = b.add(b.relu(t[0]), b.sigmoid(t[1]))
    m1 = b.mul(b.tanh(t[2]), b.sigmoid(t[3]))
    return b.build([b.tanh(b.mul(m0, m1))])


def test_incremental_matching_finds_what_matching_afresh_finds():
    g = nas_cell()
    rules = load_rules()
    seen = []
    original = _Search.table

    def checked(self, state, ex):
        table = original(self, state, ex)
        full = self.matcher.table(state.graph, ex.facts)
        key = lambda t: sorted((m.direction, m.variant, m.roots) for m, _ in self.matcher.matches(t))
        seen.append(key(table) == key(full))
        return table

    _Search.table = checked
    try:
        r = _search(g, rules, max_expansions=25)
    finally:
        _Search.table = original
    assert len(seen) == 25 and all(seen)
    fresh = _search(g, rules, max_expansions=25, incremental=False)
    assert fresh.cost_after == r.cost_after and fresh.path == r.path


def test_nas_cell_improves():
    g = nas_cell()
    r = _search(g, load_rules(), max_expansions=50)
    assert r.cost_after < r.cost_before
    assert r.rules_applied.get("matmul-concat-sum", 0) == 4


def test_matcher_region_is_bounded_by_pattern_depth():
    dirs, _ = prepare(parse_rules("r: (relu (relu ?x)) => (relu ?x)"))
    m = Matcher(dirs)
    b = GraphBuilder()
    v = b.input("x", (2, 2))
    for _ in range(6):
        v = b.relu(v)
    g = b.build([v])
    ex = Expanded.of(g)
    assert m.depth == 1 and m.region(ex.readers, g, {1}) == {1, 2}


@pytest.mark.slow
def test_nasrnn_improves_and_verifies_within_a_bounded_budget():
    from bench.models import load
    from rewrite.frontends import from_torch

    g = from_torch(*load("nasrnn"))
    r = backtrack(g, load_rules(), max_expansions=60, seconds=120)
    assert r.cost_after < r.cost_before
    assert r.rules_applied.get("matmul-concat-sum", 0) >= 20
    assert verify(g, r.graph).ok
