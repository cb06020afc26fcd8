"""Which rules produced the optimized graph's new nodes: our own tracking, since egglog's explanations
are not reachable through the bindings we use.

How it is computed (the page says the same): the structural diff (``rewrite.ir.diff``) names the
nodes of the result that the input did not have.  For every rule direction that *fired* during
saturation, each right-hand side pattern is matched against those nodes (op, literal attributes and
input structure, commutative operands in either order, a pattern variable bound consistently).  A
match credits the direction with every new node its pattern covers.  A region that only *removes*
nodes credits the fired directions whose left-hand side matches a removed node.  This is evidence,
not a derivation: a node several rewrites deep may be credited to the last rule only, and a
pattern can match a node that another rule built; directions that fired and match nothing are
listed as "fired without contributing".

    >>> from rewrite.ir.builder import GraphBuilder
    >>> from rewrite.ir.diff import diff
    >>> from rewrite.rulelang.loader import load_rules
    >>> def g(twice):
    ...     b = GraphBuilder("g"); x = b.input("x", (2, 3)); y = b.relu(x)
    ...     return b.build([b.relu(y) if twice else y])
    >>> p = provenance(diff(g(True), g(False)), load_rules(["algebra"]), {"relu-idem": 1})
    >>> p.regions[0].rules
    ['relu-idem']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rewrite.ir.diff import GraphDiff
from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import OPS
from rewrite.rulelang.syntax import ListExpr, Lit, Op, Pattern, Rule, Var


@dataclass
class RegionProvenance:
    """One changed region: the rule directions credited with it, most nodes first."""

    rules: list[str]
    nodes: dict[int, list[str]]  # new node id (after) -> directions whose RHS covers it
    unexplained: list[int] = field(default_factory=list)  # new nodes no fired RHS matches


@dataclass
class Provenance:
    regions: list[RegionProvenance]  # parallel to ``diff.regions``
    contributing: dict[str, int]  # direction -> times it fired, for those credited somewhere
    idle: dict[str, int]  # fired but credited nowhere
    locations: dict[str, str]  # direction -> rule file:line

    @property
    def where(self) -> dict[str, list[int]]:
        """Direction -> the (1-based) regions it is credited in."""
        out: dict[str, list[int]] = {}
        for k, r in enumerate(self.regions, start=1):
            for name in r.rules:
                out.setdefault(name, []).append(k)
        return out


def provenance(d: GraphDiff, rules: Sequence[Rule], fired: Mapping[str, int]) -> Provenance:
    """Credit the fired rule directions in ``rules`` with the changed regions of ``d`` (see the module doc)."""
    directions = {r.name: r for rule in rules for r in rule.directions() if fired.get(r.name, 0) > 0}
    added = set(d.added)
    credit: dict[int, set[str]] = {n: set() for n in added}
    for name, r in directions.items():
        for n in d.added:
            for pat in r.rhs:
                covered = _match(d.b, pat, Value(n, 0), {})
                if covered is not None:
                    for m in covered & added:
                        credit[m].add(name)
    regions = []
    for region in d.regions:
        nodes = {n: sorted(credit[n]) for n in region.added}
        counts: Counter[str] = Counter(name for names in nodes.values() for name in names)
        if not region.added:  # only removals: which fired LHS matches a removed node
            for name, r in directions.items():
                if any(_match(d.a, pat, Value(n, 0), {}) is not None for n in region.removed for pat in r.lhs):
                    counts[name] += 1
        regions.append(
            RegionProvenance(
                [name for name, _ in counts.most_common()], nodes, [n for n, names in nodes.items() if not names]
            )
        )
    used = {name for r in regions for name in r.rules}
    return Provenance(
        regions,
        {n: fired[n] for n in sorted(used)},
        {n: c for n, c in sorted(fired.items()) if c > 0 and n not in used},
        {n: f"{r.loc}" for n, r in directions.items()},
    )


def _match(g: Graph, pat: Pattern, v: Value, env: dict[str, Value]) -> set[int] | None:
    """The node ids ``pat``'s ops cover when it matches value ``v`` of ``g`` (binding ``env``), else None."""
    if isinstance(pat, Var):
        bound = env.get(pat.name)
        if bound is None:
            env[pat.name] = v
            return set()
        return set() if bound == v else None
    assert isinstance(pat, Op)
    node = g.nodes[v.node]
    if node.op != pat.op or len(node.inputs) != len(pat.inputs) or not _attrs_agree(node.attrs, pat):
        return None
    orders = [node.inputs]
    if len(node.inputs) == 2 and pat.op in OPS and OPS[pat.op].commutative:
        orders.append(node.inputs[::-1])
    for inputs in orders:
        trial = dict(env)
        covered: set[int] | None = {node.id}
        for sub, w in zip(pat.inputs, inputs):
            got = _match(g, sub, w, trial)
            if got is None:
                covered = None
                break
            covered |= got  # type: ignore[operator]
        if covered is not None:
            env.update(trial)
            return covered
    return None


def _attrs_agree(attrs: Mapping[str, object], pat: Op) -> bool:
    """Literal attributes in the pattern must equal the node's; variables and computed ones are not checked."""
    for name, expr in pat.attrs:
        if isinstance(expr, Lit):
            if name in attrs and attrs[name] != expr.value:
                return False
        elif isinstance(expr, ListExpr) and all(isinstance(i, Lit) for i in expr.items):
            want = tuple(i.value for i in expr.items if isinstance(i, Lit))
            have = attrs.get(name)
            if isinstance(have, (tuple, list)) and tuple(have) != want:
                return False
    return True
