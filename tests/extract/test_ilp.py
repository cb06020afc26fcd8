"""Exact ILP extraction: sharing, cycles, time limit, fallback, and real e-graphs."""

import itertools
import random

import pytest

from rewrite.extract.egraph_data import EGraphData, ENode
from rewrite.extract.greedy import ExtractionError, dag_cost, greedy_choice, select
from rewrite.extract.ilp import STATUSES, ilp_extract, is_valid_selection


def _egraph(spec: dict[str, list[tuple[str, str, tuple[str, ...], float]]], roots: list[str]):
    """spec: class -> [(node id, op, child classes, cost)]."""
    classes = {c: [ENode(nid, op, {}, kids) for nid, op, kids, _ in ns] for c, ns in spec.items()}
    ncost = {nid: cost for ns in spec.values() for nid, _, _, cost in ns}
    return EGraphData(classes, {c: (4,) for c in spec}, roots), ncost


def _greedy(data, ncost):
    return select(data, greedy_choice(data, ncost), ncost)


def _choice_selection(choice: dict[str, ENode], roots: list[str]) -> dict[str, ENode] | None:
    """What one e-node per e-class selects from the roots; None if it reaches a cycle."""
    sel: dict[str, ENode] = {}
    state: dict[str, int] = {}

    def visit(c: str) -> bool:
        if state.get(c) == 2:
            return True
        if state.get(c) == 1:
            return False
        state[c] = 1
        sel[c] = choice[c]
        ok = all(visit(k) for k in choice[c].children)
        state[c] = 2
        return ok

    return sel if all(visit(r) for r in roots) else None


def _brute_force(data: EGraphData, ncost: dict[str, float]) -> float:
    """The cheapest acyclic selection by enumerating one e-node per e-class."""
    cids = list(data.classes)
    best = float("inf")
    for combo in itertools.product(*(data.classes[c] for c in cids)):
        sel = _choice_selection(dict(zip(cids, combo)), data.roots)
        if sel is not None:
            best = min(best, dag_cost(sel, ncost))
    return best


def test_ilp_shares_what_greedy_duplicates():
    # R = add(A, B); A is relu(S) or tanh(x); B is sigmoid(S) or gelu(x); S = exp(x) is expensive.
    # Per class, greedy prefers tanh/gelu (7 < 1 + 10) and pays 7 + 7; sharing S costs 10 + 1 + 1.
    data, ncost = _egraph(
        {
            "x": [("x0", "input", (), 0.0)],
            "S": [("s0", "exp", ("x",), 10.0)],
            "A": [("a1", "relu", ("S",), 1.0), ("a2", "tanh", ("x",), 7.0)],
            "B": [("b1", "sigmoid", ("S",), 1.0), ("b2", "gelu", ("x",), 7.0)],
            "R": [("r0", "add", ("A", "B"), 1.0)],
        },
        ["R"],
    )
    greedy = dag_cost(_greedy(data, ncost), ncost)
    res = ilp_extract(data, ncost)
    assert greedy == pytest.approx(15.0)
    assert res.status == "optimal" and res.source == "ilp"
    assert res.objective == pytest.approx(13.0) and res.greedy_objective == pytest.approx(15.0)
    assert res.gap == pytest.approx(0.0, abs=1e-6) and res.bound == pytest.approx(13.0, rel=1e-6)
    assert {n.id for n in res.selection.values()} == {"x0", "s0", "a1", "b1", "r0"}
    assert is_valid_selection(data, res.selection)


def test_ilp_never_picks_a_cycle():
    # A -> B -> A through the cheap e-nodes; the acyclic optimum breaks the cycle at its cheaper side.
    data, ncost = _egraph(
        {
            "x": [("x0", "input", (), 0.0)],
            "A": [("a_cyc", "relu", ("B",), 1.0), ("a_leaf", "exp", ("x",), 10.0)],
            "B": [("b_cyc", "identity", ("A",), 0.5), ("b_leaf", "tanh", ("x",), 12.0)],
            "R": [("r0", "add", ("A", "B"), 1.0)],
        },
        ["R"],
    )
    res = ilp_extract(data, ncost)
    assert res.status == "optimal" and res.sizes is not None and res.sizes.cyclic_classes == 2
    assert is_valid_selection(data, res.selection)
    assert res.objective == pytest.approx(_brute_force(data, ncost)) == pytest.approx(11.5)
    assert res.selection["A"].id == "a_leaf" and res.selection["B"].id == "b_cyc"


def test_ilp_matches_brute_force_on_random_cyclic_egraphs():
    rng = random.Random(7)
    ops = ["relu", "tanh", "exp", "add", "mul"]
    checked = 0
    for trial in range(60):
        n = rng.randint(3, 7)
        spec: dict[str, list] = {"x": [("x0", "input", (), 0.0)]}
        for i in range(n):
            nodes = []
            for j in range(rng.randint(1, 3)):
                kids = tuple("x" if rng.random() < 0.3 else f"c{rng.randrange(n)}" for _ in range(rng.randint(1, 2)))
                cost = rng.choice([0.0, 1.0, 2.0, 3.0, 5.0, 8.0])
                nodes.append((f"n{i}_{j}", rng.choice(ops), kids, cost))
            spec[f"c{i}"] = nodes
        data, ncost = _egraph(spec, [f"c{rng.randrange(n)}", f"c{rng.randrange(n)}"])
        best = _brute_force(data, ncost)
        if best == float("inf"):  # no acyclic term: greedy and ILP both refuse
            with pytest.raises(ExtractionError):
                ilp_extract(data, ncost)
            continue
        res = ilp_extract(data, ncost, time_limit=5)
        assert res.status == "optimal", trial
        assert is_valid_selection(data, res.selection), trial
        assert res.objective == pytest.approx(best, abs=1e-9), trial
        if res.greedy_objective is not None:
            assert res.objective <= res.greedy_objective + 1e-9
        checked += 1
    assert checked >= 20


def _blocks(k: int) -> tuple[dict[str, list], list[str]]:
    """k copies of the sharing puzzle above chained through one mandatory class each (J0 <- J1 <- ...)."""
    spec: dict[str, list] = {"J0": [("x0", "input", (), 0.0)]}
    for b in range(k):
        j, nxt = f"J{b}", f"J{b + 1}"
        spec[f"S{b}"] = [(f"s{b}", "exp", (j,), 10.0)]
        spec[f"A{b}"] = [(f"a{b}1", "relu", (f"S{b}",), 1.0), (f"a{b}2", "tanh", (j,), 7.0)]
        spec[f"B{b}"] = [(f"b{b}1", "sigmoid", (f"S{b}",), 1.0), (f"b{b}2", "gelu", (j,), 7.0)]
        spec[nxt] = [(f"r{b}", "add", (f"A{b}", f"B{b}"), 1.0)]
    return spec, [f"J{k}"]


def test_the_program_splits_at_mandatory_classes_and_keeps_the_optimum():
    # every block's junction is needed by every selection: its rows are implied, so each block is its own program
    spec, roots = _blocks(3)
    data, ncost = _egraph(spec, roots)
    res = ilp_extract(data, ncost)
    assert res.sizes is not None and res.sizes.parts >= 3, res.sizes
    assert res.status == "optimal" and res.objective == pytest.approx(_brute_force(data, ncost)) == pytest.approx(39.0)
    assert res.bound == pytest.approx(39.0, rel=1e-6) and is_valid_selection(data, res.selection)


def test_a_part_left_without_time_keeps_the_warm_start_and_adds_nothing_to_the_bound(monkeypatch):
    import importlib

    solve_mod = importlib.import_module("rewrite.extract.ilp.solve")  # the module, not the function of that name
    real = solve_mod._solve_part
    calls = []

    def last_part_out_of_time(prog, left, start, rel_gap, verbose, on_better):
        calls.append(len(prog.cost))
        if len(calls) == 1:  # the first part solved runs out of time with nothing found
            return solve_mod.Answer(None, solve_mod.IlpStatus.TIME_LIMIT, None, "simulated time limit")
        return real(prog, left, start, rel_gap, verbose, on_better)

    monkeypatch.setattr(solve_mod, "_solve_part", last_part_out_of_time)
    spec, roots = _blocks(3)
    data, ncost = _egraph(spec, roots)
    greedy = _greedy(data, ncost)
    res = ilp_extract(data, ncost, warm_start=greedy)
    assert len(calls) >= 3 and res.source == "ilp" and res.status == "time_limit"
    assert is_valid_selection(data, res.selection)
    assert dag_cost(greedy, ncost) >= res.objective >= 39.0 - 1e-9
    assert res.bound is not None and res.bound < res.objective and res.gap > 0


def _random_egraph(rng: random.Random, n: int):
    spec: dict[str, list] = {"x": [("x0", "input", (), 0.0)]}
    for i in range(n):
        nodes = []
        for j in range(rng.randint(1, 4)):
            # mostly downward edges (a DAG with sharing), sometimes upward (cycles)
            kids = tuple(
                "x"
                if i == 0 or rng.random() < 0.1
                else f"c{rng.randrange(i) if rng.random() < 0.9 else rng.randrange(n)}"
                for _ in range(rng.randint(1, 3))
            )
            nodes.append((f"n{i}_{j}", "add", kids, float(rng.choice([0, 1, 2, 3, 5, 8, 13]))))
        spec[f"c{i}"] = nodes
    return _egraph(spec, [f"c{n - 1}", f"c{n - 2}"])


def test_must_need_strengthening_keeps_the_optimum(monkeypatch):
    import rewrite.extract.ilp as ilp

    rng = random.Random(11)
    compared = 0
    for _ in range(25):
        data, ncost = _random_egraph(rng, 30)
        try:
            strong = ilp_extract(data, ncost, time_limit=10)
        except ExtractionError:
            continue
        monkeypatch.setattr(ilp, "NEED_LIMIT", 0)
        weak = ilp_extract(data, ncost, time_limit=10)
        monkeypatch.undo()
        assert strong.status == weak.status == "optimal"
        assert strong.objective == pytest.approx(weak.objective, abs=1e-9)
        assert is_valid_selection(data, strong.selection)
        compared += 1
    assert compared >= 15


def _set_cover(n_el: int, n_sets: int, k: int, seed: int = 0):
    """An e-graph whose extraction is weighted set cover: hard for a MIP, easy to get wrong greedily."""
    rng = random.Random(seed)
    spec: dict[str, list] = {"x": [("x0", "input", (), 0.0)]}
    members: dict[int, list[int]] = {e: [] for e in range(n_el)}
    for s in range(n_sets):
        spec[f"S{s}"] = [(f"s{s}", "exp", ("x",), rng.uniform(1, 2))]
        for e in rng.sample(range(n_el), k):
            members[e].append(s)
    for e in range(n_el):
        spec[f"E{e}"] = [(f"e{e}_{s}", "relu", (f"S{s}",), 0.001) for s in members[e] or [0]]
    spec["R"] = [("r0", "concat", tuple(f"E{e}" for e in range(n_el)), 0.0)]
    return _egraph(spec, ["R"])


@pytest.mark.slow  # asserts on wall-clock time
def test_time_limit_is_honoured_and_keeps_a_valid_incumbent():
    data, ncost = _set_cover(400, 200, 8)
    # two test workers on two busy cores have used the whole second before the solver had an incumbent (the
    # ILP falls back to greedy then, as it should): once more with more time
    for limit in (1.0, 4.0):
        events: list[dict] = []
        res = ilp_extract(data, ncost, time_limit=limit, on_progress=events.append)
        if res.status != "fallback":
            break
    assert res.status in STATUSES
    assert res.status == "time_limit" and res.source == "ilp", res.message
    assert res.seconds < limit + 1.5  # wall time, including the model build (noisy machine: some slack)
    assert is_valid_selection(data, res.selection)
    assert res.bound is not None and res.bound <= res.objective <= res.greedy_objective
    assert 0 < res.gap < 1
    assert events[0]["event"] == "model" and events[-1]["event"] == "done"
    assert any(e["event"] == "incumbent" for e in events)


def test_solver_failure_falls_back_to_greedy(monkeypatch):
    import highspy

    data, ncost = _set_cover(30, 20, 4)
    greedy = _greedy(data, ncost)

    def boom(self):
        raise RuntimeError("simulated solver crash")

    monkeypatch.setattr(highspy.Highs, "run", boom)
    res = ilp_extract(data, ncost, warm_start=greedy)
    assert res.status == "fallback" and res.source == "greedy"
    assert res.selection == greedy and "simulated" in res.message
    assert res.objective == pytest.approx(dag_cost(greedy, ncost))
    assert res.bound is not None and 0.0 <= res.bound <= res.objective and res.gap is not None  # the root floor


def test_a_failed_solve_states_its_gap_against_the_classes_every_selection_needs(monkeypatch):
    import highspy

    # R -> A -> B -> x: every selection picks an e-node of R, A and B, so 1 + 1 + 2 bounds it (the roots alone: 1)
    spec = {
        "x": [("x0", "input", (), 0.0)],
        "B": [("b0", "relu", ("x",), 2.0), ("b1", "tanh", ("x",), 3.0)],
        "A": [("a0", "relu", ("B",), 1.0)],
        "R": [("r0", "relu", ("A",), 1.0)],
    }
    data, ncost = _egraph(spec, ["R"])

    def boom(self):
        raise RuntimeError("simulated solver crash")

    monkeypatch.setattr(highspy.Highs, "run", boom)
    res = ilp_extract(data, ncost)
    assert res.status == "fallback" and res.objective == pytest.approx(4.0)
    assert res.bound == pytest.approx(4.0) and res.gap == pytest.approx(0.0)


def test_time_used_up_before_the_solve_still_states_a_gap():
    data, ncost = _set_cover(30, 20, 4)
    res = ilp_extract(data, ncost, time_limit=1e-9)
    assert res.status == "fallback" and res.source == "greedy" and "time limit used up" in res.message
    assert is_valid_selection(data, res.selection)
    floor = sum(min(ncost[n.id] for n in data.classes[c]) for c in set(data.roots))
    assert res.bound == pytest.approx(floor) and res.gap == pytest.approx((res.objective - floor) / res.objective)


def test_rejects_bad_input():
    data, ncost = _egraph({"x": [("x0", "input", (), 0.0)], "R": [("r0", "relu", ("x",), -1.0)]}, ["R"])
    with pytest.raises(ValueError, match="non-negative"):
        ilp_extract(data, ncost)
    with pytest.raises(ValueError, match="time limit"):
        ilp_extract(data, {"x0": 0.0, "r0": 1.0}, time_limit=0)


# ------------------------------------------------------------------ real e-graphs


@pytest.fixture(scope="module", params=["nasrnn", "bert"])
def saturated(request):
    from bench.models import load
    from costs.analytical import AnalyticalCost
    from rewrite.egraph.saturate import Limits, saturate
    from rewrite.extract.egraph_data import read_serialized
    from rewrite.extract.greedy import node_costs
    from rewrite.frontends import from_torch
    from rewrite.rulelang.loader import load_rules

    graph = from_torch(*load(request.param))
    sat = saturate(graph, load_rules(), Limits(iterations=4, nodes=20000, seconds=20))  # keeps the file < 60 s
    data = read_serialized(sat.serialized())
    return graph, data, node_costs(data, AnalyticalCost())


def test_ilp_on_real_egraphs_is_no_worse_than_greedy_and_verifies(saturated):
    from rewrite.extract.decode import to_graph
    from rewrite.verification.numeric import verify

    graph, data, ncost = saturated
    greedy_cost = dag_cost(_greedy(data, ncost), ncost)
    res = ilp_extract(data, ncost, time_limit=20)
    assert res.status in ("optimal", "time_limit")
    assert res.objective <= greedy_cost * (1 + 1e-9)
    assert res.bound is not None and res.bound <= res.objective * (1 + 1e-9)
    assert is_valid_selection(data, res.selection)
    decoded = to_graph(data, res.selection, graph)
    decoded.validate()
    assert verify(graph, decoded).ok


def test_enodes_that_need_their_own_class_are_fixed_to_zero():
    """slice(concat(a, b)) in a's class: concat's only e-node needs a back, so in every selection the
    cheap e-node closes a cycle; the need sets (a greatest fixpoint inside the SCC) find it before HiGHS."""
    from rewrite.extract.ilp.prune import needs, prune, sccs

    data, ncost = _egraph(
        {
            "x": [("x0", "input", (), 0.0)],
            "A": [("a_slice", "slice", ("C",), 0.1), ("a_leaf", "exp", ("x",), 5.0)],
            "B": [("b0", "tanh", ("x",), 1.0)],
            "C": [("c_cat", "concat", ("A", "B"), 0.2)],
            "R": [("r0", "add", ("A", "C"), 1.0)],
        },
        ["R"],
    )
    prob = prune(data, ncost)
    need = needs(prob.classes, prob.free, sccs(prob.classes, prob.free), prob.roots)
    assert need.infeasible == {"a_slice"}
    res = ilp_extract(data, ncost)
    assert res.status == "optimal" and res.selection["A"].id == "a_leaf"
    assert res.objective == pytest.approx(_brute_force(data, ncost)) == pytest.approx(7.2)


def _through_child(monkeypatch):
    """Every part solved in a child process, as a part of >= CHILD_MIN_NONZEROS nonzeros is."""
    import importlib

    solve_mod = importlib.import_module("rewrite.extract.ilp.solve")
    monkeypatch.setattr(solve_mod, "CHILD_MIN_NONZEROS", 0)


def test_a_part_solved_in_a_child_process_gives_the_in_process_answer(monkeypatch):
    data, ncost = _set_cover(30, 20, 4)
    here = ilp_extract(data, ncost)
    _through_child(monkeypatch)
    events: list[dict] = []
    there = ilp_extract(data, ncost, warm_start=_greedy(data, ncost), on_progress=events.append)
    assert here.status == there.status == "optimal" and there.source == "ilp"
    assert there.objective == pytest.approx(here.objective, rel=1e-9) and is_valid_selection(data, there.selection)
    assert there.bound == pytest.approx(here.bound, rel=1e-6)


def test_a_child_process_still_running_at_the_deadline_is_stopped_there(monkeypatch):
    _through_child(monkeypatch)
    data, ncost = _set_cover(400, 200, 8)  # HiGHS needs far more than the limit to close this
    greedy = _greedy(data, ncost)
    res = ilp_extract(data, ncost, time_limit=1.5, warm_start=greedy)
    assert res.seconds <= 1.5 + 0.5  # the parent stops waiting at the deadline (slack: a loaded machine)
    assert res.status == "time_limit" and res.source == "ilp" and is_valid_selection(data, res.selection)
    assert res.objective <= dag_cost(greedy, ncost) * (1 + 1e-9)
    assert res.bound is not None and res.bound <= res.objective and res.gap is not None


def test_a_child_process_that_fails_falls_back_to_greedy(monkeypatch):
    import sys

    _through_child(monkeypatch)
    monkeypatch.setattr(sys, "executable", "/bin/false")  # the child exits at once, saying nothing
    data, ncost = _set_cover(30, 20, 4)
    greedy = _greedy(data, ncost)
    res = ilp_extract(data, ncost, warm_start=greedy)
    assert res.status == "fallback" and res.source == "greedy" and res.selection == greedy
    assert "process ended without an answer" in res.message
