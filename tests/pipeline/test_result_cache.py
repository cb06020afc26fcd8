"""optimize's answers kept on disk (``rewrite.result_cache``): the same graph, rules, limits and cost model are
answered without saturating, with the weights of the graph given, verified as always; anything else is another
key."""

from __future__ import annotations

import dataclasses
import warnings

import pytest
import torch

from lower import filecache
from rewrite import GraphBuilder
from rewrite.cli import main
from rewrite.egraph.limits import Limits
from rewrite.ir.graph import Graph
from rewrite.pipeline import optimize

LIMITS = Limits(iterations=8, nodes=5000, seconds=10)


def _scaled(seed: int = 0, name: str = "w") -> Graph:
    """smul(transpose(reshape(x @ w))): the scale moves onto the weight (the graph optimize returns differs)."""
    torch.manual_seed(seed)
    b = GraphBuilder("scale")
    x = b.input("x", (64, 128))
    w = b.weight(name, torch.randn(128, 128) / 11)
    return b.build([b.smul(b.transpose(b.reshape(b.matmul(x, w), shape=(64, 2, 64)), perm=(1, 0, 2)), scalar=0.125)])


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EQSAT_OPTIMIZE_CACHE", "1")
    monkeypatch.delenv("EQSAT_NO_CACHE", raising=False)
    return tmp_path


def test_a_second_optimize_reads_the_answer_and_verifies_it(cache, tmp_path):
    g = _scaled()
    first = optimize(g, limits=LIMITS)
    second = optimize(g, limits=LIMITS)
    a, b = first.stats, second.stats
    assert not a.cached and b.cached and b.to_json()["cached"] is True
    assert second.graph.pretty() == first.graph.pretty() and "smul" not in second.graph.summary()
    assert (b.cost_before, b.cost_after, b.ops_after) == (a.cost_before, a.cost_after, a.ops_after)
    assert b.saturation == a.saturation and b.ilp == a.ilp and b.trace == a.trace
    assert b.seconds.load == b.seconds.saturate == 0.0 and b.measured_kernels == 0
    assert b.verified is True and b.max_abs_err is not None and b.max_abs_err < 1e-4
    assert len(list((cache / "results").rglob("*.pkl"))) == 1
    from rewrite.htmlreport import report

    report(second, tmp_path / "r.html")
    assert "earlier run kept in results/" in (tmp_path / "r.html").read_text()


def test_the_answer_binds_the_weights_of_the_graph_given(cache):
    optimize(_scaled(seed=0), limits=LIMITS)
    other = _scaled(seed=1)  # the same structure and weight names, other values, and its inputs from elsewhere
    x_node = other.inputs[0]
    other.nodes[x_node.id] = dataclasses.replace(x_node, origin="other.py:7")
    r = optimize(other, limits=LIMITS)
    assert r.stats.cached and r.stats.verified
    assert [n.origin for n in r.graph.inputs] == ["other.py:7"]
    x = torch.randn(64, 128)
    assert r.graph.weights["w"] is other.weights["w"]
    assert torch.allclose(r.graph.run({"x": x})[0], other.run({"x": x})[0], rtol=1e-4, atol=1e-5)


def test_each_argument_that_changes_the_answer_is_another_key(cache, monkeypatch):
    g = _scaled()
    optimize(g, limits=LIMITS)
    assert not optimize(g, limits=Limits(iterations=3, nodes=5000, seconds=10)).stats.cached
    assert not optimize(g, limits=LIMITS, extractor="greedy").stats.cached
    assert not optimize(g, limits=LIMITS, rules=["algebra"]).stats.cached
    assert not optimize(_scaled(name="v"), limits=LIMITS).stats.cached  # a weight's name is structure
    from costs.analytical import AnalyticalCost

    assert optimize(g, limits=LIMITS, cost_model=AnalyticalCost()).stats.cached  # the default's prices, given
    priced = AnalyticalCost()
    assert not optimize(g, limits=LIMITS, cost_model=lambda *a: priced(*a)).stats.cached  # a callable: never kept
    with monkeypatch.context() as m:
        m.setenv("EQSAT_MEASURE_ALL", "1")  # a setting that changes prices
        assert not optimize(g, limits=LIMITS).stats.cached
    assert optimize(g, limits=LIMITS).stats.cached


def test_turned_off_by_either_setting(cache, monkeypatch):
    g = _scaled()
    optimize(g, limits=LIMITS)
    with monkeypatch.context() as m:
        m.setenv("EQSAT_OPTIMIZE_CACHE", "0")
        assert not optimize(g, limits=LIMITS).stats.cached
    with monkeypatch.context() as m:
        m.setenv("EQSAT_NO_CACHE", "1")
        assert not optimize(g, limits=LIMITS).stats.cached
    assert optimize(g, limits=LIMITS).stats.cached


def test_a_damaged_or_foreign_entry_is_optimized_again(cache):
    g = _scaled()
    optimize(g, limits=LIMITS)
    (entry,) = (cache / "results").rglob("*.pkl")
    entry.write_bytes(entry.read_bytes()[:-3])
    with pytest.warns(filecache.CacheWarning, match="damaged"):
        assert not optimize(g, limits=LIMITS).stats.cached
    assert optimize(g, limits=LIMITS).stats.cached  # rewritten
    key = entry.name.removesuffix(".pkl")
    filecache.write(key, b"not a pickle", filecache.RESULTS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not optimize(g, limits=LIMITS).stats.cached


def test_the_iterations_reach_the_callback_and_the_cli_says_where_the_answer_came_from(cache, capsys, tmp_path):
    g = _scaled()
    seen: list[int] = []
    first = optimize(g, limits=LIMITS, on_iteration=lambda s: seen.append(s.enodes))
    again: list[int] = []
    optimize(g, limits=LIMITS, on_iteration=lambda s: again.append(s.enodes))
    assert again == seen == [s.enodes for s in first.stats.saturation.iterations]
    path = tmp_path / "g.eqsat"
    from rewrite import save

    save(g, path)
    assert main(["optimize", str(path)]) == 0
    assert "earlier run's answer" not in capsys.readouterr().out
    assert main(["optimize", str(path)]) == 0
    assert "earlier run's answer" in capsys.readouterr().out
