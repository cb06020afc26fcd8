"""Loading an e-graph costs what the graph needs: egglog text parsed in chunks, only the ops and rules a graph
can reach, no banner on stdout, egglog's bindings without its Python layer."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.models import load
from rewrite import GraphBuilder
from rewrite.egraph import saturate as saturate_module
from rewrite.egraph.engine import chunks, forms
from rewrite.egraph.reach import graph_ops, reachable
from rewrite.egraph.saturate import Limits, saturate
from rewrite.frontends import from_torch
from rewrite.ir.errors import SaturationError
from rewrite.ir.ops import OPS
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import parse_rules

ROOT = Path(__file__).resolve().parents[2]


def test_forms_respect_strings_comments_and_nesting():
    text = '(let $a (Relu x))  ; a (comment\n(set (f "a)(\\"") 1)\n(datatype T\n  (A i64)\n  (B T))'
    assert forms(text) == ["(let $a (Relu x))", '(set (f "a)(\\"") 1)', "(datatype T\n  (A i64)\n  (B T))"]
    with pytest.raises(SaturationError, match="unbalanced"):
        forms("(rule ((= a b)) (")


def test_chunks_keep_every_form_in_order_and_bound_their_size():
    text = "\n".join(f"(let $v{i} (Relu $v{i - 1}))" for i in range(1, 400))
    pieces = chunks(text, size=200)
    assert forms("\n".join(pieces)) == forms(text)
    assert all(len(p) <= 200 or len(forms(p)) == 1 for p in pieces)
    assert len(pieces) > 10


def test_reachable_is_the_least_fixed_point_over_rule_sides():
    rules = parse_rules(
        "\n".join(
            [
                "a: (relu (relu ?x)) => (relu ?x)",
                "b: (relu ?x) => (sigmoid (relu ?x))",
                "c: (sigmoid ?x) => (tanh ?x)",
                "d: (conv2d ?x ?w) => (relu (conv2d ?x ?w))",
                "e: (tanh ?x), (exp ?y) => (exp ?x), (tanh ?y)",
            ]
        )
    )
    ops, kept = reachable({"input", "relu"}, rules)
    assert ops == {"input", "relu", "sigmoid", "tanh"}
    assert [r.name for r in kept] == ["a", "b", "c"]  # d needs a conv, e an exp: neither can appear
    ops, kept = reachable({"input", "exp"}, rules)
    assert ops == {"input", "exp"} and kept == []


def _split_graph():
    b = GraphBuilder("split")
    x = b.input("x", (4, 6))
    left, right = b.split(x, 1, [2, 4])
    return b.build([b.relu(left), right])


def test_graph_ops_name_what_the_encoding_holds():
    assert graph_ops(_split_graph()) == {"input", "slice", "relu"}


@pytest.mark.parametrize("model", [pytest.param("squeezenet", marks=pytest.mark.slow), "nasrnn"])  # 2 s each
def test_loading_only_reachable_rules_saturates_to_the_same_egraph(model, monkeypatch):
    g = from_torch(*load(model))
    limits = Limits(iterations=4, nodes=20_000, seconds=60)
    pruned = saturate(g, load_rules(), limits)
    assert 0 < pruned.rules_loaded < pruned.rules_given
    monkeypatch.setattr(saturate_module, "reachable", lambda ops, rules: (frozenset(OPS), list(rules)))
    full = saturate(g, load_rules(), limits)
    assert full.rules_loaded == full.rules_given
    # the full set also runs the late families' iterations (the blocked layout), which find nothing here
    steps = [(s.enodes, s.eclasses, s.applied) for s in full.iterations]
    assert [(s.enodes, s.eclasses, s.applied) for s in pruned.iterations] == steps[: len(pruned.iterations)]
    assert all(not applied for _, _, applied in steps[len(pruned.iterations) :])
    assert (pruned.enodes, pruned.eclasses, pruned.rules_fired, pruned.stop_reason) == (
        full.enodes,
        full.eclasses,
        full.rules_fired,
        full.stop_reason,
    )


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_optimize_prints_nothing_on_stdout():
    # HiGHS prints its banner on the C++ stdout once per process, at the first solver: a fresh process
    code = (
        "import torch, rewrite\n"
        "b = rewrite.GraphBuilder(); x = b.input('x', (8, 16))\n"
        "w = b.weight('w', torch.randn(16, 16))\n"
        "g = b.build([b.relu(b.matmul(b.relu(b.relu(x)), w))])\n"
        "res = rewrite.optimize(g)\n"
        "assert res.stats.ilp is not None, 'the ILP ran'\n"
    )
    proc = _fresh(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


def test_every_op_and_rule_loads_in_little_memory():
    # egglog-python 13.2 copies a command's whole source text into each of its spans: the full prelude and
    # rule set parsed as one text took 4.4 GB; parsed in chunks, tens of MB
    code = (
        "import json, resource\n"
        "from rewrite.egraph.bindings import EGraph\n"
        "from rewrite.egraph.engine import run\n"
        "from rewrite.egraph.prelude import prelude\n"
        "from rewrite.egraph.rules import rules_to_egglog\n"
        "from rewrite.rulelang.loader import load_rules\n"
        "def rss(): return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0]) // 1024\n"
        "before = rss(); eg = EGraph()\n"
        "run(eg, prelude(), 'prelude', static=True)\n"
        "run(eg, rules_to_egglog(load_rules()), 'rules', static=True)\n"
        "print(json.dumps({'grew_mb': rss() - before}))\n"
    )
    proc = _fresh(code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["grew_mb"] < 400


def test_egglog_package_imported_later_shares_the_bindings():
    code = (
        "import sys, rewrite.egraph.bindings as ours\n"
        "assert 'egglog' not in sys.modules, 'the Python layer stayed unloaded'\n"
        "import egglog, egglog.bindings\n"
        "assert egglog.bindings.EGraph is ours.EGraph\n"
        "assert egglog.EGraph is not None\n"
    )
    proc = _fresh(code)
    assert proc.returncode == 0, proc.stderr


def test_the_package_loads_when_the_bindings_came_first_through_it():
    code = "import egglog, rewrite.egraph.bindings as ours\nassert ours.EGraph is egglog.bindings.EGraph\n"
    proc = _fresh(code)
    assert proc.returncode == 0, proc.stderr


def test_a_weight_order_rule_is_declared_only_with_its_op():
    from rewrite.egraph.prelude import prelude

    assert "weight-order-concat" not in prelude({"input", "relu"})
    assert "weight-order-concat" in prelude({"input", "concat"})
    assert "(Conv2d " not in prelude({"input", "relu"}) and "(Conv2d " in prelude()
