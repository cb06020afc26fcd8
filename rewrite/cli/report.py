"""Text reports: the before/after table `eqsat optimize` prints, and the line for `--run`."""

from __future__ import annotations

from typing import Any

from costs.timing import format_ratio


def _fmt_s(x: float) -> str:
    return f"{x * 1e3:.3f} ms" if x >= 1e-3 else f"{x * 1e6:.1f} us"


def table(rows: list[tuple[str, str, str]]) -> str:
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{r[0]:<{w[0]}}  {r[1]:>{w[1]}}  {r[2]:>{w[2]}}" for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def before_after(stats: dict[str, Any], before_ops: dict[str, int], after_ops: dict[str, int]) -> str:
    """A readable before/after comparison of one optimization run."""
    rows = [
        ("", "before", "after"),
        ("operators", str(stats["ops_before"]), str(stats["ops_after"])),
        ("modelled cost", _fmt_s(stats["cost_before"]), _fmt_s(stats["cost_after"])),
    ]
    for op in sorted(set(before_ops) | set(after_ops)):
        b, a = before_ops.get(op, 0), after_ops.get(op, 0)
        if b or a:
            rows.append((f"  {op}", str(b), str(a)))
    s = stats["seconds"]
    speed = stats["cost_before"] / stats["cost_after"] if stats["cost_after"] else float("inf")
    verified = {True: "yes", False: "NO", None: "skipped"}[stats["verified"]]
    err = f" (max abs error {stats['max_abs_err']:.2e})" if stats["max_abs_err"] is not None else ""
    fired = ", ".join(f"{k} x{v}" for k, v in sorted(stats["rules_fired"].items(), key=lambda kv: -kv[1])[:8])
    lines = [
        f"model {stats['model']}: modelled speedup {speed:.3f}x",
        table(rows),
        f"e-graph: {stats['enodes']} e-nodes, {stats['eclasses']} e-classes after {stats['iterations']} "
        f"iteration(s); stopped: {stats['stop_reason']}",
        f"time: load {s['load']:.2f}s, saturate {s['saturate']:.2f}s, extract {s['extract']:.2f}s, "
        f"verify {s['verify']:.2f}s, total {s['total']:.2f}s",
        f"extraction: {stats['extractor']}"
        + (
            f" ({stats['ilp_status']}, gap {stats['ilp_gap']:.2%}, greedy alone {_fmt_s(stats['cost_after_greedy'])})"
            if stats.get("ilp_status") and stats.get("ilp_gap") is not None
            else (f" ({stats['ilp_status']})" if stats.get("ilp_status") else "")
        ),
        f"verified: {verified}{err}",
        f"rules fired: {fired or 'none'}",
    ]
    return "\n".join(lines)


def run_table(stats: dict[str, Any]) -> str:
    """The ``--run`` line: the speedup with the interquartile range of its per-round ratios, and any
    warning that the timing was noisy."""
    lo, hi = stats["speedup_vs_eager_iqr"]
    line = (
        f"{stats['target']}: {stats['kernels']} kernels compiled in {stats['compile_seconds']:.2f}s; "
        f"latency {stats['latency_ms']:.3f} ms vs PyTorch eager {stats['torch_eager_ms']:.3f} ms "
        f"({format_ratio(stats['speedup_vs_eager'], lo, hi)}, {stats['torch_threads']} thread(s) each); "
        f"max relative error {stats['max_rel_err']:.2e}"
    )
    return "\n".join([line, *(f"warning: {n}" for n in stats.get("timing_notes", []))])
