"""Cost-directed backtracking search over concrete graphs (TASO, SOSP'19; MetaFlow, SysML'19).

The search keeps a priority queue of graphs ordered by modelled cost.  It pops
the cheapest, drops it if a graph with the same structural hash was expanded
before, and otherwise *expands* it: every match of every rule direction is
planned (its exact cost change, see ``apply``), and each rewrite whose cost is
below ``alpha`` times the best cost so far is queued.  ``alpha`` > 1 lets the
search walk through slightly worse graphs (an enlarged kernel) to reach better
ones (two convolutions merged); ``alpha`` = 1 is greedy descent.  A rewrite
cheaper than the best is built at once and becomes the best.

Queued rewrites are kept as (parent, match) and built only when popped, so
pricing a match costs only its rewritten region, not a copy of the graph.
Budgets: ``max_expansions`` (graphs expanded) and ``seconds`` (checked between
matches too, so one big graph cannot overrun it by much).  The queue is bounded
by ``max_queue``: past it, the costlier half is dropped (a long run on a big
model plans far more rewrites than it can ever pop; TASO keeps them all).

    >>> from rewrite.ir.builder import GraphBuilder
    >>> from rewrite.rulelang.syntax import parse_rules
    >>> b = GraphBuilder(); x = b.input("x", (4, 4)); g = b.build([b.relu(b.relu(b.relu(x)))])
    >>> r = backtrack(g, parse_rules("r: (relu (relu ?x)) => (relu ?x)"), max_expansions=10)
    >>> r.graph.summary(), r.stop_reason.value, r.rules_applied
    ({'relu': 1}, 'exhausted', {'r': 2})
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from costs.analytical import AnalyticalCost
from costs.model import CostModel
from rewrite.ir.errors import UsageError
from rewrite.ir.graph import Graph
from rewrite.rulelang.concrete import match_rule
from rewrite.rulelang.syntax import Rule
from rewrite.search.apply import Built, CostMemo, Expanded, Plan, materialize, plan, same_cost
from rewrite.search.hashing import graph_hash
from rewrite.search.matching import Match, Matcher, Table, prepare

TIME_CHECK_EVERY = 32  # matches planned between two looks at the clock


class SearchStop(StrEnum):
    EXHAUSTED = "exhausted"  # no queued graph left within alpha of the best
    EXPANSION_LIMIT = "expansion_limit"
    TIME_LIMIT = "time_limit"


@dataclass(frozen=True)
class SearchProgress:
    """Reported after every expansion to ``on_progress``."""

    seconds: float
    expansions: int
    best_cost: float
    queue: int  # rewrites waiting in the queue
    seen: int


@dataclass
class SearchResult:
    graph: Graph  # the cheapest graph found (the input graph if nothing was cheaper)
    original: Graph
    cost_before: float  # modelled seconds, ``costs.model.graph_cost``
    cost_after: float
    expansions: int  # graphs expanded (every match planned)
    graphs_seen: int  # rewrites planned (matches that change the graph)
    graphs_queued: int  # ... below alpha times the best cost
    graphs_pruned: int  # ... not below it
    graphs_deduplicated: int  # popped graphs dropped: the same structural hash was expanded before
    graphs_dropped: int  # queued rewrites dropped, the costliest, when the queue outgrew ``max_queue``
    stop_reason: SearchStop
    seconds: float
    trace: list[tuple[float, float]]  # (seconds since start, best cost): when the best improved
    rules_applied: dict[str, int]  # rewrites on the path from the input to the best graph, per rule direction
    path: list[str] = field(default_factory=list)  # the same, in order
    dropped_rules: list[str] = field(default_factory=list)  # directions that only swap commutative operands

    @property
    def cost(self) -> float:
        """The modelled cost of ``graph`` (``cost_after``)."""
        return self.cost_after

    def to_json(self) -> dict[str, Any]:
        return {
            "ops_before": self.original.op_count(),
            "ops_after": self.graph.op_count(),
            "cost_before": self.cost_before,
            "cost_after": self.cost_after,
            "expansions": self.expansions,
            "graphs_seen": self.graphs_seen,
            "graphs_queued": self.graphs_queued,
            "graphs_pruned": self.graphs_pruned,
            "graphs_deduplicated": self.graphs_deduplicated,
            "graphs_dropped": self.graphs_dropped,
            "stop_reason": self.stop_reason.value,
            "seconds": self.seconds,
            "trace": [list(t) for t in self.trace],
            "rules_applied": dict(self.rules_applied),
            "path": list(self.path),
        }


@dataclass
class _State:
    graph: Graph
    cost: float
    parent: _State | None = None
    rule: str = ""
    built: Built | None = None  # how it was built from its parent (for updating the parent's matches)
    ex: Expanded | None = None  # set when expanded: what its queued children are planned and built from
    table: Table | None = None  # its matches, set when expanded

    def path(self) -> list[str]:
        out, s = [], self
        while s.parent is not None:
            out.append(s.rule)
            s = s.parent
        return out[::-1]


def _check_params(alpha: float, max_expansions: int, seconds: float, multi_limit: int, max_queue: int) -> None:
    if not alpha >= 1.0:
        raise UsageError(f"alpha must be >= 1.0, got {alpha}", hint="1.0 is greedy descent; TASO uses 1.0 to 1.05")
    if max_expansions < 0:
        raise UsageError(f"max_expansions must be >= 0, got {max_expansions}")
    if not seconds > 0:
        raise UsageError(f"seconds must be > 0, got {seconds}")
    if multi_limit < 1:
        raise UsageError(f"multi_limit must be >= 1, got {multi_limit}")
    if max_queue < 2:
        raise UsageError(f"max_queue must be >= 2, got {max_queue}")


class _Search:
    """The loop's state; ``backtrack`` is its public face."""

    def __init__(self, matcher: Matcher, memo: CostMemo, alpha: float, incremental: bool, max_queue: int) -> None:
        self.matcher, self.memo, self.alpha, self.incremental = matcher, memo, alpha, incremental
        self.max_queue = max_queue
        self.queue: list[tuple[float, int, _State, Match | None]] = []
        self.ready: dict[int, _State] = {}  # queue entries already built (they became the best when planned)
        self.seq = itertools.count()
        self.seen_hashes: set[int] = set()
        self.t0 = time.perf_counter()
        self.best: _State | None = None
        self.trace: list[tuple[float, float]] = []
        self.expansions = self.seen = self.queued = self.pruned = self.dedup = self.dropped = 0

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def improve(self, state: _State) -> None:
        self.best = state
        self.trace.append((self.elapsed(), state.cost))

    def child(self, parent: _State, p: Plan) -> _State:
        assert parent.ex is not None
        built = materialize(parent.ex, p)
        cost = self.memo.graph(built.graph)
        if p.delta is not None and not same_cost(cost, parent.cost + p.delta):
            raise AssertionError(f"rule {p.rule}: planned cost {parent.cost + p.delta} != built graph's {cost}")
        return _State(built.graph, cost, parent, p.rule, built if p.delta is not None else None)

    def rebuild(self, parent: _State, m: Match) -> _State:
        """A queued rewrite, built now that it is popped."""
        assert parent.ex is not None
        d = self.matcher.directions[m.direction]
        env = match_rule(d.variants[m.variant], m.roots, parent.ex.facts)
        assert env is not None, f"{d.name} matched when queued and not when popped"
        p = plan(parent.ex, d.rule, env, m.roots, self.memo)
        assert p is not None
        return self.child(parent, p)

    def table(self, state: _State, ex: Expanded) -> Table:
        """``state``'s matches: its parent's, updated around the rewrite, or all found afresh.

        Afresh when the rewrite changed a fact that flows past the rewired nodes: weight-only
        status (a plan without a cost delta) or the weight order of a replaced root."""
        parent, built = state.parent, state.built
        if not self.incremental or parent is None or parent.table is None or parent.ex is None or built is None:
            return self.matcher.table(state.graph, ex.facts)
        before, after = parent.ex.facts.order, ex.facts.order
        if any(before.get(old) != after.get(new) for old, new in built.replaced.items()):
            return self.matcher.table(state.graph, ex.facts)
        region = self.matcher.region(ex.readers, state.graph, built.changed)
        return self.matcher.update(parent.table, state.graph, ex.facts, region)

    def expand(self, state: _State, deadline: float) -> bool:
        """Plan every match of ``state``'s graph and queue the good ones; False if the clock ran out."""
        state.ex = ex = Expanded.of(state.graph)
        state.table = self.table(state, ex)
        assert self.best is not None
        for k, (m, env) in enumerate(self.matcher.matches(state.table)):
            if k % TIME_CHECK_EVERY == TIME_CHECK_EVERY - 1 and self.elapsed() >= deadline:
                return False
            p = plan(ex, self.matcher.directions[m.direction].rule, env, m.roots, self.memo)
            if p is None:
                continue
            self.seen += 1
            ready = self.child(state, p) if p.delta is None else None
            cost = ready.cost if ready is not None else state.cost + p.delta  # type: ignore[operator]
            if cost < self.best.cost and not same_cost(cost, self.best.cost):  # not just rounding
                ready = ready or self.child(state, p)
                self.improve(ready)
            if cost < self.alpha * self.best.cost:
                seq = next(self.seq)
                if ready is not None:
                    self.ready[seq] = ready
                heapq.heappush(self.queue, (cost, seq, state, m))
                self.queued += 1
            else:
                self.pruned += 1
        return True

    def trim(self) -> None:
        """Keep the cheaper half of an overfull queue (a sorted list is a heap)."""
        if len(self.queue) <= self.max_queue:
            return
        keep = heapq.nsmallest(self.max_queue // 2, self.queue)
        self.dropped += len(self.queue) - len(keep)
        self.queue = keep
        kept = {seq for _, seq, _, _ in keep}
        self.ready = {seq: s for seq, s in self.ready.items() if seq in kept}

    def run(
        self, start: _State, max_expansions: int, seconds: float, on_progress: Callable[[SearchProgress], None] | None
    ) -> SearchStop:
        self.improve(start)
        seq = next(self.seq)
        heapq.heappush(self.queue, (start.cost, seq, start, None))
        self.ready[seq] = start
        while self.queue:
            if self.expansions >= max_expansions:
                return SearchStop.EXPANSION_LIMIT
            if self.elapsed() >= seconds:
                return SearchStop.TIME_LIMIT
            _, seq, parent, m = heapq.heappop(self.queue)
            state = self.ready.pop(seq, None) or self.rebuild(parent, m)  # type: ignore[arg-type]
            h = graph_hash(state.graph)
            if h in self.seen_hashes:
                self.dedup += 1
                continue
            self.seen_hashes.add(h)
            self.expansions += 1
            done = self.expand(state, seconds)
            self.trim()
            if on_progress is not None:
                assert self.best is not None
                on_progress(SearchProgress(self.elapsed(), self.expansions, self.best.cost, len(self.queue), self.seen))
            if not done:
                return SearchStop.TIME_LIMIT
        return SearchStop.EXHAUSTED


def backtrack(
    graph: Graph,
    rules: Sequence[Rule],
    cost_model: CostModel | None = None,
    alpha: float = 1.05,
    max_expansions: int = 500,
    seconds: float = 30.0,
    on_progress: Callable[[SearchProgress], None] | None = None,
    multi_limit: int = 256,
    incremental: bool = True,
    max_queue: int = 200_000,
) -> SearchResult:
    """Search for the cheapest graph equal to ``graph`` under ``rules`` (see the module docstring).

    ``cost_model`` defaults to ``AnalyticalCost()``; ``multi_limit`` bounds the matches of
    one multi-pattern rule direction in one graph; ``incremental=False`` matches every
    expanded graph afresh instead of updating its parent's matches (same result, slower);
    ``max_queue`` bounds the queued rewrites.  Raises ``UsageError`` for bad
    parameters and ``SearchError`` when a rule builds an ill-formed or differently
    shaped replacement (an unsound rule).
    """
    _check_params(alpha, max_expansions, seconds, multi_limit, max_queue)
    memo = CostMemo(cost_model if cost_model is not None else AnalyticalCost())
    directions, dropped = prepare(rules)
    work = graph if len(graph.live() | {n.id for n in graph.inputs}) == len(graph.nodes) else graph.pruned()
    search = _Search(Matcher(directions, multi_limit), memo, alpha, incremental, max_queue)
    start = _State(work, memo.graph(work))
    stop = search.run(start, max_expansions, seconds, on_progress)
    best = search.best or start
    out = best.graph.pruned() if best is not start else graph
    out.validate()
    path = best.path()
    return SearchResult(
        graph=out,
        original=graph,
        cost_before=memo.graph(graph),
        cost_after=memo.graph(out),
        expansions=search.expansions,
        graphs_seen=search.seen,
        graphs_queued=search.queued,
        graphs_pruned=search.pruned,
        graphs_deduplicated=search.dedup,
        graphs_dropped=search.dropped,
        stop_reason=stop,
        seconds=search.elapsed(),
        trace=search.trace,
        rules_applied=dict(Counter(path)),
        path=path,
        dropped_rules=dropped,
    )


__all__ = ["SearchProgress", "SearchResult", "SearchStop", "backtrack"]
