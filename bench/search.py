"""Saturation against backtracking: every built-in model, one cost model, four ways to the best graph.

    eqsat bench search                          # all eight models, a table to stdout
    eqsat bench search --models bert,nasrnn --json out.json
    eqsat bench search --models bert --large    # plus: bert grown past 50k e-nodes, extraction at scale

Per model: (a) saturation + greedy extraction, (b) saturation + the exact ILP, (c) TASO's backtracking
search given (b)'s wall time (saturation and extraction together), (d) the same search given ten times
that.  All four use the analytical cost model and the shipped rules, and every graph is verified.  The
modelled speedup (cost before / cost after) of (b) is printed beside the published TASO and Tensat
speedups (Tensat, MLSys'21, Table 2: T4 GPU, cuDNN), which were measured, not modelled, on other
hardware: they are a reference point, not a like-for-like comparison.  Run times (``ms_*``) are the
original, (b)'s and (d)'s graph under ``Graph.run`` on this CPU, interleaved (``costs.timing``).

``--large`` adds, per model, a row for extraction at scale: the shipped rules plus Tensat's unguarded
multi-pattern merges (``rules/optional/tensat-multi-unguarded.rules``) under ``LARGE_LIMITS``, which grows
bert past 50k e-nodes; it reports e-nodes, why saturation stopped, greedy and ILP seconds, the ILP's
status and gap (the ILP stops at ``--ilp-seconds`` with its best incumbent and proved bound), and whether
the extracted graph verified.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from bench.models import MODELS, load
from costs.fidelity import graph_speedup
from rewrite.egraph.limits import Limits
from rewrite.frontends import from_torch
from rewrite.pipeline import default_rules, optimize
from rewrite.progress import each
from rewrite.rulelang.loader import RULES_DIR, load_rules, rule_files

# published speedups over the unoptimized graph (Tensat, MLSys'21): TASO, Tensat
PUBLISHED: dict[str, tuple[float, float]] = {
    "nasrnn": (0.454, 0.689),
    "bert": (0.085, 0.092),
    "resnext50": (0.055, 0.088),
    "nasneta": (0.019, 0.073),
    "squeezenet": (0.067, 0.245),
    "vgg19": (0.089, 0.089),
    "inceptionv3": (0.063, 0.100),
}

LONGER = 10  # (d) gets this many times (b)'s wall time

# --large: Tensat's multi-pattern merges without eqsat's canonical-order guard, bounded by the limits
# (Tensat bounds them by iterations, k_multi).  A match budget of 15k per rule per iteration takes bert
# from 842 e-nodes through ~8k, ~20k, ~40k to ~66k in five iterations (~11 s); with the default
# budget, which grows with the e-graph, it takes more than a dozen iterations to pass ~28k.
LARGE_RULES = RULES_DIR / "optional" / "tensat-multi-unguarded.rules"
LARGE_LIMITS = Limits(iterations=12, nodes=50_000, seconds=120.0, match_limit=15_000)


def _to_best(trace: Sequence[tuple[float, float]]) -> float:
    return trace[-1][0] if trace else 0.0


def run_model(name: str, ilp_seconds: float, repeats: int, max_seconds: float) -> dict[str, Any]:
    graph = from_torch(*load(name), name=name)
    rules = default_rules("torch")  # the graphs are timed in eager PyTorch
    eq = optimize(graph, rules=rules, extractor="ilp", ilp_seconds=ilp_seconds)
    s, ilp = eq.stats, eq.stats.ilp
    assert ilp is not None and s.saturation is not None, "optimize(extractor='ilp') reports saturation and the ILP"
    budget = s.seconds.load + s.seconds.saturate + s.seconds.extract  # (b)'s wall time, verification aside
    same = optimize(graph, rules=rules, search="backtrack", limits=Limits(seconds=budget))
    longer = optimize(graph, rules=rules, search="backtrack", limits=Limits(seconds=min(LONGER * budget, max_seconds)))
    sp_eq = graph_speedup(graph, eq.graph, repeats=repeats)
    sp_bt = graph_speedup(graph, longer.graph, repeats=repeats)
    taso, tensat = PUBLISHED.get(name, (None, None))
    return {
        "model": name,
        "enodes": s.saturation.enodes,
        "stop_reason": s.saturation.stop_reason.value,
        "cost_before": s.cost_before,
        "cost_eqsat_greedy": ilp.cost_after_greedy,
        "cost_eqsat_ilp": s.cost_after,
        "cost_backtrack_same_time": same.stats.cost_after,
        "cost_backtrack_10x": longer.stats.cost_after,
        "ilp_status": ilp.status.value,
        "ilp_gap": ilp.gap,
        "seconds_saturate": s.seconds.load + s.seconds.saturate,
        "seconds_extract_greedy": s.seconds.extract_greedy,
        "seconds_extract_ilp": ilp.seconds,
        "seconds_eqsat_to_best": _to_best(s.trace),
        "seconds_backtrack_budget": [same.stats.limits.seconds, longer.stats.limits.seconds],
        "seconds_backtrack_same_time_to_best": _to_best(same.stats.trace),
        "seconds_backtrack_to_best": _to_best(longer.stats.trace),
        "backtrack_expansions": [bt.expansions if (bt := r.stats.backtrack) is not None else 0 for r in (same, longer)],
        "ms_original": sp_eq.baseline.median * 1e3,
        "ms_eqsat_ilp": sp_eq.ours.median * 1e3,
        "ms_backtrack": sp_bt.ours.median * 1e3,
        "timing_notes": [*sp_eq.notes, *sp_bt.notes],
        "verified": all(r.stats.verified for r in (eq, same, longer)),
        "modelled_speedup_eqsat_ilp": s.cost_before / s.cost_after,
        "modelled_speedup_backtrack_10x": s.cost_before / longer.stats.cost_after,
        "published_taso": taso,
        "published_tensat": tensat,
    }


def run_large(name: str, ilp_seconds: float) -> dict[str, Any]:
    """Extraction at scale: ``name`` saturated with the unguarded merges too, under ``LARGE_LIMITS``."""
    graph = from_torch(*load(name), name=name)
    rules = load_rules([*rule_files(), LARGE_RULES])
    res = optimize(graph, rules=rules, limits=LARGE_LIMITS, extractor="ilp", ilp_seconds=ilp_seconds)
    s, ilp = res.stats, res.stats.ilp
    assert ilp is not None and s.saturation is not None, "optimize(extractor='ilp') reports saturation and the ILP"
    return {
        "model": f"{name} (large)",
        "enodes": s.saturation.enodes,
        "stop_reason": s.saturation.stop_reason.value,
        "cost_before": s.cost_before,
        "cost_eqsat_greedy": ilp.cost_after_greedy,
        "cost_eqsat_ilp": s.cost_after,
        "ilp_status": ilp.status.value,
        "ilp_source": ilp.source.value,
        "ilp_gap": ilp.gap,
        "ilp_bound": ilp.bound,
        "ilp_seconds_limit": ilp_seconds,
        "seconds_saturate": s.seconds.load + s.seconds.saturate,
        "seconds_extract_greedy": s.seconds.extract_greedy,
        "seconds_extract_ilp": ilp.seconds,
        "verified": s.verified,
    }


def markdown_large(rows: Sequence[dict[str, Any]]) -> str:
    head = (
        "model | e-nodes | stop reason | s sat | s greedy | s ILP (limit) | ILP status | ILP gap | "
        "cost greedy / ILP (ms) | verified"
    )
    lines = ["| " + head + " |", "|" + "---|" * (head.count("|") + 1)]
    for r in rows:
        cells = [
            r["model"],
            str(r["enodes"]),
            r["stop_reason"],
            f"{r['seconds_saturate']:.2f}",
            f"{r['seconds_extract_greedy']:.2f}",
            f"{r['seconds_extract_ilp']:.2f} ({r['ilp_seconds_limit']:g})",
            f"{r['ilp_status']} ({r['ilp_source']})",
            "-" if r["ilp_gap"] is None else f"{r['ilp_gap']:.2%}",
            f"{r['cost_eqsat_greedy'] * 1e3:.3f} / {r['cost_eqsat_ilp'] * 1e3:.3f}",
            str(r["verified"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    head = (
        "model | e-nodes | cost before (ms) | (a) sat+greedy | (b) sat+ILP | (c) backtrack same time | "
        "(d) backtrack 10x | ILP gap | s sat | s ILP | s (d) to best | ms orig / (b) / (d) | "
        "(b) modelled speedup | (d) modelled speedup | TASO / Tensat published"
    )
    lines = ["| " + head + " |", "|" + "---|" * (head.count("|") + 1)]
    for r in rows:
        ms = f"{r['ms_original']:.2f} / {r['ms_eqsat_ilp']:.2f} / {r['ms_backtrack']:.2f}"
        cells = [
            r["model"],
            str(r["enodes"]),
            f"{r['cost_before'] * 1e3:.3f}",
            *(
                f"{r[k] * 1e3:.3f}"
                for k in ("cost_eqsat_greedy", "cost_eqsat_ilp", "cost_backtrack_same_time", "cost_backtrack_10x")
            ),
            "-" if r["ilp_gap"] is None else f"{r['ilp_gap']:.2%}",
            f"{r['seconds_saturate']:.2f}",
            f"{r['seconds_extract_ilp']:.2f}",
            f"{r['seconds_backtrack_to_best']:.2f}",
            ms,
            _pct(r["modelled_speedup_eqsat_ilp"] - 1),
            _pct(r["modelled_speedup_backtrack_10x"] - 1),
            f"{_pct(r['published_taso'])} / {_pct(r['published_tensat'])}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="eqsat bench search", description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    p.add_argument("--json", help="write the rows as a JSON list to this file")
    p.add_argument("--threads", type=int, default=1, help="torch threads for timing (same for every graph)")
    p.add_argument("--repeats", type=int, default=5, help="timing rounds per pair of graphs")
    p.add_argument("--ilp-seconds", type=float, default=10.0, help="time limit of the ILP extraction")
    p.add_argument("--max-seconds", type=float, default=120.0, help="cap on the 10x backtracking budget")
    p.add_argument(
        "--large", action="store_true", help="also a row per model grown past 50k e-nodes (unguarded Tensat merges)"
    )
    args = p.parse_args(argv)
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        print(f"unknown model(s) {unknown}; known: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    rows = []
    for name in each(names, "bench search"):
        r = run_model(name, args.ilp_seconds, args.repeats, args.max_seconds)
        rows.append(r)
        ahead = "ahead of" if r["cost_eqsat_ilp"] <= r["cost_backtrack_same_time"] else "BEHIND"
        print(
            f"    (b) {r['cost_eqsat_ilp'] * 1e3:.3f} ms is {ahead} (c) {r['cost_backtrack_same_time'] * 1e3:.3f} ms; "
            f"(d) {r['cost_backtrack_10x'] * 1e3:.3f} ms; ILP gap {r['ilp_gap']} in {r['seconds_extract_ilp']:.2f}s; "
            f"modelled speedup of (b) {_pct(r['modelled_speedup_eqsat_ilp'] - 1)} vs Tensat published "
            f"{_pct(r['published_tensat'])}",
            file=sys.stderr,
            flush=True,
        )
    print(markdown(rows))
    large = []
    for name in each(names if args.large else [], "bench search --large"):
        r = run_large(name, args.ilp_seconds)
        large.append(r)
        print(
            f"    {r['model']}: {r['enodes']} e-nodes ({r['stop_reason']}); greedy {r['seconds_extract_greedy']:.2f}s, "
            f"ILP {r['ilp_status']} in {r['seconds_extract_ilp']:.2f}s (limit {args.ilp_seconds:g}s), "
            f"gap {r['ilp_gap']}",
            file=sys.stderr,
            flush=True,
        )
    if large:
        print()
        print(markdown_large(large))
    if args.json:
        Path(args.json).write_text(json.dumps(rows + large, indent=1))
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
