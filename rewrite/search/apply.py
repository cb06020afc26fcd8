"""Applying one rule match to a concrete graph: plan it (cheap, exact cost change), then build it.

A *plan* is what a rewrite changes: the right side's nodes that do not exist
yet (an existing node that computes the same thing is reused), which value
replaces each matched root, which nodes die, and the exact change in modelled
cost.  Planning touches only the rewritten region, so the search can price
every match of a graph and build (``materialize``) only the graphs it pops.

Building copies the parent's node table (node objects are shared), drops the
dead nodes, adds the new ones through ``Graph.add`` (shapes re-inferred),
rewires the replaced roots' readers and the outputs, and restores topological
order.  Node ids of surviving nodes do not change, so weights keep their
numbers (the ``wfirst``/``wlast`` order of merge guards) from graph to graph.

    >>> from rewrite.ir.builder import GraphBuilder
    >>> from rewrite.rulelang.concrete import match_rule
    >>> from rewrite.rulelang.syntax import parse_rules
    >>> b = GraphBuilder(); x = b.input("x", (2, 3)); g = b.build([b.relu(b.relu(x))])
    >>> rule = parse_rules("r: (relu (relu ?x)) => (relu ?x)")[0]
    >>> ex = Expanded.of(g); env = match_rule(rule, g.outputs, ex.facts)
    >>> p = plan(ex, rule, env, tuple(g.outputs), CostMemo(lambda op, attrs, shapes, dtype="float32": 1.0))
    >>> p.delta, materialize(ex, p).graph.summary()
    (-1.0, {'relu': 1})
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from costs.model import CostModel
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import GraphError, SearchError
from rewrite.ir.graph import Graph, Node, Value
from rewrite.ir.ops import OPS, Shape, ShapeError, norm_axis
from rewrite.rulelang.concrete import Env, GraphFacts, Undefined, instantiate
from rewrite.rulelang.syntax import Rule
from rewrite.search.hashing import NodeKey, attrs_key, node_key


class CostMemo:
    """A cost model memoized on (op, attributes, input shapes): the search prices the same configurations often."""

    def __init__(self, model: CostModel) -> None:
        self.model = model
        self.table: dict[tuple[Any, ...], float] = {}

    def __call__(self, op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape]) -> float:
        key = (op, attrs_key(attrs), tuple(in_shapes))
        cost = self.table.get(key)
        if cost is None:
            cost = self.table[key] = float(self.model(op, attrs, list(in_shapes)))
        return cost

    def node(self, graph: Graph, n: Node) -> float:
        return self(n.op, n.attrs, [graph.shape_of(v) for v in n.inputs])

    def graph(self, graph: Graph) -> float:
        """``costs.model.graph_cost``, memoized: run-time nodes only, weight-only nodes are free."""
        const = graph.weight_only()
        return sum(self.node(graph, n) for n in graph.compute_nodes() if n.id not in const)


@dataclass
class Expanded:
    """What planning rewrites of one graph needs, computed once per graph (all O(nodes))."""

    graph: Graph
    facts: GraphFacts
    readers: dict[Value, list[int]]  # value -> ids of the nodes reading it, once per input slot
    uses: dict[int, int]  # node id -> reads of any of its outputs (input slots and graph outputs)
    value_uses: Counter[Value]
    cse: dict[NodeKey, Value]  # what each node computes -> its value
    pos: dict[int, int]  # node id -> position in topological order

    @classmethod
    def of(cls, graph: Graph) -> Expanded:
        readers: dict[Value, list[int]] = defaultdict(list)
        uses: dict[int, int] = dict.fromkeys(graph.nodes, 0)
        value_uses: Counter[Value] = Counter(graph.outputs)
        cse: dict[NodeKey, Value] = {}
        for n in graph:
            for v in n.inputs:
                readers[v].append(n.id)
                uses[v.node] += 1
                value_uses[v] += 1
            if len(n.shapes) == 1:
                cse.setdefault(node_key(n.op, n.attrs, n.inputs), Value(n.id, 0))
        for v in graph.outputs:
            uses[v.node] += 1
        pos = {i: k for k, i in enumerate(graph.nodes)}
        return cls(graph, GraphFacts.of(graph), dict(readers), uses, value_uses, cse, pos)


@dataclass
class NewNode:
    id: int  # a planning id, above every id of the graph
    op: str
    inputs: tuple[Value, ...]
    attrs: dict[str, Any]
    shapes: tuple[Shape, ...]
    weight_only: bool


@dataclass
class Plan:
    """One rewrite, ready to build: see the module docstring."""

    rule: str
    new: list[NewNode]
    replace: dict[Value, Value]  # matched root -> the value that takes its place
    dead: set[int]
    delta: float | None  # change in modelled cost; None when a root's weight-only status changes
    roots: tuple[Value, ...] = field(default=())


class _Planner(GraphBuilder):
    """A builder that reuses existing nodes and records new ones instead of adding them."""

    def __init__(self, ex: Expanded) -> None:
        super().__init__(ex.graph.name)
        self.ex = ex
        self.new: dict[int, NewNode] = {}
        self.new_cse: dict[NodeKey, Value] = {}
        self.next_id = max(ex.graph.nodes, default=-1) + 1

    def shape(self, v: Value) -> Shape:
        nn = self.new.get(v.node)
        return nn.shapes[v.index] if nn is not None else self.ex.graph.shape_of(v)

    def weight_only(self, v: Value) -> bool:
        nn = self.new.get(v.node)
        return nn.weight_only if nn is not None else v.node in self.ex.facts.weight_only

    def op(self, op: str, *inputs: Value, **attrs: Any) -> Value:
        opdef = OPS[op]
        norm = opdef.normalize_attrs(attrs)
        in_shapes = [self.shape(v) for v in inputs]
        if "axis" in norm and in_shapes:  # as Graph.add does, so keys match existing nodes
            norm["axis"] = norm_axis(norm["axis"], len(in_shapes[0]))
        shapes = tuple(opdef.infer(in_shapes, norm))
        key = node_key(op, norm, inputs)
        found = self.ex.cse.get(key) or self.new_cse.get(key)
        if found is not None:
            return found
        wo = opdef.constant or (bool(inputs) and all(self.weight_only(v) for v in inputs))
        nn = NewNode(self.next_id, op, tuple(inputs), norm, shapes, wo)
        self.new[nn.id] = nn
        self.next_id += 1
        self.new_cse[key] = Value(nn.id, 0)
        return Value(nn.id, 0)


def _build(ex: Expanded, rule: Rule, env: Env, roots: tuple[Value, ...]) -> tuple[_Planner, list[Value]]:
    """The right side, planned; raises ``SearchError`` when the rule builds something ill-formed."""
    planner = _Planner(ex)
    env = env.copy()
    try:
        news = [instantiate(p, env, planner) for p in rule.rhs]
    except (ShapeError, GraphError, Undefined, TypeError) as e:
        raise SearchError(f"rule '{rule.name}' ({rule.loc}) builds an ill-formed right side at {roots}: {e}") from None
    for old, new in zip(roots, news, strict=True):
        if planner.shape(new) != ex.graph.shape_of(old):
            raise SearchError(
                f"rule '{rule.name}' ({rule.loc}) replaces {old} of shape {ex.graph.shape_of(old)} "
                f"by a value of shape {planner.shape(new)}: the rule is unsound"
            )
    return planner, news


def _reads_a_root(ex: Expanded, roots: Sequence[Value], leaves: Sequence[Value]) -> bool:
    """Does any leaf depend on (or is) a matched root?  Only leaves after a root in topological
    order can, and the walk downwards from the roots stops past the last of them."""
    first = min(ex.pos[r.node] for r in roots)
    late = {v.node for v in leaves if ex.pos[v.node] >= first}
    if not late:
        return False
    limit = max(ex.pos[i] for i in late)
    seen = {r.node for r in roots}
    stack = list(seen)
    while stack:
        i = stack.pop()
        if i in late:
            return True
        for k in range(len(ex.graph.nodes[i].shapes)):
            for u in ex.readers.get(Value(i, k), ()):
                if u not in seen and ex.pos[u] <= limit:
                    seen.add(u)
                    stack.append(u)
    return False


def _dead(ex: Expanded, new: Sequence[NewNode], repl: Mapping[Value, Value]) -> set[int]:
    """Nodes no longer read once the roots are replaced (a reference count, cascading upwards)."""
    change: dict[int, int] = defaultdict(int)
    for old, val in repl.items():
        k = ex.value_uses[old]
        change[old.node] -= k
        change[val.node] += k
    for nn in new:
        for v in nn.inputs:
            change[v.node] += 1
    dead: set[int] = set()
    stack = [old.node for old in repl]
    while stack:
        i = stack.pop()
        n = ex.graph.nodes.get(i)
        if n is None or i in dead or n.op == "input" or ex.uses[i] + change[i] > 0:
            continue
        dead.add(i)
        for v in n.inputs:
            change[v.node] -= 1
            stack.append(v.node)
    return dead


def plan(ex: Expanded, rule: Rule, env: Env, roots: tuple[Value, ...], memo: CostMemo) -> Plan | None:
    """The rewrite of ``rule`` matched at ``roots`` with bindings ``env``; None if it changes nothing
    or would make a cycle (a multi-pattern match whose variables read another matched root)."""
    if rule.multi and _reads_a_root(ex, roots, list(env.values.values())):
        return None
    planner, news = _build(ex, rule, env, roots)
    repl = {old: new for old, new in zip(roots, news, strict=True) if old != new}
    if not repl:
        return None
    new = list(planner.new.values())
    dead = _dead(ex, new, repl)
    wo = ex.facts.weight_only
    if any((old.node in wo) != planner.weight_only(val) for old, val in repl.items()):
        delta = None  # readers downstream change status: only the whole graph can be priced
    else:
        g = ex.graph
        added = sum(memo(nn.op, nn.attrs, [planner.shape(v) for v in nn.inputs]) for nn in new if not nn.weight_only)
        removed = sum(memo.node(g, g.nodes[i]) for i in dead if i not in wo)
        delta = added - removed
    return Plan(rule.name, new, repl, dead, delta, roots)


def _order(ex: Expanded, g: Graph, p: Plan, new_ids: list[int]) -> list[int]:
    """Topological order: the parent's order with the new nodes inserted before their first reader."""
    parent = [i for i in ex.graph.nodes if i not in p.dead]
    readers = [u for old in p.replace for u in ex.readers.get(old, ()) if u not in p.dead]
    hi = min((ex.pos[u] for u in readers), default=len(ex.pos))
    lo = max((ex.pos[v.node] for nn in p.new for v in nn.inputs if v.node in ex.pos), default=-1)
    if lo < hi:
        return [i for i in parent if ex.pos[i] < hi] + new_ids + [i for i in parent if ex.pos[i] >= hi]
    return _toposort(g)


def _toposort(g: Graph) -> list[int]:
    """Inputs first (their order is the graph's input order), then depth-first by inputs."""
    order = [n.id for n in g if n.op == "input"]
    done = set(order)
    for start in list(g.nodes):
        stack: list[tuple[int, int]] = [(start, 0)]
        while stack:
            i, k = stack.pop()
            if i in done:
                continue
            ins = g.nodes[i].inputs
            if k < len(ins):
                stack.append((i, k + 1))
                if ins[k].node not in done:
                    stack.append((ins[k].node, 0))
            else:
                done.add(i)
                order.append(i)
    return order


@dataclass
class Built:
    """A built rewrite: the new graph, the ids of its nodes that are new or read a new input
    (where matches may differ from the parent's), and which value replaced each matched root."""

    graph: Graph
    changed: set[int]
    replaced: dict[Value, Value]


def materialize(ex: Expanded, p: Plan) -> Built:
    """Build the planned rewrite of ``ex.graph`` as a new graph (the parent is not changed)."""
    parent = ex.graph
    g = Graph({i: n for i, n in parent.nodes.items() if i not in p.dead}, parent.weights, [], parent.name)
    real: dict[int, Value] = {}
    for nn in p.new:
        ins = [real.get(v.node, v) for v in nn.inputs]  # planning ids are above every parent id
        node = g.add(nn.op, ins, nn.attrs, origin=f"rule {p.rule}")
        if node.shapes != nn.shapes:
            raise SearchError(f"rule '{p.rule}': node {nn.op} re-inferred as {node.shapes}, planned {nn.shapes}")
        real[nn.id] = Value(node.id, 0)
    repl = {old: real.get(new.node, new) for old, new in p.replace.items()}
    rewired = {u for old in repl for u in ex.readers.get(old, ()) if u not in p.dead}
    for uid in rewired:
        n = g.nodes[uid]
        g.nodes[uid] = replace(n, inputs=tuple(repl.get(v, v) for v in n.inputs))
    g.outputs = [repl.get(v, v) for v in parent.outputs]
    order = _order(ex, g, p, [real[nn.id].node for nn in p.new])
    g.nodes = {i: g.nodes[i] for i in order}
    return Built(g, rewired | {v.node for v in real.values()}, repl)


def same_cost(a: float, b: float) -> bool:
    """Costs equal up to the rounding of summing them in another order."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


__all__ = ["Built", "CostMemo", "Expanded", "Plan", "materialize", "plan", "same_cost"]
