"""Text reports: the before/after table `eqsat optimize` prints, and the line for `--run`."""

from __future__ import annotations

import math

from costs.timing import format_ratio
from rewrite.results import OptimizeStats, RunStats


def _fmt_s(x: float) -> str:
    if not math.isfinite(x):
        return "n/a"
    return f"{x * 1e3:.3f} ms" if x >= 1e-3 else f"{x * 1e6:.1f} us"


def table(rows: list[tuple[str, str, str]]) -> str:
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{r[0]:<{w[0]}}  {r[1]:>{w[1]}}  {r[2]:>{w[2]}}" for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def _extraction(stats: OptimizeStats) -> str:
    ilp = stats.ilp
    if ilp is None:
        return f"extraction: {stats.extractor}"
    if ilp.gap is None:
        return f"extraction: {stats.extractor} ({ilp.status.value})"
    return (
        f"extraction: {stats.extractor} ({ilp.status.value}, gap {ilp.gap:.2%}, "
        f"greedy alone {_fmt_s(ilp.cost_after_greedy)})"
    )


def _measuring(stats: OptimizeStats) -> str:
    """What extraction measured (and interpolated) first, for the time line; empty when it measured nothing."""
    if not stats.measured_kernels:
        return ""
    also = f", {stats.interpolated_kernels} interpolated" if stats.interpolated_kernels else ""
    return f" (measuring {stats.measured_kernels} kernels {stats.seconds.measure:.2f}s{also})"


def _search_lines(stats: OptimizeStats) -> list[str]:
    """What the search did: the e-graph and extraction, or the backtracking search's budget and its best times."""
    s, sat, bt = stats.seconds, stats.saturation, stats.backtrack
    if sat is not None:
        kept = (
            " (an earlier run's answer, kept in the cache folder's results/: nothing saturated now; "
            "EQSAT_OPTIMIZE_CACHE=0 saturates again)"
            if stats.cached
            else ""
        )
        found = (
            f"answer read {s.extract:.2f}s"
            if stats.cached
            else f"load {s.load:.2f}s, saturate {s.saturate:.2f}s, extract {s.extract:.2f}s" + _measuring(stats)
        )
        return [
            f"e-graph: {sat.enodes} e-nodes, {sat.eclasses} e-classes after {len(sat.iterations)} "
            f"iteration(s); stopped: {sat.stop_reason.value}{kept}",
            f"time: {found}, verify {s.verify:.2f}s"
            + (f", run check {s.run_check:.2f}s" if s.run_check else "")
            + f", total {s.total:.2f}s",
            _extraction(stats),
        ]
    lines = []
    if bt is not None:
        lines.append(
            f"backtracking search (alpha {bt.alpha}): {bt.expansions} graphs expanded, {bt.graphs_seen} rewrites "
            f"planned; stopped: {bt.stop_reason}"
        )
    best_at = stats.trace[-1][0] if stats.trace else 0.0
    lines.append(
        f"time: search {s.search:.2f}s (best found at {best_at:.2f}s), verify {s.verify:.2f}s, total {s.total:.2f}s"
    )
    return lines


def _headline(stats: OptimizeStats) -> str:
    """The modelled speedup, or why there is none (never ``inf`` or ``nan``)."""
    if stats.ops_before == 0:
        return "nothing to optimize: the graph has no compute ops"
    if not (stats.cost_before > 0 and stats.cost_after > 0 and math.isfinite(stats.cost_before / stats.cost_after)):
        return f"modelled speedup n/a (modelled cost {_fmt_s(stats.cost_before)} -> {_fmt_s(stats.cost_after)})"
    return f"modelled speedup {stats.cost_before / stats.cost_after:.3f}x"


def before_after(stats: OptimizeStats, before_ops: dict[str, int], after_ops: dict[str, int]) -> str:
    """A readable before/after comparison of one optimization run."""
    rows = [
        ("", "before", "after"),
        ("operators", str(stats.ops_before), str(stats.ops_after)),
        ("modelled cost", _fmt_s(stats.cost_before), _fmt_s(stats.cost_after)),
    ]
    for op in sorted(set(before_ops) | set(after_ops)):
        b, a = before_ops.get(op, 0), after_ops.get(op, 0)
        if b or a:
            rows.append((f"  {op}", str(b), str(a)))
    verified = {True: "yes", False: "NO", None: "skipped"}[stats.verified]
    err = f" (max abs error {stats.max_abs_err:.2e})" if stats.max_abs_err is not None else ""
    fired = ", ".join(f"{k} x{v}" for k, v in sorted(stats.rules_fired.items(), key=lambda kv: -kv[1])[:8])
    lines = [
        f"model {stats.model}: {_headline(stats)}",
        table(rows),
        *_search_lines(stats),
        f"verified: {verified}{err}",
        *_min_gain_lines(stats),
        *_run_check_lines(stats),
        f"rules fired: {fired or 'none'}",
    ]
    return "\n".join(lines)


def _min_gain_lines(stats: OptimizeStats) -> list[str]:
    """Why the input came back when extraction found a graph it priced cheaper, but not by ``MIN_GAIN``."""
    from rewrite.pipeline import MIN_GAIN, worth_replacing  # deferred: the pipeline imports the whole optimizer

    found, before = stats.cost_extracted, stats.cost_before
    if found is None or not 0 < found < before or worth_replacing(before, found):
        return []
    return [
        f"kept the input: the best graph found was modelled {100 * (1 - found / before):.2f}% cheaper, "
        f"under the {100 * MIN_GAIN:g}% it takes to replace it"
    ]


def _run_check_lines(stats: OptimizeStats) -> list[str]:
    """The run check's times (``optimize`` for a compiled target): each candidate graph's, and which was kept."""
    rc = stats.run_check
    if rc is None:
        return []
    times = ", ".join(f"{k} {v:.3f} ms" for k, v in rc.ms.items())
    head = f"run check ({rc.target}, {rc.threads} thread(s), {rc.rounds} rounds): {times or 'not timed'}"
    head += f"; kept {rc.kept}"
    return [head, *(f"  {n}" for n in rc.notes)]


def run_table(run: RunStats) -> str:
    """The ``--run`` line: the speedup with the interquartile range of its per-round ratios, and any
    warning that the timing was noisy."""
    lo, hi = run.speedup_vs_eager_iqr
    finite = all(math.isfinite(x) for x in (run.speedup_vs_eager, lo, hi))
    ratio = format_ratio(run.speedup_vs_eager, lo, hi) if finite else "speedup n/a"
    line = (
        f"{run.target}: {run.kernels} kernels compiled in {run.compile_seconds:.2f}s; "
        f"latency {run.latency_ms:.3f} ms vs PyTorch eager {run.torch_eager_ms:.3f} ms "
        f"({ratio}, {run.torch_threads} thread(s) each); "
        f"max relative error {run.max_rel_err:.2e}"
    )
    return "\n".join([line, *(f"warning: {n}" for n in run.timing_notes)])
