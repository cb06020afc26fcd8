"""rewrite.diff: structural matching, op counts and regions."""

import torch

from rewrite.ir.builder import GraphBuilder
from rewrite.ir.diff import diff
from rewrite.pipeline import optimize


def _two_matmuls(merged: bool):
    b = GraphBuilder("mm")
    x = b.input("x", (4, 8))
    w1, w2 = b.weight("w1", torch.ones(8, 3)), b.weight("w2", torch.ones(8, 5))
    if merged:
        y = b.matmul(x, b.concat(w1, w2, axis=1))
        p, q = b.split(y, 1, (3, 5))
    else:
        p, q = b.matmul(x, w1), b.matmul(x, w2)
    t = b.tanh(b.input("z", (4, 4)))
    return b.build([b.relu(p), b.relu(q), t])


def test_equal_graphs_with_other_numbering_are_unchanged():
    g = _two_matmuls(False)
    d = diff(g, g.pruned())
    assert d.unchanged and d.regions == [] and "structurally equal" in d.text()


def test_a_merge_is_one_region_with_its_old_and_new_nodes():
    a, b = _two_matmuls(False), _two_matmuls(True)
    d = diff(a, b)
    assert d.removed_ops == {"matmul": 2}  # the relus only read the rewritten values: rebuilt, not changed
    assert d.added_ops == {"concat": 1, "matmul": 1, "split": 1}
    assert len(d.regions) == 1
    text = d.text()
    assert text.splitlines()[0] == "mm -> mm: 5 -> 5 ops (+0), 1 region(s)"  # the weight concat is precomputed
    assert "  - " in text and "  + " in text and "tanh" not in text


def test_separate_rewrites_are_separate_regions():
    b = GraphBuilder("two")
    x, y = b.input("x", (3,)), b.input("y", (3,))
    g1 = b.build([b.relu(b.relu(x)), b.smul(y, scalar=1.0)])
    res = optimize(g1)
    d = diff(g1, res.graph)
    assert d.removed_ops == {"relu": 1, "smul": 1} and d.added_ops == {}
    assert len(d.regions) == 2  # both read a graph input: inputs do not link regions
