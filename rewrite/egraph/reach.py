"""What a graph can reach: the ops its e-graph can ever hold, and the rules that can ever match it.

An e-graph starts with the graph's ops; a rule adds the ops of its right-hand side, and can fire only once
every op of its left-hand side is present.  So the ops reachable from a graph are the least fixed point of
"the graph's ops, plus the right-hand ops of every rule whose left-hand ops are all reachable", and a rule
outside that set can never match.  Loading only those constructors, their shape and dtype rules and those
rules makes the e-graph smaller to load and cheaper to run: nothing it leaves out could ever have matched.

    >>> from rewrite.rulelang.syntax import parse_rules
    >>> rs = parse_rules('''a: (relu (relu ?x)) => (relu ?x)
    ... b: (sigmoid ?x) => (tanh ?x)''')
    >>> ops, kept = reachable({"input", "relu"}, rs)
    >>> sorted(ops), [r.name for r in kept]
    (['input', 'relu'], ['a'])
"""

from __future__ import annotations

from collections.abc import Iterable

from rewrite.ir.graph import Graph
from rewrite.rulelang.syntax import Op, Pattern, Rule

__all__ = ["graph_ops", "pattern_ops", "reachable"]


def pattern_ops(patterns: Iterable[Pattern]) -> frozenset[str]:
    """Every op named in ``patterns``."""
    out: set[str] = set()
    stack = list(patterns)
    while stack:
        p = stack.pop()
        if isinstance(p, Op):
            out.add(p.op)
            stack.extend(p.inputs)
    return frozenset(out)


def graph_ops(graph: Graph) -> frozenset[str]:
    """The ops ``graph``'s encoding holds: a split is encoded as slices (``rewrite.egraph.encode``)."""
    return frozenset("slice" if n.op == "split" else n.op for n in graph)


def reachable(ops: Iterable[str], rules: Iterable[Rule]) -> tuple[frozenset[str], list[Rule]]:
    """The ops reachable from ``ops`` through ``rules``, and the rules that can match (in the given order).

    A rule is kept whole (both directions) when either direction can match: its egglog text is one unit.
    """
    have = set(ops)
    rules = list(rules)
    sides = [[(pattern_ops(d.lhs), pattern_ops(d.rhs)) for d in r.directions()] for r in rules]
    live = [False] * len(rules)
    changed = True
    while changed:
        changed = False
        for i, dirs in enumerate(sides):
            for lhs, rhs in dirs:
                if lhs <= have:
                    live[i] = True
                    if not rhs <= have:
                        have |= rhs
                        changed = True
    return frozenset(have), [r for r, keep in zip(rules, live, strict=True) if keep]
