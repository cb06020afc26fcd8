"""Equality saturation under our own limits: egglog is the engine, we drive it.

egglog has no node or time limit, and one iteration can grow an e-graph by
orders of magnitude.  So we run one iteration per call, under egglog's
back-off scheduler with a per-rule match budget (a rule with more matches than
the budget in an iteration is skipped for that iteration), count e-nodes and
e-classes between iterations, and stop on our limits.  The budget bounds how
far one iteration can overshoot the node limit.

Rules of a family in ``BOUNDED_FAMILIES`` run only in the first iterations, each before the other
rules (a bounded schedule): the splits of ``rules/split.rules`` undo merges, so run every iteration
they would re-split everything the merges build; run first in iteration 1 they see the input graph only.

Rules of a family in ``LATE_FAMILIES`` run only after the others have stopped (saturated, or at the
iteration or time limit), alone, for a few iterations of their own: the blocked layout
(``rules/blocked.rules``) is a choice over the algebraically rewritten graph; run beside the
associativity and commutativity rules, its moves of adds and concats into the blocked region multiplied
with theirs (NASNet-A: 174k e-nodes at the node limit, the extraction's time limit hit, nothing rewritten).

    >>> limits = Limits(iterations=5, nodes=10_000, seconds=5)
    >>> # result = saturate(graph, rules, limits); result.stop_reason
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rewrite.egraph import bindings
from rewrite.egraph.bindings import EGraph
from rewrite.egraph.encode import Encoding, encode
from rewrite.egraph.engine import StepReport, read_step, report_seconds, run, tensor_sizes
from rewrite.egraph.limits import Limits, StopReason
from rewrite.egraph.prelude import prelude
from rewrite.egraph.reach import graph_ops, reachable
from rewrite.egraph.rules import rules_to_egglog
from rewrite.ir.errors import SaturationError
from rewrite.ir.graph import Graph
from rewrite.rulelang.syntax import Rule

__all__ = ["IterationStat", "Limits", "SaturationError", "SaturationResult", "StopReason", "saturate"]

# family -> the iterations its rules run in (the first N); every other family runs in every iteration
BOUNDED_FAMILIES: dict[str, int] = {"split": 1}
# family -> the iterations its rules run in after the other rules stop (they alone then): a blocked region
# needs one to block the convolutions, then one per op between two of them (ReLU, add, concat, pool) and
# one to cancel the round trip
LATE_FAMILIES: dict[str, int] = {"blocked": 6, "blocked-dense": 6}
_STAGED = {**BOUNDED_FAMILIES, **LATE_FAMILIES}

BUDGET_GROWTH = 4  # an unchanged e-graph with rules held back over budget: retry with this many times the budget


@dataclass(frozen=True)
class IterationStat:
    """One iteration: the e-graph's size after it, its wall time, and egglog's report of it.

    ``matches``: per rule, matches found; ``applied``: matches the back-off scheduler admitted and egglog
    instantiated (what ``rules_fired`` sums); ``rule_seconds``: per rule, search plus apply time;
    ``search_seconds``/``apply_seconds``/``rebuild_seconds``: the rewrite step's phases (egg's
    ``Iteration``); ``analysis_seconds``: re-running the shape analysis after it.  egglog's times have
    millisecond resolution.
    """

    index: int
    enodes: int
    eclasses: int
    seconds: float
    matches: dict[str, int]
    applied: dict[str, int] = field(default_factory=dict)
    rule_seconds: dict[str, float] = field(default_factory=dict)
    search_seconds: float = 0.0
    apply_seconds: float = 0.0
    rebuild_seconds: float = 0.0
    analysis_seconds: float = 0.0


@dataclass
class SaturationResult:
    egraph: EGraph
    encoding: Encoding
    stop_reason: StopReason
    iterations: list[IterationStat]
    rules_fired: Counter[str]  # per rule, matches applied over all iterations
    seconds_load: float
    seconds_saturate: float
    enodes: int = 0
    eclasses: int = 0
    match_limit: int = 0  # the per-rule match budget in force at the end (it grows when rules are held back)
    rules_loaded: int = 0  # the rules that can match the graph, loaded (``reach``)
    rules_given: int = 0
    ops_declared: int = 0  # the ops the graph can reach, declared in the prelude

    def serialized(self) -> dict[str, Any]:
        """The e-graph as JSON: ``nodes``, ``class_data`` and ``root_eclasses``, one per graph output, in order.

        egglog resolves the outputs' lets to their e-classes itself: once rewrites merge an output with
        another node (``relu(relu(x))``, a reshape to the same shape, two equal outputs), several lets name
        one e-class, and no let-to-class table read from ``class_data`` can be trusted to be one-to-one.
        """
        roots: list[bindings.Lit | bindings.Var | bindings.Call] = [
            bindings.Var(bindings.PanicSpan(), let) for let in self.encoding.roots
        ]
        data = json.loads(self.egraph.serialize(roots).to_json())
        if len(data.get("root_eclasses", [])) != len(roots):
            raise SaturationError(
                f"egglog returned {len(data.get('root_eclasses', []))} root e-classes for {len(roots)} outputs"
            )
        return data


def _load(graph: Graph, rules: list[Rule]) -> tuple[EGraph, Encoding, list[Rule], int]:
    """A fresh e-graph holding the prelude, the rules and ``graph``, with its shape facts derived; the
    rules loaded and the number of ops declared.

    Only the ops the graph can reach and the rules that can match it are loaded (``reach``): the others could
    never fire, and each declaration and rule costs load time and a share of every iteration's matching."""
    eg = EGraph()
    enc = encode(graph)
    ops, rules = reachable(graph_ops(graph), rules)
    run(eg, prelude(ops), "prelude", static=True)
    run(eg, rules_to_egglog([r for r in rules if r.family not in _STAGED]), "rules", static=True)
    for family in sorted({r.family for r in rules if r.family in _STAGED}):
        run(eg, f"(ruleset {_ruleset(family)})\n", "rules")
        run(eg, rules_to_egglog([r for r in rules if r.family == family], _ruleset(family)), "rules", static=True)
    run(eg, enc.program, "graph encoding")
    run(eg, "(run-schedule (saturate (run analysis)))", "shape analysis")
    return eg, enc, rules, len(ops)


def _ruleset(family: str) -> str:
    """The egglog ruleset of a bounded or late family."""
    return "staged-" + family


def _step(
    eg: EGraph, index: int, budget: int, names: set[str], early: list[str], main: bool = True
) -> tuple[IterationStat, bool]:
    """One rewrite step under a fresh back-off scheduler, then the shape analysis to a fixed point.

    ``early``: the bounded (or late) families running in this iteration; their rulesets run first, then
    the other rules unless ``main`` is off.

    Returns the iteration's figures and egglog's "updated" flag for the two commands together.
    """
    t = time.perf_counter()
    rest = "(run-with bo rewrites)" if main else ""
    out = run(
        eg,
        f"(run-schedule (let-scheduler bo (back-off :match-limit {budget} :ban-length 1)) "
        f"{''.join(f'(run-with bo {_ruleset(f)}) ' for f in early)}{rest})\n"
        "(run-schedule (saturate (run analysis)))",
        f"rewrite iteration {index}",
    )
    step: StepReport = read_step(out[0].report, names)
    enodes, eclasses = tensor_sizes(eg)
    stat = IterationStat(
        index,
        enodes,
        eclasses,
        time.perf_counter() - t,
        matches=step.matches,
        applied=step.applied,
        rule_seconds=step.rule_seconds,
        search_seconds=step.search_seconds,
        apply_seconds=step.apply_seconds,
        rebuild_seconds=step.rebuild_seconds,
        analysis_seconds=report_seconds(out[1].report),
    )
    return stat, step.updated or bool(out[1].report.updated)


@dataclass
class _Progress:
    """What the iteration loop carries from one iteration to the next."""

    enodes: int
    eclasses: int
    budget: int  # matches per rule per iteration
    cap: int  # the budget never grows past this: a budget past the node limit could not be used anyway
    iterations: list[IterationStat] = field(default_factory=list)
    fired: Counter[str] = field(default_factory=Counter)
    bounded: set[str] = field(default_factory=set)  # the bounded families among the rules
    late: set[str] = field(default_factory=set)  # the late families among the rules

    def record(self, stat: IterationStat) -> bool:
        """Take in one iteration; whether it changed the e-graph's size."""
        self.iterations.append(stat)
        self.fired.update(stat.applied)
        changed = (stat.enodes, stat.eclasses) != (self.enodes, self.eclasses)
        self.enodes, self.eclasses = stat.enodes, stat.eclasses
        return changed


def _iterate(
    eg: EGraph,
    enc: Encoding,
    state: _Progress,
    names: set[str],
    limits: Limits,
    on_iteration: Callable[[IterationStat], None] | None,
    until: Callable[[EGraph, Encoding], bool] | None,
) -> StopReason:
    """Run iterations until a limit, the caller's goal, or saturation, then the late families' own
    iterations (unless the node limit or the goal stopped the first); says why the rewriting stopped."""
    reason = _phase(eg, enc, state, names, limits, on_iteration, until, late=False)
    if not state.late or reason in (StopReason.NODE_LIMIT, StopReason.GOAL):
        return reason
    after = _phase(eg, enc, state, names, limits, on_iteration, until, late=True)
    return after if after in (StopReason.NODE_LIMIT, StopReason.GOAL) else reason


def _next_iteration_estimate(state: _Progress, first: int) -> float:
    """Seconds the next iteration should take: the last one's, scaled by how much it grew the e-graph (an
    iteration's matching grows with the e-graph).  egglog cannot be stopped inside an iteration, so the time
    limit stops before an iteration that would end past it, not after (a 20 s limit once ran 40 s)."""
    if len(state.iterations) <= first:
        return 0.0
    last = state.iterations[-1]
    before = state.iterations[-2].enodes if len(state.iterations) > first + 1 else last.enodes
    return last.seconds * max(1.0, last.enodes / max(before, 1))


def _phase(
    eg: EGraph,
    enc: Encoding,
    state: _Progress,
    names: set[str],
    limits: Limits,
    on_iteration: Callable[[IterationStat], None] | None,
    until: Callable[[EGraph, Encoding], bool] | None,
    late: bool,
) -> StopReason:
    """The iterations of every family but the late ones (with the bounded ones first while they run), or
    (``late``) the late families' alone, each for its own count."""
    t0 = time.perf_counter()
    first = len(state.iterations)
    count = max(LATE_FAMILIES[f] for f in state.late) if late else limits.iterations
    for i in range(count):
        if not late and time.perf_counter() - t0 + _next_iteration_estimate(state, first) >= limits.seconds:
            return StopReason.TIME_LIMIT
        staged = LATE_FAMILIES if late else BOUNDED_FAMILIES
        early = [f for f in sorted(state.late if late else state.bounded) if i < staged[f]]
        stat, updated = _step(eg, first + i + 1, state.budget, names, early, main=not late)
        changed = state.record(stat)
        if on_iteration:
            on_iteration(stat)
        if until is not None and until(eg, enc):
            return StopReason.GOAL
        # egglog reports "updated" for an unchanged e-graph only when the back-off scheduler
        # skipped a rule over budget: then retry with a larger budget instead of stopping
        if not changed:
            if updated and state.budget < state.cap:
                state.budget = min(state.cap, state.budget * BUDGET_GROWTH)
                continue
            return StopReason.SATURATED
        if state.enodes >= limits.nodes:
            return StopReason.NODE_LIMIT
    return StopReason.ITERATION_LIMIT


def saturate(
    graph: Graph,
    rules: list[Rule],
    limits: Limits = Limits(),
    on_iteration: Callable[[IterationStat], None] | None = None,
    until: Callable[[EGraph, Encoding], bool] | None = None,
) -> SaturationResult:
    """Load ``graph``, run ``rules`` one iteration at a time until a limit or saturation.

    ``until(egraph, encoding)`` is asked after loading and after every iteration;
    when it holds, saturation stops with ``StopReason.GOAL``.
    """
    limits.check()
    t0 = time.perf_counter()
    given = len(rules)
    eg, enc, rules, declared = _load(graph, rules)
    enodes, eclasses = tensor_sizes(eg)
    t_load = time.perf_counter() - t0
    budget = limits.match_limit or max(1000, 2 * enodes)
    bounded = {r.family for r in rules if r.family in BOUNDED_FAMILIES}
    late = {r.family for r in rules if r.family in LATE_FAMILIES}
    state = _Progress(enodes, eclasses, budget, cap=max(budget, limits.nodes), bounded=bounded, late=late)
    names = {d.name for r in rules for d in r.directions()}
    t1 = time.perf_counter()
    if until is not None and until(eg, enc):
        return SaturationResult(
            eg, enc, StopReason.GOAL, [], Counter(), t_load, 0.0, enodes, eclasses, budget, len(rules), given, declared
        )
    reason = _iterate(eg, enc, state, names, limits, on_iteration, until)
    return SaturationResult(
        eg,
        enc,
        reason,
        state.iterations,
        state.fired,
        t_load,
        time.perf_counter() - t1,
        state.enodes,
        state.eclasses,
        state.budget,
        len(rules),
        given,
        declared,
    )
