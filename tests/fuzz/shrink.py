"""Shrink a failing fuzz graph to a minimal one, and write it out as a regression test.

Shrinking is greedy: drop an output, replace a node's result by a fresh input
of its shape, or bypass a node with one of its same-shaped inputs — keeping a
step only if the graph still fails the same way (same outcome kind and the same
first words of its message) — until no step applies.

    >>> from tests.fuzz.gen import random_graph
    >>> print(to_python(random_graph(1, moves=1), seed=1, note="example").splitlines()[0])
    \"\"\"Fuzz regression (seed 1): example.\"\"\"
"""

from __future__ import annotations

import re
from collections.abc import Callable

import torch

from rewrite.ir.errors import GraphError, ShapeError
from rewrite.ir.graph import Graph, Node, Value

Predicate = Callable[[Graph], bool]


def signature(kind: str, detail: str) -> str:
    """What makes two failures 'the same': the kind and the message's first line without numbers or names."""
    first = detail.strip().splitlines()[0] if detail.strip() else ""
    first = re.sub(r"\$v\d+_\d+", "$v", first)
    return kind + ": " + re.sub(r"\d+(\.\d+)?(e-?\d+)?", "N", first)[:120]


def _rebuild(graph: Graph, replace: dict[Value, Value | tuple[int, ...]], outputs: list[Value]) -> Graph | None:
    """A copy where each key value is replaced by another value or (a shape) a fresh input; None if ill-formed."""
    out = Graph(name=graph.name)
    remap: dict[Value, Value] = {}
    names = {n.attrs["name"] for n in graph.inputs}
    fresh = 0
    try:
        for n in graph:
            ins = [remap[v] for v in n.inputs]
            node = out.add(n.op, ins, n.attrs, n.origin)
            if n.op == "weight":
                out.weights[n.attrs["name"]] = graph.weights[n.attrs["name"]]
            for i in range(len(n.shapes)):
                v = Value(n.id, i)
                r = replace.get(v)
                if isinstance(r, tuple):
                    while f"s{fresh}" in names:
                        fresh += 1
                    names.add(f"s{fresh}")
                    remap[v] = Value(out.add("input", [], {"name": f"s{fresh}", "shape": r}).id, 0)
                elif r is not None:
                    remap[v] = remap[r]
                else:
                    remap[v] = Value(node.id, i)
        out.outputs = [remap[v] for v in outputs]
        pruned = out.pruned()
        pruned.validate()
        return pruned
    except (GraphError, ShapeError, KeyError):
        return None


def _candidates(graph: Graph) -> list[Graph]:
    outs = list(graph.outputs)
    cands: list[Graph | None] = []
    if len(outs) > 1:
        cands += [_rebuild(graph, {}, outs[:i] + outs[i + 1 :]) for i in range(len(outs))]
    compute: list[Node] = [n for n in graph if n.op not in ("input", "weight")]
    for n in reversed(compute):  # late nodes first: cutting near the outputs removes the most
        for i, s in enumerate(n.shapes):
            cands.append(_rebuild(graph, {Value(n.id, i): s}, outs))
        if len(n.shapes) == 1:
            for v in n.inputs:
                if graph.shape_of(v) == n.shape:
                    cands.append(_rebuild(graph, {Value(n.id, 0): v}, outs))
    return [c for c in cands if c is not None and len(c.nodes) <= len(graph.nodes)]


def shrink(graph: Graph, still_fails: Predicate, max_checks: int = 300) -> Graph:
    """The smallest graph reached by greedy steps that ``still_fails`` (at most ``max_checks`` checks)."""
    best, checks = graph, 0
    improved = True
    while improved and checks < max_checks:
        improved = False
        for cand in sorted(_candidates(best), key=lambda g: len(g.nodes)):
            if checks >= max_checks:
                break
            checks += 1
            if len(cand.nodes) < len(best.nodes) or len(cand.outputs) < len(best.outputs):
                if still_fails(cand):
                    best, improved = cand, True
                    break
    return best


def _tensor_literal(t: torch.Tensor) -> str:
    return f"torch.tensor({t.tolist()!r}, dtype=torch.float32)"


def to_python(graph: Graph, seed: int, note: str) -> str:
    """A self-contained regression test that rebuilds ``graph`` with the builder and checks it again."""
    lines = [
        f'"""Fuzz regression (seed {seed}): {note}."""',
        "",
        "import torch",
        "",
        "from rewrite.ir.builder import GraphBuilder",
        "from tests.fuzz.oracle import check",
        "",
        "",
        "def build():",
        f"    b = GraphBuilder({graph.name!r})",
    ]
    ref: dict[Value, str] = {}
    for n in graph:
        var = f"v{n.id}"
        if n.op == "input":
            lines.append(f"    {var} = b.input({n.attrs['name']!r}, {tuple(n.shape)!r})")
        elif n.op == "weight":
            w = graph.weights[n.attrs["name"]]
            lines.append(f"    {var} = b.weight({n.attrs['name']!r}, {_tensor_literal(w)})")
        else:
            args = ", ".join([repr(n.op), *(ref[v] for v in n.inputs), *(f"{k}={v!r}" for k, v in n.attrs.items())])
            multi = len(n.shapes) > 1
            lines.append(f"    {var} = b.{'op_multi' if multi else 'op'}({args})")
        for i in range(len(n.shapes)):
            ref[Value(n.id, i)] = f"{var}[{i}]" if len(n.shapes) > 1 else var
    lines.append(f"    return b.build([{', '.join(ref[v] for v in graph.outputs)}])")
    lines += [
        "",
        "",
        f"def test_fuzz_seed_{seed}():",
        f"    outcome = check(build(), seed={seed})",
        "    assert not outcome.failed, outcome.detail",
        "",
    ]
    return "\n".join(lines)
