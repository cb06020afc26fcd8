"""End to end: optimize, extraction invariants, verification, CLI."""

import itertools
import json

import pytest
import torch

from rewrite import GraphBuilder
from rewrite.cli import main
from rewrite.egraph.limits import Limits, StopReason
from rewrite.extract.ilp import STATUSES
from rewrite.ir.errors import UsageError, VerificationError
from rewrite.ir.graph import Graph
from rewrite.pipeline import optimize
from rewrite.rulelang.syntax import parse_rules
from rewrite.verification.numeric import verify


def _qkv_graph() -> Graph:
    torch.manual_seed(0)
    b = GraphBuilder("qkv")
    x = b.input("x", (16, 32))
    outs = [b.matmul(x, b.weight(f"w{i}", torch.randn(32, 32) / 6)) for i in range(3)]
    return b.build([b.add(b.add(outs[0], outs[1]), outs[2])])


def test_optimize_reduces_cost_and_verifies():
    b = GraphBuilder("scale")
    x = b.input("x", (64, 128))
    w = b.weight("w", torch.randn(128, 128) / 11)
    g = b.build([b.smul(b.transpose(b.reshape(b.matmul(x, w), shape=(64, 2, 64)), perm=(1, 0, 2)), scalar=0.125)])
    r = optimize(g, limits=Limits(iterations=8, nodes=5000, seconds=10))
    s = r.stats
    assert s.verified is True and s.max_abs_err is not None and s.max_abs_err < 1e-4
    assert s.cost_after < s.cost_before and s.ops_after < s.ops_before
    assert "smul" not in r.graph.summary()  # the scale moved onto the weight, precomputed
    assert s.saturation.rules_fired["smul-matmul-r"] >= 1
    record = s.to_json()
    for k in (
        "model",
        "ops_before",
        "ops_after",
        "cost_before",
        "cost_after",
        "stop_reason",
        "iterations",
        "enodes",
        "eclasses",
        "seconds",
        "verified",
        "max_abs_err",
        "rules_fired",
    ):
        assert k in record
    assert {"load", "saturate", "extract", "verify", "total"} <= set(record["seconds"])


def test_extracted_graph_is_valid_acyclic_and_never_worse():
    g = _qkv_graph()
    r = optimize(g, limits=Limits(iterations=6, nodes=20000, seconds=10))
    r.graph.validate()
    assert r.stats.cost_after <= r.stats.cost_before
    assert verify(g, r.graph).ok


def test_verification_catches_an_unsound_rule():
    wrong = parse_rules("relu-is-tanh: (relu ?a) => (tanh ?a)", "wrong.rules")
    b = GraphBuilder("w")
    x, y = b.input("x", (32,)), b.input("y", (32,))
    g = b.build([b.relu(b.add(x, y))])

    def cheap_adds(op, attrs, shapes, dtype="float32"):  # makes the wrong form look cheaper
        return {"relu": 10.0, "add": 1.0, "tanh": 1.0}.get(op, 0.0)

    with pytest.raises(VerificationError, match="differs from the original"):
        optimize(g, rules=wrong, limits=Limits(iterations=3), cost_model=cheap_adds)


def test_cli_optimize_json_and_errors(tmp_path, capsys):
    model = tmp_path / "m.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.a = torch.nn.Linear(32, 32, bias=False)\n"
        "        self.b = torch.nn.Linear(32, 32, bias=False)\n"
        "    def forward(self, x):\n"
        "        return torch.relu(self.a(x)) + self.b(x) * 0.5\n"
        "def make():\n"
        "    return M().eval(), (torch.randn(8, 32),)\n"
    )
    out = tmp_path / "out.json"
    assert main(["optimize", f"{model}:make", "--iters", "4", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "before" in printed and "after" in printed and "verified: yes" in printed
    data = json.loads(out.read_text())
    assert data["verified"] is True and data["cost_after"] <= data["cost_before"]
    assert main(["optimize", "nosuchmodel"]) == 2
    assert "unknown model 'nosuchmodel'" in capsys.readouterr().err
    assert main(["optimize", f"{model}:make", "--nodes", "0"]) == 2
    assert "argument --nodes: must be at least 1, got 0" in capsys.readouterr().err
    bad = tmp_path / "bad.rules"
    bad.write_text("oops: (relu ?x => ?x\n")
    assert main(["optimize", f"{model}:make", "--rules", str(bad)]) == 2
    assert "bad.rules:1:" in capsys.readouterr().err


def test_rules_list_json(capsys):
    assert main(["rules", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {"name", "family", "file", "line"} <= set(rows[0])


def test_ilp_extractor_is_never_worse_than_greedy():
    g = _qkv_graph()
    lim = Limits(iterations=6, nodes=20000, seconds=10)
    greedy = optimize(g, limits=lim)
    ilp = optimize(g, limits=lim, extractor="ilp", ilp_seconds=5)
    assert ilp.stats.ilp is not None and ilp.stats.ilp.status in ("optimal", "time_limit", "fallback")
    assert ilp.stats.cost_after <= greedy.stats.cost_after + 1e-12
    assert ilp.stats.verified is True
    with pytest.raises(ValueError, match="unknown extractor"):
        optimize(g, extractor="magic")


def test_cli_costs_profile_show_and_measured_optimize(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    model = tmp_path / "tiny.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.relu(x) * 2.0\n"
        "def make():\n"
        "    return M(), (torch.randn(4, 8),)\n"
    )
    assert main(["costs", "profile", f"{model}:make", "--threads", "1", "--warmup", "1", "--repeats", "3"]) == 0
    assert "measured 2 operator configurations" in capsys.readouterr().out
    assert main(["costs", "show", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["op"] for r in rows} == {"relu", "smul"}
    out = tmp_path / "o.json"
    assert main(["optimize", f"{model}:make", "--cost", "measured", "--threads", "1", "--json", str(out)]) == 0
    stats = json.loads(out.read_text())
    assert stats["cost_model"]["hits"] > 0 and stats["verified"] is True


def test_run_llvm_compiles_checks_and_times(tmp_path, capsys):
    model = tmp_path / "two.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(); self.a = torch.nn.Linear(16, 16)\n"
        "    def forward(self, x, y):\n"  # y first in the graph: the input order must survive
        "        return torch.relu(self.a(y)) - x\n"
        "def make():\n"
        "    return M().eval(), (torch.randn(4, 16), torch.randn(4, 16))\n"
    )
    out = tmp_path / "o.json"
    assert main(["optimize", f"{model}:make", "--run", "llvm", "--repeats", "2", "--json", str(out)]) == 0
    s = json.loads(out.read_text())
    for k in ("compile_seconds", "latency_ms", "torch_eager_ms", "speedup_vs_eager", "max_rel_err"):
        assert k in s
    assert s["max_rel_err"] <= 1e-4
    # priced as compiled: the e-graph's kernels were measured before extraction
    assert s["cost_model"]["kind"] == "compiled" and s["cost_model"]["measured"] > 0


# The JSON record `eqsat optimize --json` writes: these keys, in this order, with these value types.
JSON_HEAD = ["model", "ops_before", "ops_after", "cost_before", "cost_after", "extracted_dag_cost", "extractor"]
JSON_ILP = [
    "ilp_status",
    "ilp_source",
    "ilp_gap",
    "ilp_objective",
    "ilp_bound",
    "greedy_objective",
    "ilp_seconds",
    "cost_after_greedy",
]
JSON_TAIL = [
    "stop_reason",
    "iterations",
    "enodes",
    "eclasses",
    "per_iteration",
    "rules_loaded",
    "rules_given",
    "measured_kernels",
    "interpolated_kernels",
    "cost_extracted",
    "seconds",
    "verified",
    "max_abs_err",
    "rules_fired",
    "dropped_enodes",
    "limits",
    "search",
]
JSON_BACKTRACK = ["expansions", "graphs_seen", "alpha"]  # only for --search backtrack, before the trace
JSON_END = ["trace", "run_check", "cached"]
JSON_SECONDS = ["load", "saturate", "extract", "extract_greedy", "verify", "total", "search", "measure", "run_check"]
JSON_LIMITS = ["iterations", "nodes", "seconds", "match_limit"]
JSON_ITERATION = ["iteration", "enodes", "eclasses", "seconds"]


def _assert_trace(record: dict) -> None:
    """(seconds, best cost) pairs: times rising, costs falling, from the input's cost to the result's."""
    trace = record["trace"]
    assert trace and all(type(t) is float and type(c) is float for t, c in trace)
    assert trace[0][1] == record["cost_before"]
    assert all(a[0] <= b[0] and a[1] > b[1] for a, b in itertools.pairwise(trace))
    assert trace[-1][1] == pytest.approx(record["cost_after"], rel=1e-9)


def _assert_record_shape(record: dict, extractor: str) -> None:
    assert list(record) == JSON_HEAD + (JSON_ILP if extractor == "ilp" else []) + JSON_TAIL + JSON_END
    assert list(record["seconds"]) == JSON_SECONDS and list(record["limits"]) == JSON_LIMITS
    assert record["search"] == "eqsat"
    _assert_trace(record)
    assert record["per_iteration"] and all(list(it) == JSON_ITERATION for it in record["per_iteration"])
    assert [it["iteration"] for it in record["per_iteration"]] == list(range(1, record["iterations"] + 1))
    assert record["extractor"] == extractor and type(record["stop_reason"]) is str
    assert record["stop_reason"] in {r.value for r in StopReason}
    assert all(type(k) is str and type(v) is int for k, v in record["rules_fired"].items())
    assert list(record["rules_fired"]) == sorted(record["rules_fired"])
    assert type(record["verified"]) is bool and type(record["max_abs_err"]) is float
    assert 0 < record["rules_loaded"] <= record["rules_given"] and record["measured_kernels"] == 0  # analytical
    if extractor == "ilp":
        assert type(record["ilp_status"]) is str and record["ilp_status"] in STATUSES
        assert type(record["ilp_source"]) is str and record["ilp_source"] in ("ilp", "greedy")
    assert json.loads(json.dumps(record)) == record  # plain JSON values only


@pytest.mark.parametrize("extractor", ["greedy", "ilp"])
def test_stats_to_json_keeps_the_record_shape(extractor):
    r = optimize(_qkv_graph(), limits=Limits(iterations=4, nodes=20000, seconds=10), extractor=extractor)
    record = r.stats.to_json()
    _assert_record_shape(record, extractor)
    s = r.stats
    assert record["cost_after"] == s.cost_after and record["iterations"] == len(s.saturation.iterations)
    assert record["enodes"] == s.saturation.enodes == s.saturation.iterations[-1].enodes
    assert record["rules_fired"] == s.saturation.rules_fired
    assert record["limits"]["match_limit"] == s.limits.match_limit == s.saturation.match_limit
    assert (s.ilp is not None) == (extractor == "ilp")
    if s.ilp is not None:
        assert record["ilp_status"] == s.ilp.status.value and record["cost_after_greedy"] == s.ilp.cost_after_greedy


@pytest.mark.parametrize("extractor", ["greedy", "ilp"])
def test_cli_json_record_has_the_pinned_keys(tmp_path, extractor):
    model = tmp_path / "m.py"
    model.write_text(
        "import torch\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    lin = torch.nn.Linear(16, 16, bias=False)\n"
        "    return torch.nn.Sequential(lin, torch.nn.ReLU()).eval(), (torch.randn(4, 16),)\n"
    )
    out = tmp_path / "out.json"
    assert main(["optimize", f"{model}:make", "--iters", "3", "--extractor", extractor, "--json", str(out)]) == 0
    _assert_record_shape(json.loads(out.read_text()), extractor)


def test_backtrack_search_through_the_pipeline_is_verified_and_traced():
    r = optimize(_qkv_graph(), limits=Limits(seconds=10), search="backtrack", alpha=1.05, max_expansions=30)
    s = r.stats
    assert s.search == "backtrack" and s.saturation is None and s.backtrack is not None
    assert s.verified is True and s.cost_after < s.cost_before
    assert s.trace[0][1] == s.cost_before and s.trace[-1][1] == pytest.approx(s.cost_after, rel=1e-9)
    record = s.to_json()
    assert list(record) == JSON_HEAD + JSON_TAIL + JSON_BACKTRACK + JSON_END
    assert record["extractor"] == "none" and record["enodes"] is None and record["per_iteration"] == []
    assert record["stop_reason"] in ("exhausted", "expansion_limit", "time_limit")
    assert record["rules_fired"] == dict(sorted(s.backtrack.rules_applied.items())) and record["rules_fired"]
    _assert_trace(record)
    assert json.loads(json.dumps(record)) == record


def test_cli_search_backtrack_writes_search_and_trace(tmp_path, capsys):
    model = tmp_path / "m.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.a = torch.nn.Linear(16, 16, bias=False)\n"
        "        self.b = torch.nn.Linear(16, 16, bias=False)\n"
        "    def forward(self, x):\n"
        "        return self.a(x) + self.b(x)\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    return M().eval(), (torch.randn(4, 16),)\n"
    )
    out = tmp_path / "out.json"
    argv = ["optimize", f"{model}:make", "--search", "backtrack", "--alpha", "1.0", "--seconds", "5"]
    assert main([*argv, "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["search"] == "backtrack" and record["alpha"] == 1.0 and record["verified"] is True
    _assert_trace(record)
    assert "backtracking search (alpha 1.0)" in capsys.readouterr().out
    assert main(["optimize", f"{model}:make", "--search", "backtrack", "--alpha", "0.9"]) == 2
    assert "must be at least 1.0" in capsys.readouterr().err


def test_unknown_search_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown search 'taso'"):
        optimize(_qkv_graph(), search="taso")
