"""Typed results of the pipeline: what ``optimize`` and ``compile_and_compare`` report, and their JSON.

The records are what Python callers read (``result.stats.cost_after``,
``result.stats.saturation.stop_reason``, ``result.stats.ilp.status``); ``to_json()`` gives the flat
dictionary ``eqsat optimize --json`` writes, with keys and value shapes fixed (a test pins them).

    >>> t = Timings(load=0.5, saturate=1.0, extract=0.25, extract_greedy=0.1, verify=0.1, total=1.85)
    >>> t.to_json()["total"], LimitStats(12, 50_000, 20.0, 1000).to_json()["match_limit"]
    (1.85, 1000)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rewrite.egraph.limits import StopReason
from rewrite.egraph.saturate import IterationStat, SaturationResult
from rewrite.extract.ilp import IlpSource, IlpStatus

ITERATION_SECONDS_DIGITS = 4  # per-iteration wall times in the JSON are rounded to 0.1 ms


@dataclass(frozen=True)
class SaturationStats:
    """Why saturation stopped, the final e-graph size, each iteration, and what fired."""

    stop_reason: StopReason
    iterations: list[IterationStat]
    enodes: int
    eclasses: int
    rules_fired: dict[str, int]  # per rule, matches applied over all iterations, by rule name
    match_limit: int  # the per-rule match budget in force at the end
    rules_loaded: int = 0  # rules that could match the graph (the others were not loaded: rewrite.egraph.reach)
    rules_given: int = 0
    ops_declared: int = 0  # constructors in the e-graph's prelude: the ops the graph can reach

    @classmethod
    def of(cls, sat: SaturationResult) -> SaturationStats:
        fired = dict(sorted(sat.rules_fired.items()))
        return cls(
            sat.stop_reason,
            list(sat.iterations),
            sat.enodes,
            sat.eclasses,
            fired,
            sat.match_limit,
            sat.rules_loaded,
            sat.rules_given,
            sat.ops_declared,
        )

    def to_json(self) -> dict[str, Any]:
        per_iteration = [
            {
                "iteration": s.index,
                "enodes": s.enodes,
                "eclasses": s.eclasses,
                "seconds": round(s.seconds, ITERATION_SECONDS_DIGITS),
            }
            for s in self.iterations
        ]
        return {
            "stop_reason": self.stop_reason.value,
            "iterations": len(self.iterations),
            "enodes": self.enodes,
            "eclasses": self.eclasses,
            "rules_loaded": self.rules_loaded,
            "rules_given": self.rules_given,
            "ops_declared": self.ops_declared,
            "per_iteration": per_iteration,
        }


@dataclass(frozen=True)
class IlpStats:
    """The exact extraction: how it ended, which selection won, its proved bound and gap."""

    status: IlpStatus
    source: IlpSource
    gap: float | None
    objective: float  # DAG cost of the returned selection
    bound: float | None
    greedy_objective: float | None
    seconds: float
    cost_after_greedy: float  # what greedy alone would have given (never above the input's cost)

    def to_json(self) -> dict[str, Any]:
        return {
            "ilp_status": self.status.value,
            "ilp_source": self.source.value,
            "ilp_gap": self.gap,
            "ilp_objective": self.objective,
            "ilp_bound": self.bound,
            "greedy_objective": self.greedy_objective,
            "ilp_seconds": self.seconds,
            "cost_after_greedy": self.cost_after_greedy,
        }


@dataclass(frozen=True)
class Timings:
    """Wall seconds per stage; ``extract`` includes ``extract_greedy`` and the ILP."""

    load: float
    saturate: float
    extract: float
    extract_greedy: float
    verify: float
    total: float
    search: float = 0.0  # the backtracking search (``search="backtrack"``; saturation and extraction are 0 then)
    measure: float = 0.0  # measuring the kernel costs extraction needed and the cost cache lacked (within extract)
    run_check: float = 0.0  # compiling and timing the chosen graph against the input (``RunCheck``)

    def to_json(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class LimitStats:
    """The saturation limits asked for, and the match budget finally used."""

    iterations: int
    nodes: int
    seconds: float
    match_limit: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SearchStats:
    """The backtracking search (``optimize(search="backtrack")``): its budget use and why it stopped."""

    stop_reason: str  # ``rewrite.search.SearchStop`` value
    expansions: int
    graphs_seen: int
    alpha: float
    rules_applied: dict[str, int]  # rewrites on the path from the input to the best graph, per rule direction

    def to_json(self) -> dict[str, Any]:
        return {
            "expansions": self.expansions,
            "graphs_seen": self.graphs_seen,
            "alpha": self.alpha,
        }


@dataclass(frozen=True)
class RunCheck:
    """The graph extraction chose, compiled and timed on the target against the imported graph, interleaved:
    which one ``optimize`` returned, and why.

    ``ms``: each candidate's median milliseconds ("extracted", "input"); ``kept``: the one returned, "input"
    when the input ran faster in the median round; ``margin``: the relative difference below which that
    answer is a coin toss (twice the median ratio's standard error)."""

    target: str
    threads: int
    ms: dict[str, float]
    kept: str
    margin: float
    rounds: int
    seconds: float  # compiling and timing
    notes: tuple[str, ...] = ()

    @property
    def ms_input(self) -> float | None:
        return self.ms.get("input")

    @property
    def ms_kept(self) -> float | None:
        return self.ms.get(self.kept)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class OptimizeStats:
    """One ``optimize`` run: sizes and modelled costs before and after, and each stage's figures."""

    model: str
    ops_before: int
    ops_after: int
    cost_before: float  # modelled seconds
    cost_after: float
    extracted_dag_cost: float  # the greedy selection's DAG cost over the e-graph
    extractor: str  # "greedy" | "ilp"; "none" for the backtracking search
    saturation: SaturationStats | None  # None for the backtracking search
    seconds: Timings
    verified: bool | None  # None: the check was skipped
    max_abs_err: float | None
    dropped_enodes: int  # e-nodes extraction could not use (ill-formed shapes)
    limits: LimitStats
    ilp: IlpStats | None = None  # only with the ILP extractor
    search: str = "eqsat"  # "eqsat" (saturation + extraction) or "backtrack"
    # (seconds since optimize began, modelled cost of the best graph so far), each time the best improved
    trace: tuple[tuple[float, float], ...] = ()
    backtrack: SearchStats | None = None  # only for search="backtrack"
    measured_kernels: int = 0  # kernel configurations measured for this call (a compiled cost model's misses)
    interpolated_kernels: int = 0  # fused increments priced by interpolation between measured ones instead
    run_check: RunCheck | None = None  # a compiled target's chosen graph timed against the input (None: not run)
    # the modelled cost of the best graph extraction found, before it had to be ``pipeline.MIN_GAIN`` cheaper than the
    # input and pass the run check (None where the caller did not say: ``cost_after`` then stands for it)
    cost_extracted: float | None = None
    # the graph and the figures above came from an earlier call's answer kept on disk (``rewrite.result_cache``):
    # nothing was loaded, saturated or extracted (those seconds are 0); verification and the run check ran again
    cached: bool = False

    @property
    def stop_reason(self) -> str:
        """Why saturation, or the backtracking search, stopped."""
        if self.saturation is not None:
            return self.saturation.stop_reason.value
        return self.backtrack.stop_reason if self.backtrack is not None else ""

    @property
    def rules_fired(self) -> dict[str, int]:
        """Per rule, matches applied by saturation, or rewrites on the backtracking search's best path."""
        if self.saturation is not None:
            return dict(self.saturation.rules_fired)
        return dict(sorted(self.backtrack.rules_applied.items())) if self.backtrack is not None else {}

    def to_json(self) -> dict[str, Any]:
        """The flat JSON record (``eqsat optimize --json``); ILP keys only for the ILP extractor.

        For the backtracking search the saturation keys keep their place: ``stop_reason`` is the
        search's, ``iterations`` 0 (its ``expansions`` have a key of their own), ``enodes`` and
        ``eclasses`` None, ``per_iteration`` empty.
        """
        if self.saturation is not None:
            sat = self.saturation.to_json()
        else:
            found = self.backtrack
            sat = {
                "stop_reason": found.stop_reason if found is not None else "",
                "iterations": 0,
                "enodes": None,
                "eclasses": None,
                "per_iteration": [],
            }
        return {
            "model": self.model,
            "ops_before": self.ops_before,
            "ops_after": self.ops_after,
            "cost_before": self.cost_before,
            "cost_after": self.cost_after,
            "extracted_dag_cost": self.extracted_dag_cost,
            "extractor": self.extractor,
            **(self.ilp.to_json() if self.ilp is not None else {}),
            "stop_reason": sat["stop_reason"],
            "iterations": sat["iterations"],
            "enodes": sat["enodes"],
            "eclasses": sat["eclasses"],
            "per_iteration": sat["per_iteration"],
            "rules_loaded": self.saturation.rules_loaded if self.saturation is not None else None,
            "rules_given": self.saturation.rules_given if self.saturation is not None else None,
            "measured_kernels": self.measured_kernels,
            "interpolated_kernels": self.interpolated_kernels,
            "cost_extracted": self.cost_extracted,
            "seconds": self.seconds.to_json(),
            "verified": self.verified,
            "max_abs_err": self.max_abs_err,
            "rules_fired": self.rules_fired,
            "dropped_enodes": self.dropped_enodes,
            "limits": self.limits.to_json(),
            "search": self.search,
            **(self.backtrack.to_json() if self.backtrack is not None else {}),
            "trace": [[round(t, ITERATION_SECONDS_DIGITS), c] for t, c in self.trace],
            "run_check": self.run_check.to_json() if self.run_check is not None else None,
            "cached": self.cached,
        }


@dataclass(frozen=True)
class RunStats:
    """A compiled graph checked against PyTorch and timed against eager mode (alternated, medians)."""

    target: str
    compile_seconds: float
    kernels: int
    latency_ms: float
    torch_eager_ms: float
    speedup_vs_eager: float  # median of the per-round ratios
    speedup_vs_eager_iqr: tuple[float, float]  # their interquartile range
    timing_notes: tuple[str, ...]  # warnings that the timing was noisy (spread, other processes)
    max_rel_err: float
    torch_threads: int
    plan: str  # the fusion plan as text (printed with -v, not written to JSON)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        del out["plan"]
        out["speedup_vs_eager_iqr"] = list(self.speedup_vs_eager_iqr)
        out["timing_notes"] = list(self.timing_notes)
        return out
