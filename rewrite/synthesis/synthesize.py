"""``synthesize``: rules found by enumeration, kept only when checked and not derivable from the others.

The stages, in order (each under a progress bar, all under one time budget):

1. **enumerate** each shape world's terms of up to ``max_ops`` ops, in parallel, one world per
   worker (:mod:`rewrite.synthesis.enumerate`); terms with one fingerprint form a group;
2. **candidates**: member => representative per group, rendered as rules; a candidate that is a
   renaming of an earlier one (another world found it too) is merged into it;
3. **tiers** by size (the two sides' ops together), smallest first; in each tier, what the rules kept
   so far derive is dropped (one e-graph per world chunk), what the checker refuses with every
   template guard is dropped (a coincidence of the instances), and the rest is kept a few at a time
   (each with its guards minimized, in parallel) until nothing in the tier is left underivable;
4. **final pass**: each kept rule, largest first, is dropped when the others derive it, so no rule in
   the result is provable from the rest (within the prover's limits).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeVar

import torch

from rewrite import progress
from rewrite.ir.errors import UsageError
from rewrite.rulelang.syntax import Rule
from rewrite.synthesis.enumerate import WorldResult, enumerate_world
from rewrite.synthesis.select import Candidate, candidate, check, derivable, minimize
from rewrite.synthesis.space import World, expand_ops, worlds_for

log = logging.getLogger(__name__)
KEEP_AT_ONCE = 6  # candidates kept before the rest of their tier is asked again what the kept rules derive
T = TypeVar("T")
R = TypeVar("R")


@dataclass
class StageStat:
    name: str
    seconds: float
    into: int
    out: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": round(self.seconds, 2), "in": self.into, "out": self.out}


@dataclass
class SynthesisResult:
    ops: list[str]
    max_ops: int
    worlds: list[World]
    rules: list[Candidate]
    stages: list[StageStat] = field(default_factory=list)
    enumerated: dict[str, int] = field(default_factory=dict)  # world -> terms evaluated
    unsound: int = 0  # candidates the checker refused with every template guard
    complete: bool = True  # False: the time budget cut enumeration or selection short
    seconds: float = 0.0

    def text(self, command: str = "") -> str:
        """The rule file: a header, then each rule under its provenance."""
        lines = [
            "# Rules synthesized by eqsat (rewrite/synthesis): graphs enumerated over the ops below, grouped by",
            "# their values on random inputs at several sizes, each candidate checked by the rule checker and",
            "# dropped when the rules above it derive it.  Provenance: the world (variables and symbolic",
            "# shapes) and the graphs that computed one function there.",
            f"# {command}" if command else f"# ops: {' '.join(self.ops)}; up to {self.max_ops} ops",
            f"# {date.today().isoformat()}: {sum(self.enumerated.values())} graphs in {len(self.worlds)} world(s), "
            f"{len(self.rules)} rules" + ("" if self.complete else " (the time budget ran out: not exhaustive)"),
            "",
        ]
        for c in self.rules:
            lines += provenance(c)
            lines.append(c.text())
            lines.append("")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "ops": self.ops,
            "max_ops": self.max_ops,
            "worlds": {w.name: w.describe() for w in self.worlds},
            "enumerated": self.enumerated,
            "rules": [{"name": c.name, "rule": c.text(), "worlds": c.found_in, "size": c.size} for c in self.rules],
            "unsound": self.unsound,
            "stages": [s.to_dict() for s in self.stages],
            "complete": self.complete,
            "seconds": round(self.seconds, 2),
        }


def provenance(c: Candidate, most: int = 6) -> list[str]:
    names = dict(c.names)
    for t in c.group:
        for v in t.vars():
            names.setdefault(v, v)
    worlds = ", ".join(c.found_in)
    shown = [t.show(names) for t in c.group[:most]]
    more = f" (+{len(c.group) - most} more)" if len(c.group) > most else ""
    return [
        f"# found in {worlds} ({c.world.describe()}): {len(c.group)} graphs computed one function{more}:",
        *(f"#   {s}" for s in shown),
    ]


# ------------------------------------------------------------------ parallel helpers


def _pool(workers: int) -> Executor | None:
    if workers <= 1:
        return None
    return ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"))


def _map(pool: Executor | None, fn: Callable[[T], R], items: Sequence[T], bar: Any = None) -> list[R]:
    if pool is None:
        out = []
        for x in items:
            out.append(fn(x))
            if bar is not None:
                bar.update(1)
        return out
    futures = [pool.submit(fn, x) for x in items]
    res = []
    for f in futures:
        res.append(f.result())
        if bar is not None:
            bar.update(1)
    return res


def _enumerate(job: tuple[World, list[str], int, float]) -> WorldResult:
    world, ops, max_ops, deadline_in = job
    torch.set_num_threads(1)  # tiny tensors: threads only hand work off (and two workers share the cores)
    return enumerate_world(world, ops, max_ops, time.perf_counter() + deadline_in)


# ------------------------------------------------------------------ the stages


def synthesize(
    ops: Sequence[str],
    max_ops: int = 3,
    worlds: Sequence[str] | None = None,
    minutes: float = 30.0,
    workers: int | None = None,
) -> SynthesisResult:
    """Rules over ``ops`` found by enumerating graphs of up to ``max_ops`` ops in each shape world.

    ``worlds``: names from :data:`rewrite.synthesis.space.WORLDS` or ``VAR=DIMS ...`` specs (None: all).
    ``minutes`` bounds the whole run (enumeration gets at most 40% of it); ``workers`` processes
    (None: the machine's cores).  Raises ``UsageError`` for an unknown op or world or bad limits.
    """
    if not isinstance(max_ops, int) or isinstance(max_ops, bool) or not 1 <= max_ops <= 4:
        raise UsageError(f"max_ops must be 1 to 4, got {max_ops!r}")
    if not isinstance(minutes, (int, float)) or minutes <= 0:
        raise UsageError(f"minutes must be > 0, got {minutes!r}")
    op_list = expand_ops(ops)
    world_list = worlds_for(worlds)
    n = workers if workers is not None else (os.cpu_count() or 1)
    if n < 1:
        raise UsageError(f"workers must be >= 1, got {n}")
    t0 = time.perf_counter()
    deadline = t0 + 60.0 * minutes
    res = SynthesisResult(op_list, max_ops, world_list, [])
    pool = _pool(min(n, len(world_list)) if n > 1 else 1)
    try:
        found = _stage_enumerate(res, pool, op_list, max_ops, 0.4 * 60.0 * minutes)
        cands = _stage_candidates(res, found)
        kept = _stage_select(res, pool, cands, deadline)
        res.rules = _stage_final(res, kept)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    _name(res.rules)
    res.seconds = time.perf_counter() - t0
    return res


def _stage_enumerate(
    res: SynthesisResult, pool: Executor | None, ops: list[str], max_ops: int, seconds: float
) -> list[WorldResult]:
    t = time.perf_counter()
    jobs = [(w, ops, max_ops, seconds) for w in res.worlds]
    with progress.bar("enumerate", total=len(jobs), unit="world") as bar:
        found = _map(pool, _enumerate, jobs, bar)
    for r in found:
        res.enumerated[r.world.name] = r.terms
        res.complete &= r.complete
    groups = sum(len(r.groups) for r in found)
    res.stages.append(StageStat("enumerate", time.perf_counter() - t, len(jobs), groups))
    return found


def _stage_candidates(res: SynthesisResult, found: Iterable[WorldResult]) -> list[Candidate]:
    t = time.perf_counter()
    seen: dict[str, Candidate] = {}
    raw = 0
    for r in found:
        for g in r.groups:
            rep = g[0]
            for m in g[1:]:
                raw += 1
                c = candidate(r.world, r.instances[0], r.params[0], m, rep, g)
                if c is None:
                    continue
                old = seen.get(c.key)
                if old is None:
                    c.found_in = [r.world.name]
                    seen[c.key] = c
                elif r.world.name not in old.found_in:
                    old.found_in.append(r.world.name)
    cands = sorted(seen.values(), key=lambda c: (c.size, max(c.lhs.size, c.rhs.size), len(c.body), c.body))
    res.stages.append(StageStat("candidates", time.perf_counter() - t, raw, len(cands)))
    return cands


def _rules(kept: Sequence[Candidate]) -> list[Rule]:
    return [c.rule() for c in kept]


def _stage_select(
    res: SynthesisResult, pool: Executor | None, cands: list[Candidate], deadline: float
) -> list[Candidate]:
    t = time.perf_counter()
    kept: list[Candidate] = []
    tiers: dict[int, list[Candidate]] = {}
    for c in cands:
        tiers.setdefault(c.size, []).append(c)
    with progress.bar("select", total=len(cands), unit="rule") as bar:
        for size in sorted(tiers):
            tier = tiers[size]
            if time.perf_counter() > deadline:
                res.complete = False
                break
            t1 = time.perf_counter()
            alive = _underived(tier, kept, bar)
            t2 = time.perf_counter()
            verdicts = _map(pool, check, alive)
            sound = [c for c, (ok, _) in zip(alive, verdicts) if ok]
            log.info(
                "tier %d: %d candidates, %d not derived (%.1fs), %d sound (%.1fs)",
                size,
                len(tier),
                len(alive),
                t2 - t1,
                len(sound),
                time.perf_counter() - t2,
            )
            before = len(kept)
            res.unsound += len(alive) - len(sound)
            bar.update(len(alive) - len(sound))
            while sound:
                if time.perf_counter() > deadline:
                    res.complete = False
                    break
                batch, sound = sound[:KEEP_AT_ONCE], sound[KEEP_AT_ONCE:]
                for c, g in zip(batch, _map(pool, minimize, batch)):
                    c.guards = g
                    c.name = f"kept-{len(kept) + batch.index(c)}"  # unique while selecting; final names in _name
                kept += batch
                bar.update(len(batch))
                sound = _underived(sound, kept, bar)
            log.info("tier %d: kept %d (%.1fs)", size, len(kept) - before, time.perf_counter() - t1)
    res.stages.append(StageStat("select", time.perf_counter() - t, len(cands), len(kept)))
    return kept


def _underived(cands: list[Candidate], kept: Sequence[Candidate], bar: Any) -> list[Candidate]:
    if not cands or not kept:
        return cands
    done = derivable(cands, _rules(kept))
    bar.update(sum(done))
    return [c for c, d in zip(cands, done) if not d]


def _stage_final(res: SynthesisResult, kept: list[Candidate]) -> list[Candidate]:
    t = time.perf_counter()
    out = list(kept)
    with progress.bar("final pass", total=len(kept), unit="rule") as bar:
        for c in sorted(kept, key=lambda c: (-c.size, c.body)):
            others = [k for k in out if k is not c]
            if others and derivable([c], _rules(others))[0]:
                out.remove(c)
            bar.update(1)
    res.stages.append(StageStat("final", time.perf_counter() - t, len(kept), len(out)))
    return out


def _name(rules: Sequence[Candidate]) -> None:
    counts: dict[str, int] = {}
    for c in rules:
        ops = "-".join(sorted(c.lhs.ops() | c.rhs.ops())) or "id"
        counts[ops] = counts.get(ops, 0) + 1
        c.name = f"syn-{ops}-{counts[ops]}"
