"""The report page: one self-contained HTML file (inline CSS, SVG and a few lines of JS; nothing fetched).

Sections, each an element with a fixed id the browser test reads: ``summary``, ``graphs``
(``svg.graph-before`` and ``svg.graph-after``), ``changes`` (regions side by side, rules credited,
rules idle), ``saturation`` (plots), ``costs`` (per op type), and, when given, ``kernels`` and
``searches``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from costs.model import CostModel
from costs.timing import format_ratio
from rewrite.htmlreport.graphs import graph_svg
from rewrite.htmlreport.layout import engine_available
from rewrite.htmlreport.plots import bar_chart, line_chart
from rewrite.htmlreport.provenance import Provenance
from rewrite.ir.diff import GraphDiff, node_line
from rewrite.ir.graph import Graph
from rewrite.results import OptimizeStats, RunStats

TOP_RULES = 25  # rules shown in the per-rule time plot


@dataclass
class SearchSummary:
    """One search's outcome, for the side-by-side table (``--search eqsat,backtrack``)."""

    name: str
    ops_after: int
    cost_before: float
    cost_after: float
    seconds: float
    stop_reason: str
    rules: dict[str, int]  # rule direction -> rewrites (backtrack) or matches fired (eqsat)


@dataclass
class Page:
    """Everything the page shows; built by ``rewrite.htmlreport.build``."""

    stats: OptimizeStats
    diff: GraphDiff
    provenance: Provenance
    cost_model: CostModel
    runs: Mapping[str, RunStats] = field(default_factory=dict)  # "before"/"after" with --run
    kernels: Sequence[Mapping[str, Any]] = ()  # CompiledGraph.profile() of the optimized graph
    searches: Sequence[SearchSummary] = ()
    notes: Sequence[str] = ()


def _ms(x: float) -> str:
    return f"{x * 1e3:.3f} ms" if x >= 1e-3 else f"{x * 1e6:.1f} µs"


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "") -> str:
    h = "".join(f"<th>{escape(str(c))}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>'


def _summary(p: Page) -> str:
    s, sat = p.stats, p.stats.saturation
    rows: list[list[Any]] = [
        ["operators", s.ops_before, s.ops_after],
        ["modelled cost", _ms(s.cost_before), _ms(s.cost_after)],
    ]
    if p.runs:
        b, a = p.runs.get("before"), p.runs.get("after")
        cell = lambda r: (
            "—"
            if r is None
            else f"{r.latency_ms:.3f} ms; vs eager {escape(format_ratio(r.speedup_vs_eager, *r.speedup_vs_eager_iqr))}"
        )
        rows.append([f"measured latency ({next(iter(p.runs.values())).target})", cell(b), cell(a)])
        rows.append(["kernels", b.kernels if b else "—", a.kernels if a else "—"])
    if (rc := s.run_check) is not None and rc.ms:
        others = ", ".join(f"{k} {v:.3f} ms" for k, v in rc.ms.items() if k not in ("input", rc.kept))
        rows.append(
            [
                f"run check ({rc.target}, {rc.rounds} rounds)",
                f"{rc.ms_input:.3f} ms" if rc.ms_input is not None else "—",
                f"{rc.ms_kept:.3f} ms (kept {rc.kept}" + (f"; {others}" if others else "") + ")",
            ]
        )
    verified = {True: "yes", False: "NO", None: "skipped"}[s.verified]
    err = f"{s.max_abs_err:.2e}" if s.max_abs_err is not None else "—"
    ilp = s.ilp
    facts = [
        ("modelled speedup", f"{s.cost_before / s.cost_after:.3f}×" if s.cost_after else "∞"),
        ("verified", f"{verified} (max abs error {err})"),
        (
            ("saturation", f"stopped: {sat.stop_reason.value} after {len(sat.iterations)} iteration(s)")
            if sat is not None
            else ("backtracking search", f"stopped: {s.stop_reason}")
        ),
        ("e-graph", f"{sat.enodes} e-nodes, {sat.eclasses} e-classes" if sat is not None else "— (no e-graph)"),
        ("extraction", s.extractor + (f" ({ilp.status.value}, source {ilp.source.value})" if ilp else "")),
        ("ILP gap", f"{ilp.gap:.2%}" if ilp and ilp.gap is not None else "—"),
        (
            "stage seconds",
            f"load {s.seconds.load:.2f}, saturate {s.seconds.saturate:.2f}, extract {s.seconds.extract:.2f}, "
            f"verify {s.seconds.verify:.2f}, total {s.seconds.total:.2f}"
            + (" (the answer an earlier run kept in results/: saturation figures are that run's)" if s.cached else ""),
        ),
    ]
    return (
        f'<section id="summary"><h2>Summary</h2>{_table(["", "before", "after"], rows, "summary")}'
        + _table(["", ""], [[escape(k), escape(v)] for k, v in facts], "facts")
        + "".join(f'<p class="note">{escape(n)}</p>' for n in p.notes)
        + "</section>"
    )


def _graphs(p: Page) -> str:
    d = p.diff
    region_a: dict[int, int] = {}
    region_b: dict[int, int] = {}
    for k, r in enumerate(d.regions, start=1):
        region_a.update({n: k for n in r.removed})
        region_b.update({n: k for n in r.added})
    notes_b = {
        n: "credited to: " + (", ".join(names) or "no fired rule's RHS matches")
        for rp in p.provenance.regions
        for n, names in rp.nodes.items()
    }
    before = graph_svg(d.a, {n: "removed" for n in d.removed}, region_a, "before")
    after = graph_svg(d.b, {n: "new" for n in d.added}, region_b, "after", notes_b)
    legend = (
        '<p class="legend"><span class="key new">new</span><span class="key removed">removed</span>'
        '<span class="key same">unchanged</span><span class="key input">input</span> '
        f"dashed boxes: changed regions (click one in the list below to highlight it). Layout: "
        f"{'Graphviz dot' if engine_available() == 'dot' else 'built-in layered layout (Graphviz not found)'}; "
        "weights are not drawn.</p>"
    )
    return (
        f'<section id="graphs"><h2>Graph before and after</h2>{legend}<div class="pair">'
        f'<div class="side"><h3>before: {d.a.op_count()} ops</h3><div class="scroll">{before}</div></div>'
        f'<div class="side"><h3>after: {d.b.op_count()} ops</h3><div class="scroll">{after}</div></div>'
        "</div></section>"
    )


def _changes(p: Page) -> str:
    d, prov = p.diff, p.provenance
    how = (
        "How rules are credited: egglog's explanations are not available through the bindings used, so "
        "eqsat tracks provenance itself. A rule direction that fired is credited with a region when its "
        "left-hand side matches a node the input had and the result dropped, and its right-hand side matches "
        "the result there with the same bindings (pattern variables bound to the same unchanged values on both "
        "sides, or to a dropped value before and a new one after). A region no direction explains that way is "
        "marked loose and credited to the directions whose right-hand side alone matches a new node (or, for "
        "pure removals, whose left-hand side matches a dropped one). This is evidence, not a derivation: a "
        "region built by a chain of rewrites may be credited loosely or to its last step only."
    )
    parts = [f'<section id="changes"><h2>What changed and why</h2><p class="note">{escape(how)}</p>']
    if d.unchanged:
        parts.append("<p>The optimized graph is structurally equal to the input.</p>")
    for k, (r, rp) in enumerate(zip(d.regions, prov.regions), start=1):
        old = "\n".join(node_line(d.a, d.a.nodes[i]) for i in r.removed) or "(nothing removed)"
        new = "\n".join(node_line(d.b, d.b.nodes[i]) for i in r.added) or "(nothing added)"
        chain = (
            ", ".join(
                f'<span class="rule">{escape(n)}</span> <small>({escape(prov.locations.get(n, ""))})</small>'
                for n in rp.rules
            )
            or "no fired rule matches"
        ) + (' <small class="loose">(loose: no direction matches both sides)</small>' if rp.loose else "")
        where = f" — {escape(r.where)}" if r.where else ""
        unexplained = (
            f'<p class="note">{len(rp.unexplained)} new node(s) no fired right-hand side matches '
            "(built by a chain whose last step was rewritten again).</p>"
            if rp.unexplained
            else ""
        )
        parts.append(
            f'<div class="region-card" data-region="{k}"><h3>region {k}{where}</h3>'
            f'<p>rules: {chain}</p>{unexplained}<div class="pair"><pre class="old">{escape(old)}</pre>'
            f'<pre class="new">{escape(new)}</pre></div></div>'
        )
    credited = prov.where
    rows = [
        [
            f'<span class="rule">{escape(n)}</span>',
            c,
            ", ".join(map(str, credited.get(n, []))),
            escape(prov.locations[n]),
        ]
        for n, c in prov.contributing.items()
    ]
    parts.append("<h3>Rules whose rewrites appear in the result</h3>")
    parts.append(_table(["rule direction", "matches applied", "regions", "defined at"], rows, "rules-used"))
    idle = [[escape(n), c] for n, c in prov.idle.items()]
    parts.append("<h3>Rules that fired without contributing</h3>")
    parts.append(_table(["rule direction", "matches applied"], idle, "rules-idle"))
    parts.append(f"<details><summary>text diff</summary><pre>{escape(d.text())}</pre></details></section>")
    return "".join(parts)


def _saturation(p: Page) -> str:
    if p.stats.saturation is None:
        return '<section id="saturation"><h2>Saturation</h2><p>The backtracking search builds no e-graph.</p></section>'
    its = p.stats.saturation.iterations
    size = line_chart(
        "e-graph size per iteration", ["e-nodes", "e-classes"], [[s.enodes for s in its], [s.eclasses for s in its]]
    )
    secs = line_chart("seconds per iteration", ["seconds"], [[s.seconds for s in its]])
    per_rule: dict[str, float] = defaultdict(float)
    for s in its:
        for name, t in s.rule_seconds.items():
            per_rule[name] += t
    top = sorted(per_rule.items(), key=lambda kv: -kv[1])[:TOP_RULES]
    rules = bar_chart(
        f"seconds per rule (search + apply, top {len(top)} of {len(per_rule)})",
        [n for n, _ in top],
        ["seconds"],
        [[t for _, t in top]],
    )
    rows = [[s.index, s.enodes, s.eclasses, f"{s.seconds:.3f}", sum(s.applied.values())] for s in its]
    table = _table(["iteration", "e-nodes", "e-classes", "seconds", "matches applied"], rows, "iterations")
    return f'<section id="saturation"><h2>Saturation</h2><div class="plots">{size}{secs}</div>{rules}{table}</section>'


def op_costs(g: Graph, model: CostModel) -> dict[str, float]:
    """Modelled seconds per op type (weight-only nodes are precomputed, so free, as in ``graph_cost``)."""
    const = g.weight_only()
    out: dict[str, float] = defaultdict(float)
    for n in g.compute_nodes():
        if n.id not in const:
            out[n.op] += model(n.op, n.attrs, [g.shape_of(v) for v in n.inputs])
    return dict(out)


def _costs(p: Page) -> str:
    b, a = op_costs(p.diff.a, p.cost_model), op_costs(p.diff.b, p.cost_model)
    ops = sorted(set(b) | set(a), key=lambda o: -max(b.get(o, 0.0), a.get(o, 0.0)))
    chart = bar_chart(
        "modelled µs per op type",
        ops,
        ["before", "after"],
        [[b.get(o, 0) * 1e6 for o in ops], [a.get(o, 0) * 1e6 for o in ops]],
    )
    sb, sa = p.diff.a.summary(), p.diff.b.summary()
    rows = [[escape(o), sb.get(o, 0), sa.get(o, 0), _ms(b.get(o, 0.0)), _ms(a.get(o, 0.0))] for o in ops]
    table = _table(["op", "count before", "count after", "cost before", "cost after"], rows, "op-costs")
    return f'<section id="costs"><h2>Cost per op type</h2>{chart}{table}</section>'


def _kernels(p: Page) -> str:
    if not p.kernels:
        return ""
    total = sum(k["seconds"] for k in p.kernels) or 1.0
    rows = [
        [
            escape(k["kernel"]),
            _ms(k["seconds"]),
            f"{k['seconds'] / total:.1%}",
            "yes" if k["parallel"] else "",
            f"<code>{escape(k['nodes'])}</code>",
        ]
        for k in p.kernels
    ]
    table = _table(["kernel", "time (median)", "share", "parallel", "fused nodes"], rows, "kernel-plan")
    return f'<section id="kernels"><h2>Kernel plan of the optimized graph</h2>{table}</section>'


def _searches(p: Page) -> str:
    if not p.searches:
        return ""
    rows = [
        [
            escape(s.name),
            s.ops_after,
            _ms(s.cost_before),
            _ms(s.cost_after),
            f"{s.cost_before / s.cost_after:.3f}×" if s.cost_after else "∞",
            f"{s.seconds:.2f}",
            escape(s.stop_reason),
            escape(", ".join(f"{n} ×{c}" for n, c in sorted(s.rules.items(), key=lambda kv: -kv[1])[:12])),
        ]
        for s in p.searches
    ]
    head = ["search", "ops after", "cost before", "cost after", "speedup", "seconds", "stopped", "rules"]
    return f'<section id="searches"><h2>Searches side by side</h2>{_table(head, rows, "searches")}</section>'


CSS = """
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}h2{border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}
.pair{display:flex;gap:1em}.pair>*{flex:1;min-width:0}.scroll{overflow:auto;max-height:80vh;border:1px solid #eee}
pre{white-space:pre-wrap;font-size:12px;padding:6px;margin:0}pre.old{background:#fdecea}pre.new{background:#e8f5e9}
.note{color:#555;font-size:12px}.rule{font-family:monospace;background:#eef;padding:0 3px}
svg.graph text{font:11px monospace}.edge{fill:none;stroke:#999;stroke-width:1}
.node rect{stroke:#777;fill:#f4f4f4}.node.new rect{fill:#c8e6c9;stroke:#2e7d32}
.node.removed rect{fill:#ffcdd2;stroke:#c62828}.node.input rect{fill:#bbdefb}
.node.stub rect{fill:#fff;stroke-dasharray:3}
.region rect{fill:#fff59d33;stroke:#f9a825;stroke-width:2;stroke-dasharray:6 3}
.region text{font:11px sans-serif;fill:#f57f17}
.region.hl rect{fill:#fff59daa;stroke-width:4}.node.hl rect{stroke-width:3}
.key{padding:1px 8px;margin-right:6px;border:1px solid #777}.key.new{background:#c8e6c9}.key.removed{background:#ffcdd2}
.key.same{background:#f4f4f4}.key.input{background:#bbdefb}
.region-card{border:1px solid #ddd;padding:4px 8px;margin:6px 0;cursor:pointer}
.region-card.hl{border-color:#f9a825;background:#fffde7}.plots{display:flex;flex-wrap:wrap;gap:1em}
"""

JS = """
document.querySelectorAll('.region-card').forEach(function(card){
  card.addEventListener('click', function(){
    var r = card.getAttribute('data-region');
    document.querySelectorAll('.hl').forEach(function(e){ e.classList.remove('hl'); });
    card.classList.add('hl');
    document.querySelectorAll('[data-region="' + r + '"]').forEach(function(e){
      e.classList.add('hl');
      var block = e.closest('details'); if (block) { block.open = true; }
    });
    var first = document.querySelector('svg.graph-after .region[data-region="' + r + '"]');
    if (first && first.scrollIntoView) { first.scrollIntoView({block: 'center'}); }
  });
});
document.body.setAttribute('data-ready', '1');
"""


def page(p: Page) -> str:
    """The whole HTML document."""
    title = f"eqsat report: {p.stats.model}"
    body = _summary(p) + _graphs(p) + _changes(p) + _saturation(p) + _costs(p) + _kernels(p) + _searches(p)
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{CSS}</style></head><body><h1>{escape(title)}</h1>{body}<script>{JS}</script></body></html>"
    )
