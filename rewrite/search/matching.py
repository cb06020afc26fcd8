"""Every match of every rule direction in a concrete graph, with the rule semantics of saturation.

Matching itself is ``rewrite.rulelang.concrete`` (the semantics egglog runs);
this module decides *where* to try it and adds three things a concrete graph
needs and an e-graph does not:

* **Commutative operands.**  An e-graph holds ``add(a, b)`` and ``add(b, a)`` in
  one e-class once ``add-comm`` has run; a concrete graph holds one of them.  So
  each left-hand pattern is tried in every operand order of its commutative ops
  (its *variants*), and a rule that only swaps commutative operands (``add-comm``)
  is dropped: with the variants and the order-blind graph hash it is a no-op.
* **Candidate roots by op.**  A direction is only tried at nodes whose op is its
  left root's op (``slice`` also at split outputs, which match as slices).
* **Multi-pattern rules, bounded.**  Each pattern is matched on its own; the
  per-pattern matches are joined on the variables the patterns share (a hash
  join: two matmuls sharing ``?x`` meet in one bucket), roots must be distinct
  nodes, and the guards are checked on the joined match.  At most ``limit``
  joined matches per direction per graph are kept, from at most
  ``TRY_FACTOR * limit`` combinations tried (a rule whose patterns share nothing
  is a cross product).

    >>> from rewrite.rulelang.syntax import parse_rules
    >>> dirs, dropped = prepare(parse_rules("c: (add ?a ?b) => (add ?b ?a)\\nr: (relu (relu ?x)) => (relu ?x)"))
    >>> [d.rule.name for d in dirs], dropped
    (['r'], ['c'])
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import OPS
from rewrite.rulelang.concrete import Env, GraphFacts, guards_hold, match
from rewrite.rulelang.syntax import Call, Expr, ListExpr, Lit, Op, Pattern, Rule, Var, pattern_vars

TRY_FACTOR = 16  # multi-pattern: combinations tried per joined match kept


@dataclass(frozen=True)
class Direction:
    """One direction of a rule, with its left side in every commutative operand order."""

    rule: Rule
    variants: tuple[Rule, ...]  # variants[i].lhs: the left patterns with some commutative operands swapped
    pattern_variants: tuple[tuple[Pattern, ...], ...]  # per left pattern, its distinct variants

    @property
    def name(self) -> str:
        return self.rule.name


@dataclass(frozen=True)
class Match:
    """Where a direction applies: which variant, at which roots (one per left pattern)."""

    direction: int
    variant: int
    roots: tuple[Value, ...]


# ------------------------------------------------------------------ preparing rules


def _expr_key(e: Expr) -> Any:
    if isinstance(e, Var):
        return ("var", e.name)
    if isinstance(e, Lit):
        return ("lit", e.value)
    if isinstance(e, ListExpr):
        return ("list", tuple(_expr_key(x) for x in e.items))
    assert isinstance(e, Call)
    return ("call", e.fn, tuple(_expr_key(x) for x in e.args))


def pattern_key(p: Pattern, commutative: bool = True) -> Any:
    """A pattern's structure without source locations; commutative operands unordered if asked."""
    if isinstance(p, Var):
        return ("?", p.name)
    ins = [pattern_key(q, commutative) for q in p.inputs]
    if commutative and OPS[p.op].commutative:
        ins.sort(key=repr)
    return (p.op, tuple(ins), tuple(sorted((k, _expr_key(e)) for k, e in p.attrs)))


def variants(p: Pattern) -> list[Pattern]:
    """``p`` in every operand order of its commutative ops, without repeats.

    >>> from rewrite.rulelang.syntax import parse_pattern
    >>> len(variants(parse_pattern("(add (mul ?a ?b) ?c)"))), len(variants(parse_pattern("(add ?a ?a)")))
    (4, 1)
    """
    if isinstance(p, Var):
        return [p]
    out: list[Pattern] = []
    seen: set[Any] = set()
    for ins in itertools.product(*(variants(q) for q in p.inputs)):
        orders = [ins, ins[::-1]] if OPS[p.op].commutative and len(ins) == 2 else [ins]
        for order in orders:
            q = replace(p, inputs=tuple(order))
            k = pattern_key(q, commutative=False)
            if k not in seen:
                seen.add(k)
                out.append(q)
    return out


def _all_attrs_named(p: Pattern) -> bool:
    """No attribute left out: a left-out attribute matches anything but is rebuilt with its default."""
    if isinstance(p, Var):
        return True
    return len(p.attrs) == len(OPS[p.op].attrs) and all(map(_all_attrs_named, p.inputs))


def prepare(rules: Sequence[Rule]) -> tuple[list[Direction], list[str]]:
    """Rule directions ready to match, and the names of those dropped as commutation-only no-ops."""
    dirs: list[Direction] = []
    dropped: list[str] = []
    for rule in rules:
        for d in rule.directions():
            if all(map(_all_attrs_named, d.lhs)) and [pattern_key(p) for p in d.lhs] == [pattern_key(p) for p in d.rhs]:
                dropped.append(d.name)
                continue
            per = tuple(tuple(variants(p)) for p in d.lhs)
            combos = tuple(replace(d, lhs=tuple(c)) for c in itertools.product(*per))
            dirs.append(Direction(d, combos, per))
    return dirs, dropped


# ------------------------------------------------------------------ matching

Table = dict[Value, list[tuple["_Unit", Env]]]  # root value -> the matches rooted there


@dataclass(frozen=True)
class _Unit:
    """One variant of one left pattern of one direction: what is tried at a candidate root."""

    direction: int
    pattern: int  # which left pattern
    variant: int  # which variant of that pattern
    lhs: Op
    rule: Rule | None  # single-pattern directions: the variant rule, whose guards are checked at once


def _depth(p: Pattern) -> int:
    return 0 if isinstance(p, Var) else 1 + max((_depth(q) for q in p.inputs), default=0)


def _merge(envs: Sequence[Env]) -> Env:
    """One environment from per-pattern ones that agree on their shared variables."""
    out = Env()
    for e in envs:
        out.shapes.update(e.shapes)
        out.weights |= e.weights
        out.order.update(e.order)
        out.attrs.update(e.attrs)
        out.anon.update(e.anon)
        out.values.update(e.values)
    return out


def _join_key(env: Env, tensors: Sequence[str], attrs: Sequence[str]) -> tuple[Any, ...]:
    return tuple(env.values[t] for t in tensors) + tuple(env.attrs.get(a) for a in attrs)


def _shared_vars(rule: Rule, i: int) -> tuple[list[str], list[str]]:
    """Tensor and attribute variables left pattern ``i`` shares with the patterns before it."""
    names: list[set[str]] = []
    for p in rule.lhs:
        tensors, attrs = pattern_vars(p)
        names.append(set(tensors) | {"@" + a for a in attrs})
    shared = sorted(names[i] & set().union(*names[:i]))
    return [x for x in shared if not x.startswith("@")], [x[1:] for x in shared if x.startswith("@")]


def _combo_index(ks: Sequence[int], sizes: Sequence[int]) -> int:
    """Index of a per-pattern variant choice in ``itertools.product`` order (``Direction.variants``)."""
    out = 0
    for k, n in zip(ks, sizes, strict=True):
        out = out * n + k
    return out


class Matcher:
    """Matches of a rule set in a graph, kept in a table (root -> matches) that a rewrite updates.

    A match is found again in a rewritten graph unless one of the nodes its left
    side covers changed.  Those nodes lie at most ``depth`` reads below its root,
    so after a rewrite only roots within ``depth`` reads of a new or rewired node
    (the *region*) are matched again; the rest of the table is the parent's.
    Single-pattern matches are stored with their guards checked; multi-pattern
    ones per pattern, joined (and their guards checked) when enumerated.
    """

    def __init__(self, directions: Sequence[Direction], multi_limit: int = 256) -> None:
        self.directions = list(directions)
        self.multi_limit = multi_limit
        self.by_op: dict[str, list[_Unit]] = defaultdict(list)
        for di, d in enumerate(self.directions):
            for pi, pvars in enumerate(d.pattern_variants):
                for k, q in enumerate(pvars):
                    if isinstance(q, Op):
                        rule = None if d.rule.multi else d.variants[k]
                        self.by_op[q.op].append(_Unit(di, pi, k, q, rule))
        self.depth = max((_depth(p) - 1 for d in self.directions for p in d.rule.lhs), default=0)

    def _match_at(self, v: Value, op: str, facts: GraphFacts) -> list[tuple[_Unit, Env]]:
        out = []
        seen: set[Any] = set()
        for u in self.by_op.get(op, ()):
            env = Env()
            if not match(u.lhs, v, facts, env):
                continue
            if u.rule is not None:
                if not guards_hold(u.rule, env):
                    continue
                key = (u.direction, frozenset(env.values.items()), tuple(sorted(env.attrs.items(), key=repr)))
                if key in seen:  # another operand order bound the same values
                    continue
                seen.add(key)
            out.append((u, env))
        return out

    def _fill(self, table: Table, graph: Graph, facts: GraphFacts, ids: Iterable[int]) -> Table:
        for i in ids:
            n = graph.nodes[i]
            if n.op == "split":  # split outputs match slice patterns
                cands = [(Value(i, k), "slice") for k in range(len(n.shapes))]
            else:
                cands = [(Value(i, 0), n.op)]
            for v, op in cands:
                found = self._match_at(v, op, facts)
                if found:
                    table[v] = found
        return table

    def table(self, graph: Graph, facts: GraphFacts) -> Table:
        """Every match in ``graph``."""
        return self._fill({}, graph, facts, list(graph.nodes))

    def region(self, readers: Mapping[Value, Sequence[int]], graph: Graph, changed: Iterable[int]) -> set[int]:
        """Node ids within ``depth`` reads of a changed node: the roots whose matches may differ."""
        out = {i for i in changed if i in graph.nodes}
        frontier = set(out)
        for _ in range(self.depth):
            nxt: set[int] = set()
            for i in frontier:
                for k in range(len(graph.nodes[i].shapes)):
                    nxt.update(u for u in readers.get(Value(i, k), ()) if u not in out)
            out |= nxt
            frontier = nxt
        return out

    def update(self, parent: Table, graph: Graph, facts: GraphFacts, region: set[int]) -> Table:
        """The table of a rewritten graph: the parent's outside ``region``, matched again inside it."""
        table = {v: e for v, e in parent.items() if v.node in graph.nodes and v.node not in region}
        return self._fill(table, graph, facts, [i for i in graph.nodes if i in region])

    def matches(self, table: Table) -> Iterator[tuple[Match, Env]]:
        """Every match in a table (multi-pattern ones joined and guarded), in a deterministic order."""
        multi: dict[int, list[list[tuple[int, Value, Env]]]] = {}
        for v, entries in table.items():
            for u, env in entries:
                if u.rule is not None:
                    yield Match(u.direction, u.variant, (v,)), env
                else:
                    per = multi.setdefault(u.direction, [[] for _ in self.directions[u.direction].rule.lhs])
                    per[u.pattern].append((u.variant, v, env))
        for di in sorted(multi):
            yield from self._join(di, multi[di])

    def _join(self, di: int, per: list[list[tuple[int, Value, Env]]]) -> Iterator[tuple[Match, Env]]:
        """Per-pattern matches hash-joined on shared variables, roots distinct, guards checked; bounded."""
        d, limit = self.directions[di], self.multi_limit
        partial: list[tuple[tuple[int, ...], tuple[Value, ...], list[Env]]] = [((k,), (v,), [e]) for k, v, e in per[0]]
        for i in range(1, len(per)):
            tensors, attrs = _shared_vars(d.rule, i)
            buckets: dict[tuple[Any, ...], list[tuple[int, Value, Env]]] = defaultdict(list)
            for k, v, env in per[i]:
                buckets[_join_key(env, tensors, attrs)].append((k, v, env))
            joined = []
            for ks, roots, envs in partial:
                key = _join_key(envs[0] if len(envs) == 1 else _merge(envs), tensors, attrs)
                for k, v, env in buckets.get(key, []):
                    if all(r.node != v.node for r in roots):
                        joined.append(((*ks, k), (*roots, v), [*envs, env]))
                if len(joined) >= TRY_FACTOR * limit:
                    break
            partial = joined
        sizes = [len(pv) for pv in d.pattern_variants]
        kept = 0
        for ks, roots, envs in partial:
            variant = _combo_index(ks, sizes)
            env = _merge(envs)
            if guards_hold(d.variants[variant], env):
                yield Match(di, variant, roots), env
                kept += 1
                if kept >= limit:
                    return


__all__ = ["Direction", "Match", "Matcher", "Table", "pattern_key", "prepare", "variants"]
