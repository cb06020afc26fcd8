"""Equality saturation under our own limits: egglog is the engine, we drive it.

egglog has no node or time limit, and one iteration can grow an e-graph by
orders of magnitude.  So we run one iteration per call, under egglog's
back-off scheduler with a per-rule match budget (a rule with more matches than
the budget in an iteration is skipped for that iteration), count e-nodes and
e-classes between iterations, and stop on our limits.  The budget bounds how
far one iteration can overshoot the node limit.

Rules of a family in ``BOUNDED_FAMILIES`` run only in the first iterations,
each before the other rules (a bounded schedule): the splits of
``rules/split.rules`` undo merges, so run every iteration they would re-split
everything the merges build; run first in iteration 1 they see the input graph
only.

    >>> limits = Limits(iterations=5, nodes=10_000, seconds=5)
    >>> # result = saturate(graph, rules, limits); result.stop_reason
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from egglog import bindings
from egglog.bindings import EGraph

from rewrite.egraph.encode import Encoding, encode
from rewrite.egraph.limits import Limits, StopReason
from rewrite.egraph.prelude import EGG_TO_OP, prelude
from rewrite.egraph.rules import rules_to_egglog
from rewrite.ir.errors import SaturationError
from rewrite.ir.graph import Graph
from rewrite.rulelang.syntax import Rule

# family -> the iterations its rules run in (the first N); every other family runs in every iteration
BOUNDED_FAMILIES: dict[str, int] = {"split": 1}


@dataclass
class IterationStat:
    index: int
    enodes: int
    eclasses: int
    seconds: float
    matches: dict[str, int]


@dataclass
class SaturationResult:
    egraph: EGraph
    encoding: Encoding
    stop_reason: StopReason
    iterations: list[IterationStat]
    rules_fired: Counter[str]
    seconds_load: float
    seconds_saturate: float
    enodes: int = 0
    eclasses: int = 0
    stats: dict[str, Any] = field(default_factory=dict)

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


_SIZE_LINE = re.compile(r"\(([^\s()]+)\s+(\d+)\)")


def _sizes(eg: EGraph) -> tuple[int, int]:
    """(tensor e-nodes, tensor e-classes): every tensor e-class has exactly one ``shape`` row."""
    text = str(eg.run_program(*eg.parse_program("(print-size)"))[0])
    counts = {m.group(1): int(m.group(2)) for m in _SIZE_LINE.finditer(text)}
    return sum(c for name, c in counts.items() if name in EGG_TO_OP), counts.get("shape", 0)


def _run(eg: EGraph, text: str, what: str) -> list[Any]:
    try:
        return eg.run_program(*eg.parse_program(text))
    except BaseException as e:  # egglog panics surface as EggSmolError or PanicException
        msg = str(e)
        if "Illegal merge" in msg and "shape" in msg:
            raise SaturationError(
                "two terms proved equal have different shapes: a rule is unsound (run `eqsat rules check` to find it)"
            ) from None
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise SaturationError(f"egglog rejected the {what}: {msg}") from None


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
    eg = EGraph()
    enc = encode(graph)
    _run(eg, prelude(), "prelude")
    bounded = [r for r in rules if r.family in BOUNDED_FAMILIES]
    _run(eg, rules_to_egglog([r for r in rules if r.family not in BOUNDED_FAMILIES]), "rules")
    for family in sorted({r.family for r in bounded}):
        _run(eg, f"(ruleset {_ruleset(family)})\n", "rules")
        _run(eg, rules_to_egglog([r for r in bounded if r.family == family], _ruleset(family)), "rules")
    _run(eg, enc.program, "graph encoding")
    _run(eg, "(run-schedule (saturate (run analysis)))", "shape analysis")
    enodes, eclasses = _sizes(eg)
    t_load = time.perf_counter() - t0
    budget = limits.match_limit or max(1000, 2 * enodes)
    cap = max(budget, limits.nodes)  # a budget past the node limit could not be used anyway
    names = {d.name for r in rules for d in r.directions()}
    fired: Counter[str] = Counter()
    stats: list[IterationStat] = []
    t1 = time.perf_counter()
    reason = StopReason.ITERATION_LIMIT
    if until is not None and until(eg, enc):
        return SaturationResult(
            eg, enc, StopReason.GOAL, [], Counter(), t_load, 0.0, enodes, eclasses, {"match_limit": budget}
        )
    for i in range(limits.iterations):
        if time.perf_counter() - t1 >= limits.seconds:
            reason = StopReason.TIME_LIMIT
            break
        ti = time.perf_counter()
        early = " ".join(
            f"(run-with bo {_ruleset(f)})" for f in sorted({r.family for r in bounded}) if i < BOUNDED_FAMILIES[f]
        )
        step = (
            f"(run-schedule (let-scheduler bo (back-off :match-limit {budget} :ban-length 1)) "
            f"{early} (run-with bo rewrites) (saturate (run analysis)))"
        )
        out = _run(eg, step, f"rewrite iteration {i + 1}")
        matches = {k: v for k, v in out[0].report.num_matches_per_rule.items() if k in names and v}
        fired.update(matches)
        new_nodes, new_classes = _sizes(eg)
        stat = IterationStat(i + 1, new_nodes, new_classes, time.perf_counter() - ti, matches)
        stats.append(stat)
        if on_iteration:
            on_iteration(stat)
        changed = (new_nodes, new_classes) != (enodes, eclasses)
        enodes, eclasses = new_nodes, new_classes
        if until is not None and until(eg, enc):
            reason = StopReason.GOAL
            break
        # egglog reports "updated" for an unchanged e-graph only when the back-off scheduler
        # skipped a rule over budget: then retry with a larger budget instead of stopping
        skipped = bool(out[0].report.updated)
        if not changed:
            if skipped and budget < cap:
                budget = min(cap, budget * 4)
                continue
            reason = StopReason.SATURATED
            break
        if enodes >= limits.nodes:
            reason = StopReason.NODE_LIMIT
            break
    return SaturationResult(
        eg, enc, reason, stats, fired, t_load, time.perf_counter() - t1, enodes, eclasses, {"match_limit": budget}
    )


def _ruleset(family: str) -> str:
    """The egglog ruleset of a bounded family."""
    return "bounded-" + family
