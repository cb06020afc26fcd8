"""Talking to egglog: running commands, turning its errors into ours, reading its typed reports.

egglog 13.2's bindings answer ``(print-size)`` with a ``PrintAllFunctionsSize`` (``sizes``: function
name -> rows) and a ``run-schedule`` with a ``RunScheduleOutput`` whose ``RunReport`` has, per
pass over a ruleset, an ``IterationReport``: per-rule ``RuleReport``s (matches, search-and-apply
time), the pass's merge time and its rebuild time.  A step under a scheduler (``run-with``) is two
passes: the *query* pass finds every match; the scheduler admits the matches of each rule whose
count is within its budget; the *action* pass instantiates the admitted ones.  The report's
``num_matches_per_rule`` counts the action pass only ("query matches don't count", egglog's
``step_rules_with_scheduler``).  egglog reports no count of unions that merged two distinct
e-classes, so an applied match whose union was already true still counts as applied.

    >>> egglog_seconds(timedelta(microseconds=250))  # egglog's 250 "microseconds" are 250 ms
    0.25
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from rewrite.egraph.bindings import EggSmolError, EGraph, IterationReport, PrintAllFunctionsSize, RunReport
from rewrite.egraph.prelude import EGG_TO_OP
from rewrite.ir.errors import SaturationError

UNSOUND = "two terms proved equal have different shapes: a rule is unsound (run `eqsat rules check` to find it)"


def _rejected(message: str, what: str) -> SaturationError:
    if "Illegal merge" in message and "shape" in message:  # two values for one e-class's shape function
        return SaturationError(UNSOUND)
    return SaturationError(f"egglog rejected the {what}: {message}")


# egglog's parser gives every term a span holding its source text, and egglog-python 13.2 copies that text
# into every span it hands to Python, then into a fresh Rust string per span when the commands run: the
# prelude's 128 KB parsed as one text took a process from 300 MB to 2.5 GB to parse and 4.7 GB to run (8 s).
# Parsed a few commands at a time, each span holds a chunk of at most this many characters: 50 MB, 0.3 s.
CHUNK_CHARS = 1024


def forms(text: str) -> list[str]:
    r"""The top-level forms of egglog ``text``, in order (strings and ``;`` comments respected).

    >>> forms('(let $a (Relu x)) ; note (\n(set (f "a)") 1)')
    ['(let $a (Relu x))', '(set (f "a)") 1)']
    """
    out: list[str] = []
    depth, start, i, n = 0, 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == ";":
            while i < n and text[i] != "\n":
                i += 1
        elif ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                out.append(text[start : i + 1])
        i += 1
    if depth != 0:
        raise SaturationError(f"unbalanced parentheses in egglog text starting {text[start : start + 80]!r}")
    return out


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """``text``'s forms joined into pieces of about ``size`` characters (a longer form stands alone)."""
    out: list[str] = []
    cur: list[str] = []
    length = 0
    for f in forms(text):
        if cur and length + len(f) > size:
            out.append("\n".join(cur))
            cur, length = [], 0
        cur.append(f)
        length += len(f) + 1
    if cur:
        out.append("\n".join(cur))
    return out


def parse(eg: EGraph, text: str) -> list[Any]:
    """egglog's commands for ``text``, parsed a chunk at a time (see ``CHUNK_CHARS``)."""
    return [c for piece in chunks(text) for c in eg.parse_program(piece)]


def run(eg: EGraph, text: str, what: str, *, static: bool = False) -> list[Any]:
    """Parse and run egglog ``text``; egglog's errors become ``SaturationError`` naming ``what``.

    ``static``: a text many e-graphs load unchanged (the prelude, a rule set), parsed once per process.

    egglog 13.2 reports every failure of a program, its own "panics" included (a conflicting
    ``:no-merge`` value, a failing primitive on a right-hand side), as ``EggSmolError``; only that is
    translated.  Anything else (``KeyboardInterrupt``, ``MemoryError``, a Rust panic inside the
    bindings, which is a bug in egglog) passes through with its traceback.
    """
    try:
        return eg.run_program(*(_parsed(text) if static else parse(eg, text)))
    except EggSmolError as e:
        raise _rejected(str(e), what) from None


@functools.lru_cache(maxsize=16)
def _parsed(text: str) -> tuple[Any, ...]:
    """egglog's commands for ``text``, parsed once: they serve every e-graph."""
    return tuple(parse(EGraph(), text))


def tensor_sizes(eg: EGraph) -> tuple[int, int]:
    """(tensor e-nodes, tensor e-classes) from egglog's size report: every tensor e-class has one ``shape`` row."""
    out = run(eg, "(print-size)", "size query")
    if len(out) != 1 or not isinstance(out[0], PrintAllFunctionsSize):
        raise SaturationError(f"egglog answered (print-size) with {out!r}, not a size report")
    counts = dict(out[0].sizes)
    return sum(c for name, c in counts.items() if name in EGG_TO_OP), counts.get("shape", 0)


def egglog_seconds(d: timedelta) -> float:
    """Seconds of an egglog report time.

    egglog-python 13.2 builds its timedeltas with the duration's whole milliseconds passed as
    microseconds (``PyDelta::new(py, 0, 0, d.as_millis(), true)`` in ``src/conversions.rs``), so every
    report time reads 1000x too small and has millisecond resolution; this undoes the scaling.
    """
    return (d // timedelta(microseconds=1)) / 1000.0


@dataclass(frozen=True)
class StepReport:
    """One rewrite step (one scheduled pass over the rules) as egglog reported it.

    ``matches``: per rule, matches the query pass found; ``applied``: matches the back-off scheduler
    admitted and the action pass instantiated (a rule over its match budget is skipped for the step);
    ``rule_seconds``: per rule, search plus apply time.  Rules with no matches are left out.
    """

    matches: dict[str, int]
    applied: dict[str, int]
    rule_seconds: dict[str, float]
    search_seconds: float
    apply_seconds: float
    rebuild_seconds: float
    updated: bool  # egglog's own "something changed, or a rule was held back": see ``saturate``


def _rule_figures(passes: list[IterationReport], names: set[str], of: str) -> dict[str, float]:
    """Per rule in ``names``: the sum of ``of`` (``num_matches`` or search-and-apply seconds) over ``passes``."""
    out: dict[str, float] = {}
    for it in passes:
        for k, rs in it.rule_set_report.rule_reports.items():
            if k in names:
                v = sum(r.num_matches if of == "matches" else egglog_seconds(r.search_and_apply_time) for r in rs)
                out[k] = out.get(k, 0) + v
    return out


def read_step(report: RunReport, names: set[str]) -> StepReport:
    """The figures of one step's report (one or more ``run-with``), for the rules named in ``names``."""
    passes = list(report.iterations)
    query, actions = passes[0::2], passes[1::2]  # egglog 13.2: a query pass then an action pass per run-with
    matches = {k: int(v) for k, v in _rule_figures(query, names, "matches").items() if v}
    applied = {k: v for k, v in report.num_matches_per_rule.items() if k in names and v}
    seconds = _rule_figures(passes, set(matches) | set(applied), "seconds")
    sets = [it.rule_set_report for it in passes]
    return StepReport(
        matches=matches,
        applied=applied,
        rule_seconds=seconds,
        search_seconds=sum(egglog_seconds(it.rule_set_report.search_and_apply_time) for it in query),
        apply_seconds=sum(egglog_seconds(it.rule_set_report.search_and_apply_time) for it in actions)
        + sum(egglog_seconds(r.merge_time) for r in sets),
        rebuild_seconds=sum(egglog_seconds(it.rebuild_time) for it in passes),
        updated=bool(report.updated),
    )


def report_seconds(report: RunReport) -> float:
    """All the time a report accounts for: search and apply, merge and rebuild, over every ruleset."""
    per = (report.search_and_apply_time_per_ruleset, report.merge_time_per_ruleset, report.rebuild_time_per_ruleset)
    return sum(egglog_seconds(t) for times in per for t in times.values())
