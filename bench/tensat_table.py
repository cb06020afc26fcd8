"""The Tensat table: every benchmark model optimized, extracted greedily and exactly, and timed.

    python -m bench                          # all eight models, Markdown to stdout and bench/results/
    python -m bench --models bert,nasrnn --json out.json
    eqsat bench --models squeezenet

Run times are measured with torch on this CPU: the original and the optimized
graph (weight-only sub-graphs folded into weights for both), interleaved in the
same process with a fixed thread count (``costs.timing``): the speedup is the
median of per-round ratios, shown with their interquartile range.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from bench.models import MODELS, load
from costs.fidelity import graph_speedup
from costs.measured import MeasuredCost
from costs.timing import format_ratio
from rewrite.egraph.limits import Limits
from rewrite.frontends import from_torch
from rewrite.pipeline import optimize
from rewrite.progress import each
from rewrite.rulelang.loader import load_rules

COLUMNS = (
    "model",
    "ops_before",
    "ops_after",
    "enodes",
    "seconds_saturate",
    "seconds_extract_greedy",
    "seconds_extract_ilp",
    "ilp_gap",
    "cost_before",
    "cost_after_greedy",
    "cost_after_ilp",
    "ms_original",
    "ms_optimized",
    "speedup",
    "verified",
)


def run_model(
    name: str, limits: Limits, ilp_seconds: float, repeats: int, cost_model: Callable[..., float] | None = None
) -> dict[str, Any]:
    graph = from_torch(*load(name), name=name)
    res = optimize(
        graph, rules=load_rules(), limits=limits, extractor="ilp", ilp_seconds=ilp_seconds, cost_model=cost_model
    )
    s = res.stats
    ilp, sat = s.ilp, s.saturation
    assert ilp is not None and sat is not None, "optimize(extractor='ilp') reports saturation and the ILP"
    sp = graph_speedup(graph, res.graph, repeats=repeats)
    return {
        "model": name,
        "ops_before": s.ops_before,
        "ops_after": s.ops_after,
        "enodes": sat.enodes,
        "seconds_saturate": s.seconds.saturate,
        "seconds_extract_greedy": s.seconds.extract_greedy,
        "seconds_extract_ilp": ilp.seconds,
        "ilp_gap": ilp.gap,
        "ilp_status": ilp.status.value,
        "cost_before": s.cost_before,
        "cost_after_greedy": ilp.cost_after_greedy,
        "cost_after_ilp": s.cost_after,
        "ms_original": sp.baseline.median * 1e3,
        "ms_optimized": sp.ours.median * 1e3,
        "speedup": sp.ratio,
        "speedup_iqr": [sp.lo, sp.hi],
        "timing_notes": list(sp.notes),
        "verified": s.verified,
        "stop_reason": sat.stop_reason.value,
        "seconds_total": s.seconds.total,
    }


def _cell(key: str, v: Any) -> str:
    if v is None:
        return "-"
    if key.startswith("cost"):
        return f"{v * 1e3:.3f}"
    if key == "ilp_gap":
        return f"{v:.2%}"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def _speedup_cell(r: dict[str, Any]) -> str:
    return format_ratio(r["speedup"], *r["speedup_iqr"]) if "speedup_iqr" in r else _cell("speedup", r.get("speedup"))


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    head = [c.replace("seconds_", "s_").replace("cost_", "cost_ms_") for c in COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += [
        "| " + " | ".join(_speedup_cell(r) if c == "speedup" else _cell(c, r.get(c)) for c in COLUMNS) + " |"
        for r in rows
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    p.add_argument("--json", help="write the rows as a JSON list")
    p.add_argument("--markdown", default=str(Path(__file__).parent / "results" / "tensat_table.md"))
    p.add_argument("--threads", type=int, default=1, help="torch threads for timing (same for both sides)")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--ilp-seconds", type=float, default=10.0)
    p.add_argument("--cost", choices=("analytical", "measured"), default="analytical")
    args = p.parse_args(argv)
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        print(f"unknown model(s) {unknown}; known: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    cost_model = MeasuredCost(measure_missing=True) if args.cost == "measured" else None
    rows = []
    for name in each(names, "tensat table"):
        rows.append(run_model(name, Limits(), args.ilp_seconds, args.repeats, cost_model))
        r = rows[-1]
        print(
            f"    ops {r['ops_before']} -> {r['ops_after']}, {r['ms_original']:.2f} ms -> "
            f"{r['ms_optimized']:.2f} ms ({_speedup_cell(r)}), verified {r['verified']}",
            file=sys.stderr,
        )
        for note in r["timing_notes"]:
            print(f"    warning: {note}", file=sys.stderr)
    table = markdown(rows)
    print(table)
    out = Path(args.markdown)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"# Tensat table ({args.threads} thread(s), {args.cost} costs)\n\n{table}\n")
    print(f"wrote {out}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
