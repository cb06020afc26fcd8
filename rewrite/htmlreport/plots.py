"""Plots as inline SVG text: a line chart (series over iterations) and horizontal bar charts.

Drawn here rather than by a JavaScript library so the page fetches nothing and renders anywhere.

    >>> svg = line_chart("e-graph size", ["e-nodes"], [[1, 5, 9]])
    >>> svg.startswith("<svg") and svg.count("<polyline") == 1
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")
W, H, PAD = 520, 220, 44


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def line_chart(title: str, names: Sequence[str], series: Sequence[Sequence[float]], x_label: str = "iteration") -> str:
    """One polyline per series, x = index (1-based), y from 0 to the largest value; a legend on top."""
    top = max((v for s in series for v in s), default=0.0) or 1.0
    n = max((len(s) for s in series), default=0)
    sx = lambda i: PAD + (W - 2 * PAD) * (i / max(n - 1, 1))
    sy = lambda v: H - PAD + 10 - (H - 2 * PAD) * (v / top)
    parts = [_open(title), _axes(top, x_label, n)]
    for k, (name, s) in enumerate(zip(names, series)):
        c = COLORS[k % len(COLORS)]
        pts = " ".join(f"{sx(i):.1f},{sy(v):.1f}" for i, v in enumerate(s))
        parts.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{pts}"/>')
        parts += [
            f'<circle cx="{sx(i):.1f}" cy="{sy(v):.1f}" r="3" fill="{c}"><title>{escape(name)} '
            f"{i + 1}: {_fmt(v)}</title></circle>"
            for i, v in enumerate(s)
        ]
        parts.append(f'<text x="{PAD + 130 * k}" y="30" fill="{c}" font-size="12">■ {escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(title: str, labels: Sequence[str], groups: Sequence[str], values: Sequence[Sequence[float]]) -> str:
    """Horizontal bars: one row per label, one bar per group (``values[g][row]``), a legend on top."""
    rows = len(labels)
    bar = 12
    row_h = bar * len(groups) + 8
    height = 50 + rows * row_h
    top = max((v for g in values for v in g), default=0.0) or 1.0
    left, width = 200, W + 120
    parts = [_open(title, width, height)]
    for k, g in enumerate(groups):
        c = COLORS[k % len(COLORS)]
        parts.append(f'<text x="{left + 120 * k}" y="30" fill="{c}" font-size="12">■ {escape(g)}</text>')
    for r, label in enumerate(labels):
        y0 = 42 + r * row_h
        parts.append(
            f'<text x="{left - 6}" y="{y0 + row_h / 2 + 2:.0f}" text-anchor="end" font-size="11">{escape(label)}</text>'
        )
        for k, g in enumerate(groups):
            v = values[k][r]
            w = (width - left - 90) * v / top
            c = COLORS[k % len(COLORS)]
            y = y0 + k * bar
            parts.append(
                f'<rect class="bar" x="{left}" y="{y}" width="{w:.1f}" height="{bar - 2}" fill="{c}">'
                f"<title>{escape(label)} ({escape(g)}): {_fmt(v)}</title></rect>"
                f'<text x="{left + w + 4:.1f}" y="{y + bar - 3}" font-size="10">{_fmt(v)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _open(title: str, width: int = W, height: int = H) -> str:
    return (
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
        f'<text x="{PAD}" y="14" font-weight="bold" font-size="13">{escape(title)}</text>'
    )


def _axes(top: float, x_label: str, n: int) -> str:
    y0, y1 = H - PAD + 10, PAD + 10
    return (
        f'<line x1="{PAD}" y1="{y0}" x2="{W - PAD}" y2="{y0}" stroke="#888"/>'
        f'<line x1="{PAD}" y1="{y0}" x2="{PAD}" y2="{y1}" stroke="#888"/>'
        f'<text x="{PAD - 4}" y="{y1 + 4}" text-anchor="end" font-size="10">{_fmt(top)}</text>'
        f'<text x="{PAD - 4}" y="{y0}" text-anchor="end" font-size="10">0</text>'
        f'<text x="{W / 2}" y="{H - 8}" text-anchor="middle" font-size="11">{escape(x_label)} (1..{n})</text>'
    )
