"""Which rules produced the optimized graph's new nodes: our own tracking, since egglog's explanations
are not reachable through the bindings we use.

How it is computed (the page says the same): the structural diff (``rewrite.ir.diff``) groups the
nodes the result has and the input had not, and those it dropped, into regions.  A rule direction
that *fired* during saturation is credited with a region when one of its left-hand side patterns
matches a removed node of the input and one of its right-hand side patterns matches the result at a
new node (or at a node a new node reads) with the *same* bindings: each pattern variable bound to the
same unchanged value on both sides, or to a removed value before and a new one after (op, literal
attributes and input structure checked; commutative operands in either order).  The new nodes the
RHS covers, and those reading its root, are credited to the direction.  A region that no direction
explains that way is credited *loosely* (marked so): to the directions whose RHS alone matches a new
node, or, when it only removes nodes, whose LHS matches a removed one.  This is evidence, not a
derivation: a region built by a chain of rewrites may be credited loosely or to its last step only;
directions that fired and are credited nowhere are listed as "fired without contributing".

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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from rewrite.ir.diff import GraphDiff, Region
from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import OPS
from rewrite.rulelang.syntax import ListExpr, Lit, Op, Pattern, Rule, Var


@dataclass
class RegionProvenance:
    """One changed region: the rule directions credited with it, most nodes first."""

    rules: list[str]
    nodes: dict[int, list[str]]  # new node id (after) -> directions whose RHS covers it
    unexplained: list[int] = field(default_factory=list)  # new nodes no fired RHS matches
    loose: bool = False  # no direction matched both sides; credited by the RHS (or LHS) alone


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
    removed, added = set(d.removed), set(d.added)
    regions = []
    for region in d.regions:
        nodes, rules_here = _strict(d, region, directions, removed, added)
        loose = not rules_here
        if loose:
            nodes, rules_here = _loose(d, region, directions, added)
        regions.append(RegionProvenance(rules_here, nodes, [n for n, names in nodes.items() if not names], loose=loose))
    used = {name for r in regions for name in r.rules}
    return Provenance(
        regions,
        {n: fired[n] for n in sorted(used)},
        {n: c for n, c in sorted(fired.items()) if c > 0 and n not in used},
        {n: f"{r.loc}" for n, r in directions.items()},
    )


def _strict(
    d: GraphDiff, region: Region, directions: Mapping[str, Rule], removed: set[int], added: set[int]
) -> tuple[dict[int, list[str]], list[str]]:
    """Directions whose LHS matches a removed node and whose RHS, with the same bindings, matches the result."""
    b_inputs = {v.node for n in region.added for v in d.b.nodes[n].inputs}
    a_inputs = {d.shared[v.node] for n in region.removed for v in d.a.nodes[n].inputs if v.node in d.shared}
    roots = sorted(set(region.added) | b_inputs | a_inputs)
    by_op: dict[str, list[int]] = {}
    for n in roots:
        by_op.setdefault(d.b.nodes[n].op, []).append(n)
    removed_by_op: dict[str, list[int]] = {}
    for n in region.removed:
        removed_by_op.setdefault(d.a.nodes[n].op, []).append(n)
    readers: dict[int, list[int]] = {}
    for n in region.added:
        for v in d.b.nodes[n].inputs:
            readers.setdefault(v.node, []).append(n)

    def same(va: Value, vb: Value) -> bool:
        if va.index != vb.index:
            return False
        return d.shared.get(va.node) == vb.node or (va.node in removed and vb.node in added)

    nodes: dict[int, set[str]] = {n: set() for n in region.added}
    counts: Counter[str] = Counter()
    for name, r in directions.items():
        hit = False
        for lhs in r.lhs:
            for n in region.removed if isinstance(lhs, Var) else removed_by_op.get(lhs.op, ()):
                for _, env_a in _matches(d.a, lhs, Value(n, 0), {}):
                    for rhs in r.rhs:
                        for root in roots if isinstance(rhs, Var) else by_op.get(rhs.op, ()):
                            for covered, env_b in _matches(d.b, rhs, Value(root, 0), {}):
                                common = env_a.keys() & env_b.keys()
                                if all(same(env_a[k], env_b[k]) for k in common):
                                    hit = True
                                    for m in (covered & added) | set(readers.get(root, [])):
                                        if m in nodes:
                                            nodes[m].add(name)
        if hit:
            counts[name] += 1 + sum(name in s for s in nodes.values())
    return {n: sorted(s) for n, s in nodes.items()}, [name for name, _ in counts.most_common()]


def _loose(
    d: GraphDiff, region: Region, directions: Mapping[str, Rule], added: set[int]
) -> tuple[dict[int, list[str]], list[str]]:
    """The fallback: directions whose RHS alone matches a new node (or LHS a removed one, for pure removals)."""
    nodes: dict[int, set[str]] = {n: set() for n in region.added}
    for name, r in directions.items():
        for n in region.added:
            for pat in r.rhs:
                for covered, _ in _matches(d.b, pat, Value(n, 0), {}):
                    for m in covered & added:
                        if m in nodes:
                            nodes[m].add(name)
    counts: Counter[str] = Counter(name for names in nodes.values() for name in names)
    if not region.added:
        for name, r in directions.items():
            if any(next(_matches(d.a, pat, Value(n, 0), {}), None) for n in region.removed for pat in r.lhs):
                counts[name] += 1
    return {n: sorted(s) for n, s in nodes.items()}, [name for name, _ in counts.most_common()]


def _matches(g: Graph, pat: Pattern, v: Value, env: dict[str, Value]) -> Iterator[tuple[set[int], dict[str, Value]]]:
    """Every way ``pat`` matches value ``v`` of ``g`` extending ``env``: the node ids it covers, the bindings."""
    if isinstance(pat, Var):
        bound = env.get(pat.name)
        if bound is None:
            yield set(), {**env, pat.name: v}
        elif bound == v:
            yield set(), env
        return
    assert isinstance(pat, Op)
    node = g.nodes[v.node]
    if node.op != pat.op or len(node.inputs) != len(pat.inputs) or not _attrs_agree(node.attrs, pat):
        return
    orders = [node.inputs]
    if len(node.inputs) == 2 and pat.op in OPS and OPS[pat.op].commutative:
        orders.append(node.inputs[::-1])
    for inputs in orders:
        yield from _inputs(g, pat.inputs, list(inputs), {node.id}, env)


def _inputs(
    g: Graph, pats: Sequence[Pattern], vals: list[Value], covered: set[int], env: dict[str, Value]
) -> Iterator[tuple[set[int], dict[str, Value]]]:
    if not pats:
        yield covered, env
        return
    for got, env2 in _matches(g, pats[0], vals[0], env):
        yield from _inputs(g, pats[1:], vals[1:], covered | got, env2)


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
