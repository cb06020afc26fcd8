"""The tuner: per kernel, candidates drawn from its recipe's space, ranked by the learned model, measured.

``tune(tasks, options, runner)`` spends ``options.trials`` measured candidates (and at most
``options.minutes``) over a graph's distinct kernels (``space.tasks_of``):

1. **Which kernel next**: every kernel gets a first batch; after that the one with the largest
   ``default time x uses / sqrt(1 + candidates measured)``, so a kernel that takes a model's time gets most
   trials and none is starved.  A kernel whose space is used up (a ReLU has a handful of candidates) drops out.
2. **Which candidates** (Ansor's loop): a pool of random draws from the space and mutations of the kernel's
   best measured ones (one decision changed), minus every candidate measured before, in this run or an
   earlier one (the trial log); ranked by the cost model (``model.CostModel``, LightGBM over loop-IR
   features, trained on every measurement so far, earlier runs' included) once it has enough rows, with
   ``EXPLORE`` of each batch drawn at random; at random until then.
3. **Measured in batches** by the runner (this process, or a Ray cluster's nodes, as many batches in flight
   as it has workers), each beside the kernel's default schedule, so a candidate's time is a ratio to the
   default measured in the same batch on the same machine (``harness.measure``: wrong candidates dropped).
4. **Kept only when confirmed**: each kernel's best candidate is measured ``CONFIRMS`` more times against the
   default; a record (``records.Record``) is written only when it is at least ``min_speedup`` faster in each,
   so a candidate that was lucky once does not become the schedule ``compile`` uses.

Trials measured before count toward the budget: a second run with the same budget measures nothing known.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lower.schedule import ScheduleError
from lower.tune.features import features
from lower.tune.model import CostModel
from lower.tune.records import Record, RecordStore, Trial, TrialLog
from lower.tune.records import store as record_store
from lower.tune.records import trial_log as default_trial_log
from lower.tune.runners import Batch, LocalRunner, RayRunner
from lower.tune.space import Decisions, TuneTask, decisions_id, mutate

EXPLORE = 0.25  # of each ranked batch drawn at random from the pool (the model is not trusted alone)
MUTANTS = 6  # mutations of each of the TOP best candidates per pool
TOP = 4
CONFIRMS = 2  # measurements, after the search, that must each find the best candidate min_speedup faster


@dataclass
class TuneOptions:
    trials: int = 1000  # candidates measured over all kernels, earlier runs' included
    minutes: float | None = None  # and no longer than this (the batches in flight finish)
    batch: int = 8  # candidates per measured batch
    pool: int = 32  # candidates drawn per batch to rank
    min_speedup: float = 1.03  # a tuned schedule is kept when confirmed this much faster than the default
    seed: int = 0


@dataclass
class KernelResult:
    kernel: str
    key: str
    uses: int
    where: list[str]
    default_seconds: float | None = None
    tuned_seconds: float | None = None  # the confirmed time of the kept schedule (None: the default stays)
    decisions: dict[str, Any] = field(default_factory=dict)
    default_decisions: dict[str, Any] = field(default_factory=dict)  # the recipe's own, for this kernel
    trials: int = 0  # measured this run
    known: int = 0  # measured by earlier runs
    wrong: int = 0  # candidates whose output differed from the default's (dropped)
    # "tuned", "default" (nothing confirmed faster), "known" (an earlier run's record), "failed", "reverted" (the
    # whole model ran slower with it: ``eqsat tune``'s model check)
    status: str = "default"
    error: str = ""

    @property
    def speedup(self) -> float:
        if self.default_seconds and self.tuned_seconds:
            return self.default_seconds / self.tuned_seconds
        return 1.0

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "speedup": self.speedup}


@dataclass
class TuneReport:
    kernels: list[KernelResult]
    trials: int  # measured this run
    known: int  # measured before
    seconds: float
    runner: str
    machines: list[str]
    retried: int = 0  # batches measured again after their worker was lost
    stop: str = "budget"  # "budget", "time", "exhausted" (every space used up)

    def to_json(self) -> dict[str, Any]:
        return {
            **{k: v for k, v in self.__dict__.items() if k != "kernels"},
            "kernels": [k.to_json() for k in self.kernels],
        }

    def table(self) -> str:
        """Per kernel: uses, default and tuned time, speedup, trials; then the totals."""
        rows = [f"{'kernel':<22} {'uses':>4} {'default us':>11} {'tuned us':>10} {'speedup':>8} {'trials':>7}  status"]
        for k in sorted(self.kernels, key=lambda r: -(r.default_seconds or 0) * r.uses):
            d = f"{k.default_seconds * 1e6:.1f}" if k.default_seconds else "-"
            t = f"{k.tuned_seconds * 1e6:.1f}" if k.tuned_seconds else "-"
            rows.append(
                f"{k.kernel:<22} {k.uses:>4} {d:>11} {t:>10} {k.speedup:>7.2f}x {k.trials + k.known:>7}  {k.status}"
                + (f" ({k.error})" if k.error else "")
            )
        tot_d = sum((k.default_seconds or 0) * k.uses for k in self.kernels)
        tot_t = sum((k.tuned_seconds or k.default_seconds or 0) * k.uses for k in self.kernels)
        gain = tot_d / tot_t if tot_t else 1.0
        rows.append(
            f"kernel time {tot_d * 1e3:.3f} ms -> {tot_t * 1e3:.3f} ms ({gain:.3f}x); "
            f"{self.trials} candidates measured this run ({self.known} before) in {self.seconds:.1f} s "
            f"on {self.runner} "
            f"({len(self.machines)} machine(s){f', {self.retried} batch(es) retried' if self.retried else ''}); "
            f"stopped: {self.stop}"
        )
        return "\n".join(rows)


class _State:
    """One kernel's search."""

    def __init__(self, task: TuneTask, history: list[Trial]) -> None:
        self.task = task
        self.result = KernelResult(task.name, task.key, task.uses, task.where, known=len(history))
        self.ratios: dict[str, float] = {}  # candidate id -> its best ratio to the default
        self.decisions: dict[str, Decisions] = {}
        for t in history:
            i = decisions_id(t.decisions)
            self.ratios[i] = min(t.ratio, self.ratios.get(i, math.inf))
            self.decisions[i] = t.decisions
        self.inflight: set[str] = set()
        self.exhausted = False
        self.feats: dict[str, list[float]] = {}
        self.default_id = ""
        self.default_feats: list[float] = []
        self.sent = 0  # batches sent
        self.failed = False
        self.confirmed: list[tuple[float, float]] = []  # (candidate, default) seconds of each confirmation

    def priority(self) -> float:
        if self.sent == 0 and not self.ratios:
            return math.inf
        w = (self.result.default_seconds or 1e-3) * self.task.uses
        return w / math.sqrt(1 + len(self.ratios) + len(self.inflight))

    def best(self) -> tuple[str, float] | None:
        good = [(r, i) for i, r in self.ratios.items() if i != self.default_id]
        return min(good)[::-1] if good else None


def _draw(st: _State, rng: random.Random, n: int) -> list[tuple[str, Decisions, list[float]]]:
    """Up to ``n`` candidates of ``st``'s kernel not measured or in flight: random draws and mutations of its
    best measured ones, each scheduled (checked) and featurized."""
    seen = set(st.ratios) | st.inflight
    out: dict[str, tuple[Decisions, list[float]]] = {}

    def take(fixed: Decisions | None) -> None:
        try:
            s = st.task.schedule(fixed=fixed, rng=None if fixed is not None else rng)
        except ScheduleError:
            return
        i = decisions_id(s.decisions)
        if i in seen or i in out:
            return
        out[i] = (dict(s.decisions), features(st.task, s))

    best = sorted((r, i) for i, r in st.ratios.items())[:TOP]
    space = st.task.schedule().space
    for _, i in best:
        for _ in range(MUTANTS):
            m = mutate(st.task, st.decisions[i], rng, space)
            if m is not None:
                take(m)
    tries = 0
    while len(out) < n and tries < 2 * n:
        take(None)
        tries += 1
    return [(i, d, f) for i, (d, f) in out.items()]


def tune(
    tasks: Sequence[TuneTask],
    options: TuneOptions | None = None,
    runner: LocalRunner | RayRunner | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    records: RecordStore | None = None,
    trials: TrialLog | None = None,
) -> TuneReport:
    """Tune ``tasks`` (see the module docstring); ``progress(done, total, what)`` after each batch."""
    opts = options or TuneOptions()
    runner = runner or LocalRunner()
    records = records if records is not None else record_store()
    trials = trials if trials is not None else default_trial_log()
    rng = random.Random(opts.seed)
    t0 = time.perf_counter()
    deadline = t0 + 60 * opts.minutes if opts.minutes else math.inf
    states = {t.key: _State(t, trials.of(t.key)) for t in tasks}
    model = CostModel()
    for t in tasks:
        for tr in trials.of(t.key):
            model.add(tr.features, tr.ratio)
    model.fit()
    known = sum(len(st.ratios) for st in states.values())
    budget = max(0, opts.trials - known)
    measured = 0
    stop = "budget"
    batch_id = 0

    def send(st: _State, cands: list[tuple[str, Decisions, list[float]]], confirm: bool = False) -> None:
        nonlocal batch_id
        for i, d, f in cands:
            st.inflight.add(i)
            st.feats[i] = f
            st.decisions[i] = d
        batch_id += 1
        b = Batch(batch_id, st.task, [d for _, d, _ in cands], confirm=confirm)
        st.sent += 1
        runner.submit(b, want_features=False)

    def receive(b: Batch) -> None:
        nonlocal measured
        st = states[b.task.key]
        ids = [decisions_id(d) for d in b.candidates]
        st.inflight.difference_update(ids)
        if b.error or b.default is None or not b.default.seconds:
            st.failed, st.exhausted = True, True
            st.result.status, st.result.error = "failed", b.error or (b.default.error if b.default else "")
            return
        dflt = b.default.seconds
        if b.confirm:
            r = b.results[0]
            if not (r.seconds and dflt / r.seconds >= opts.min_speedup):
                st.result.default_seconds = dflt
                return
            st.confirmed.append((r.seconds, dflt))
            if len(st.confirmed) < CONFIRMS:  # once more: a candidate lucky twice in a row is rarer
                send(st, [(decisions_id(r.decisions), r.decisions, [])], confirm=True)
                return
            tuned, dflt = (sum(x) / len(x) for x in zip(*st.confirmed))
            if tuned:
                st.result.tuned_seconds, st.result.default_seconds = tuned, dflt
                st.result.decisions, st.result.status = r.decisions, "tuned"
                records.add(
                    Record(
                        b.key,
                        b.target,
                        st.task.name,
                        r.decisions,
                        tuned,
                        dflt,
                        len(st.ratios),
                        b.machine,
                        {"uses": st.task.uses, "where": st.task.where[:8]},
                    )
                )
            return
        st.result.default_seconds = dflt
        if not st.default_id:
            st.default_id = decisions_id(b.default.decisions)
            st.result.default_decisions = dict(b.default.decisions)
            st.decisions[st.default_id] = b.default.decisions
            st.ratios.setdefault(st.default_id, 1.0)
        new: list[Trial] = []
        for i, r in zip(ids, b.results):
            measured += 1
            st.result.trials += 1
            if r.seconds is None:
                st.ratios[i] = math.inf  # illegal or wrong: never measured again
                st.result.wrong += r.error.startswith("wrong")
                continue
            ratio = r.seconds / dflt
            st.ratios[i] = min(ratio, st.ratios.get(i, math.inf))
            model.add(st.feats.get(i, []), ratio)
            new.append(Trial(b.key, r.decisions, ratio, tuple(st.feats.get(i, []))))
        trials.add(b.key, new)
        model.fit()
        if progress is not None:
            progress(measured, budget, st.task.name)

    try:
        while True:
            now = time.perf_counter()
            if now > deadline:
                stop = "time"
            while runner.pending() < runner.slots and measured + _inflight(states) < budget and now <= deadline:
                live = [st for st in states.values() if not st.exhausted]
                if not live:
                    stop = "exhausted"
                    break
                st = max(live, key=_State.priority)
                n = min(opts.batch, budget - measured - _inflight(states))
                pool = _draw(st, rng, max(opts.pool, n) if model.ready else n)
                if not pool:
                    st.exhausted = True
                    continue
                send(st, _pick(pool, n, model, rng))
            if runner.pending() == 0:
                break
            for b in runner.done(block=True):
                receive(b)
        # confirm each kernel's best against its default, measured once more: where this run measured
        # something, and its best is not already the kernel's record (nothing known is measured again)
        for st in states.values():
            best = st.best()
            if st.failed or best is None or best[1] > 1 / opts.min_speedup or st.result.trials == 0:
                continue
            i = best[0]
            rec = records.get(st.task.key)
            if rec is not None and decisions_id(rec.decisions) == i:
                continue
            send(st, [(i, st.decisions[i], st.feats.get(i, []))], confirm=True)
            while runner.pending() >= runner.slots:
                for b in runner.done(block=True):
                    receive(b)
        while runner.pending():
            for b in runner.done(block=True):
                receive(b)
    finally:
        retried = getattr(runner, "retried", 0)
        machines = sorted(getattr(runner, "machines", set()))
    if not math.isinf(deadline) and time.perf_counter() > deadline:
        stop = "time"
    for st in states.values():
        if st.result.status == "default" and (rec := records.get(st.task.key)) is not None:
            st.result.status, st.result.decisions = "known", rec.decisions
            st.result.default_seconds, st.result.tuned_seconds = rec.default_seconds, rec.seconds
    return TuneReport(
        [st.result for st in states.values()],
        measured,
        known,
        time.perf_counter() - t0,
        runner.name,
        machines,
        retried,
        stop,
    )


def _inflight(states: dict[str, _State]) -> int:
    return sum(len(st.inflight) for st in states.values())


def _pick(
    pool: list[tuple[str, Decisions, list[float]]], n: int, model: CostModel, rng: random.Random
) -> list[tuple[str, Decisions, list[float]]]:
    """``n`` of ``pool``: the model's best ranked, ``EXPLORE`` of them at random (all at random before it is
    trained)."""
    if not model.ready or len(pool) <= n:
        rng.shuffle(pool)
        return pool[:n]
    pred = model.predict([f for _, _, f in pool])
    ranked = [c for _, c in sorted(zip(pred, pool), key=lambda x: x[0])]
    k = max(1, round(n * (1 - EXPLORE)))
    chosen, rest = ranked[:k], ranked[k:]
    rng.shuffle(rest)
    return chosen + rest[: n - k]


__all__ = ["KernelResult", "TuneOptions", "TuneReport", "tune"]
