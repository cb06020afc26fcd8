"""optimize's run check: for a compiled target the chosen graph is compiled and timed against the imported one,
and the input is returned when it ran faster in the median round."""

from __future__ import annotations

import pytest
import torch

from lower import parse_target
from rewrite import GraphBuilder, runcheck
from rewrite.cli.report import before_after
from rewrite.egraph.limits import Limits
from rewrite.htmlreport import report
from rewrite.pipeline import optimize
from rewrite.rulelang.syntax import parse_rules

# Sound, and a detour the lowering cannot fuse away: x @ I is x, computed by a real 16x1024x1024 matmul.
DETOUR = parse_rules(
    "detour: (relu ?x) => (transpose (relu (matmul (transpose ?x :perm [1 0]) (eye :n (dim ?x 0)))) :perm [1 0])"
)


def misled(op: str, attrs: dict, shapes: list, dtype: str = "float32") -> float:
    """A cost model that is wrong about the detour: a relu costs its first dimension, everything else nothing."""
    return float(shapes[0][0]) if op == "relu" else 0.0


def _graph():
    b = GraphBuilder("tall-relu")
    x = b.input("x", (1024, 16))
    return b.build([b.relu(x)])


@pytest.fixture(autouse=True)
def _checked(monkeypatch):
    monkeypatch.setenv("EQSAT_RUN_CHECK", "1")  # the default, which tests/conftest.py turns off elsewhere


def _optimize(**kw):
    return optimize(
        _graph(), rules=DETOUR, limits=Limits(iterations=2), cost_model=misled, target=parse_target("llvm", 1), **kw
    )


def test_a_graph_slower_than_the_input_is_not_returned(tmp_path):
    res = _optimize()
    rc = res.stats.run_check
    assert rc is not None and rc.kept == "input"
    assert rc.ms["input"] * 5 < rc.ms["extracted"]  # a 33 MFLOP matmul against a 16K-element relu
    assert res.graph.summary() == {"relu": 1} and res.stats.ops_after == 1
    assert res.stats.cost_after == res.stats.cost_before and res.stats.verified is True
    assert res.stats.seconds.run_check > 0 and res.stats.to_json()["run_check"]["kept"] == "input"
    x = torch.randn(1024, 16)
    assert res.compiled is not None and torch.equal(res.compiled({"x": x})[0], torch.relu(x))
    text = before_after(res.stats, {"relu": 1}, res.graph.summary())
    assert "run check (" in text and "kept input" in text and ", run check " in text  # and its seconds
    report(res, tmp_path / "r.html")
    assert "run check (llvm" in (tmp_path / "r.html").read_text() and "kept input" in text


def test_the_check_can_be_turned_off(monkeypatch):
    res = _optimize(run_check=False)
    assert res.stats.run_check is None and res.compiled is None and "matmul" in res.graph.summary()
    monkeypatch.setenv("EQSAT_RUN_CHECK", "0")
    assert _optimize().stats.run_check is None


def test_nothing_is_timed_when_extraction_keeps_the_input():
    res = optimize(_graph(), rules=[], limits=Limits(iterations=1), cost_model=misled, target=parse_target("llvm", 1))
    assert res.stats.run_check is None and res.compiled is None


def _priced(detour_relu: float):
    """A cost model that prices the detour's relu (on the transposed, 16-row tensor) at ``detour_relu`` and the
    input's at 100, everything else nothing."""

    def model(op: str, attrs: dict, shapes: list, dtype: str = "float32") -> float:
        return (100.0 if shapes[0][0] == 1024 else detour_relu) if op == "relu" else 0.0

    return model


def test_a_graph_priced_less_than_min_gain_cheaper_is_not_returned_nor_timed(monkeypatch):
    """The model cannot tell graphs apart that it prices within ``MIN_GAIN``: the input comes back, and on a
    compiled target nothing is compiled or timed; at ``MIN_GAIN`` or more the extracted graph goes on as before."""
    import rewrite.pipeline as pipeline

    assert pipeline.MIN_GAIN == 0.01

    def untimed(*a, **k):
        raise AssertionError("a run check ran")

    monkeypatch.setattr(runcheck, "time_pair", untimed)
    for target in (None, parse_target("llvm", 1)):
        kw = {} if target is None else {"target": target}
        res = optimize(_graph(), rules=DETOUR, limits=Limits(iterations=2), cost_model=_priced(99.5), **kw)
        assert res.graph.summary() == {"relu": 1} and res.stats.cost_after == res.stats.cost_before == 100.0
        assert res.stats.run_check is None and res.compiled is None
        assert res.stats.cost_extracted == 99.5 and res.stats.to_json()["cost_extracted"] == 99.5
        text = before_after(res.stats, {"relu": 1}, res.graph.summary())
        assert "kept the input: the best graph found was modelled 0.50% cheaper, under the 1% it takes" in text
    res = optimize(_graph(), rules=DETOUR, limits=Limits(iterations=2), cost_model=_priced(99.0))
    assert "matmul" in res.graph.summary() and res.stats.cost_after == res.stats.cost_extracted == 99.0
    assert "kept the input" not in before_after(res.stats, {"relu": 1}, res.graph.summary())


def test_eager_targets_are_not_checked():
    res = optimize(_graph(), rules=DETOUR, limits=Limits(iterations=2), cost_model=misled)
    assert res.stats.run_check is None and "matmul" in res.graph.summary()


def test_the_torch_backend_runs_the_graph_the_check_compiled():
    """torch.compile(backend="eqsat") takes ``result.compiled`` (no second compile) and still matches eager."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8)).eval()
    x = torch.randn(4, 16)
    with torch.no_grad():
        assert torch.allclose(torch.compile(m, backend="eqsat")(x), m(x), atol=1e-5)


def test_a_check_of_the_same_two_graphs_is_not_timed_again(monkeypatch, tmp_path):
    """The record is kept in the cache folder: a second optimize of the same graph on the same target compiles
    only the graph the first check kept, says its times are reused, and returns the same answer."""
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    first = _optimize().stats.run_check
    assert first is not None and first.kept == "input" and list((tmp_path / "run_checks").rglob("*.json"))

    def untimed(*a, **k):
        raise AssertionError("timed again")

    monkeypatch.setattr(runcheck, "time_pair", untimed)
    res = _optimize()
    again = res.stats.run_check
    assert again is not None and (again.kept, again.ms, again.rounds) == (first.kept, first.ms, first.rounds)
    assert "cached" in again.notes[-1] and res.graph.summary() == {"relu": 1}
    x = torch.randn(1024, 16)
    assert res.compiled is not None and torch.equal(res.compiled({"x": x})[0], torch.relu(x))
    monkeypatch.setenv("EQSAT_NO_CACHE", "1")
    with pytest.raises(AssertionError, match="timed again"):
        _optimize()


def test_the_input_kept_is_not_priced_again(monkeypatch):
    """The input's price is the one extraction computed: pricing it again after the check (in a process answered
    from results/) measured what the first run had interpolated."""
    import rewrite.pipeline as pipeline

    calls: list[int] = []
    real = pipeline.graph_cost

    def counted(g, model):
        calls.append(g.op_count())
        return real(g, model)

    monkeypatch.setattr(pipeline, "graph_cost", counted)
    unchecked = _optimize(run_check=False)
    priced = len(calls)
    calls.clear()
    res = _optimize()
    assert res.stats.run_check is not None and res.stats.run_check.kept == "input"
    assert len(calls) == priced and res.stats.cost_after == res.stats.cost_before == unchecked.stats.cost_before
