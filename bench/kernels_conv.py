"""Direct-convolution and pooling kernels against torch, at one thread, interleaved in one process.

    python -m bench.kernels_conv [--json OUT] [--quick] [--threads N] [--only SUBSTRING]

The shapes are the depthwise / grouped convolutions and the pools of the built-in models (nasneta,
resnext50, squeezenet, inceptionv3; batch 1).  Each row compiles one op alone (``rewrite.pipeline.compile``)
and times it against the matching ``torch.nn.functional`` call (``conv2d(groups=...)``, ``max_pool2d``,
``avg_pool2d``, ``adaptive_avg_pool2d``) on the same thread count, alternated round by round
(``costs.timing.interleaved``).  ``ratio`` is torch's median over ours (above 1: ours is faster).
Every row first checks our output against torch's.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from costs.timing import interleaved
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import Graph
from rewrite.pipeline import compile
from rewrite.verification.numeric import normwise_rel_err


@dataclass(frozen=True)
class Case:
    """One op at one shape; ``attrs`` are the graph op's attributes."""

    model: str
    op: str  # conv2d, conv2d_bias_act, maxpool2d, avgpool2d, global_avgpool
    x: tuple[int, ...]
    w: tuple[int, ...] = ()
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        a = self.attrs
        if self.op.startswith("conv2d"):
            k = f"{self.w[2]}x{self.w[3]}/{a['stride'][0]}"
            g = "dw" if a["groups"] == self.x[1] else f"g{a['groups']}"
            act = f"+b+{a['act']}" if self.op == "conv2d_bias_act" else ""
            return f"{self.model} conv {g} {k}{act} {'x'.join(map(str, self.x))}"
        if self.op == "global_avgpool":
            return f"{self.model} global_avgpool {'x'.join(map(str, self.x))}"
        k = f"{a['kernel'][0]}x{a['kernel'][1]}/{a['stride'][0]} p{a['padding'][0]}"
        extra = " cip" if a.get("count_include_pad") else ""
        return f"{self.model} {self.op} {k}{extra} {'x'.join(map(str, self.x))}"

    def flops(self) -> float:
        """Multiply-adds times two for convolutions, window taps for pools."""
        n, c, h, w = self.x
        if self.op.startswith("conv2d"):
            o = self.out_hw()
            return 2.0 * n * self.w[0] * o[0] * o[1] * self.w[1] * self.w[2] * self.w[3]
        if self.op == "global_avgpool":
            return float(n * c * h * w)
        o = self.out_hw()
        kh, kw = self.attrs["kernel"]
        return float(n * c * o[0] * o[1] * kh * kw)

    def out_hw(self) -> tuple[int, int]:
        a = self.attrs
        h, w = self.x[2:]
        if self.op.startswith("conv2d"):
            k = (a["dilation"][0] * (self.w[2] - 1) + 1, a["dilation"][1] * (self.w[3] - 1) + 1)
        else:
            k = a["kernel"]
        rnd = math.ceil if a.get("ceil_mode") else math.floor
        return tuple(
            rnd((s + 2 * p - kk) / st) + 1 for s, p, kk, st in zip((h, w), a["padding"], k, a["stride"], strict=True)
        )


def _conv(model: str, x: tuple[int, ...], w: tuple[int, ...], s: int, p: int, g: int, act: str = "") -> Case:
    a: dict[str, Any] = {"stride": (s, s), "padding": (p, p), "dilation": (1, 1), "groups": g}
    if act:
        a["act"] = act
    return Case(model, "conv2d_bias_act" if act else "conv2d", x, w, a)


def _pool(model: str, op: str, x: tuple[int, ...], k: int, s: int, p: int, cip: int = 0) -> Case:
    a: dict[str, Any] = {"kernel": (k, k), "stride": (s, s), "padding": (p, p), "ceil_mode": 0}
    if op == "avgpool2d":
        a["count_include_pad"] = cip
    return Case(model, op, x, (), a)


CASES = [
    # nasneta: depthwise separable convolutions (3x3 stride 1, 5x5 / 7x7 stride 2)
    _conv("nasneta", (1, 64, 56, 56), (64, 1, 3, 3), 1, 1, 64),
    _conv("nasneta", (1, 128, 28, 28), (128, 1, 3, 3), 1, 1, 128),
    _conv("nasneta", (1, 256, 14, 14), (256, 1, 3, 3), 1, 1, 256),
    _conv("nasneta", (1, 128, 56, 56), (128, 1, 5, 5), 2, 2, 128),
    _conv("nasneta", (1, 128, 56, 56), (128, 1, 7, 7), 2, 3, 128),
    _conv("nasneta", (1, 256, 28, 28), (256, 1, 5, 5), 2, 2, 256),
    _conv("nasneta", (1, 256, 28, 28), (256, 1, 7, 7), 2, 3, 256),
    _conv("nasneta", (1, 64, 56, 56), (64, 1, 3, 3), 1, 1, 64, act="relu"),
    # resnext50: 32 groups
    _conv("resnext50", (1, 128, 56, 56), (128, 4, 3, 3), 1, 1, 32),
    _conv("resnext50", (1, 256, 56, 56), (256, 8, 3, 3), 2, 1, 32),
    _conv("resnext50", (1, 256, 28, 28), (256, 8, 3, 3), 1, 1, 32),
    _conv("resnext50", (1, 512, 14, 14), (512, 16, 3, 3), 1, 1, 32),
    # pools
    _pool("squeezenet", "maxpool2d", (1, 64, 111, 111), 3, 2, 0),
    _pool("squeezenet", "maxpool2d", (1, 128, 55, 55), 3, 2, 0),
    _pool("squeezenet", "maxpool2d", (1, 256, 27, 27), 3, 2, 0),
    _pool("nasneta", "maxpool2d", (1, 64, 112, 112), 3, 2, 1),
    _pool("nasneta", "maxpool2d", (1, 128, 56, 56), 3, 2, 1),
    _pool("inceptionv3", "maxpool2d", (1, 64, 147, 147), 3, 2, 0),
    _pool("inceptionv3", "maxpool2d", (1, 768, 17, 17), 3, 2, 0),
    _pool("nasneta", "avgpool2d", (1, 64, 56, 56), 3, 1, 1),
    _pool("nasneta", "avgpool2d", (1, 128, 28, 28), 3, 1, 1),
    _pool("nasneta", "avgpool2d", (1, 256, 14, 14), 3, 1, 1),
    _pool("nasneta", "avgpool2d", (1, 128, 56, 56), 3, 2, 1),
    _pool("inceptionv3", "avgpool2d", (1, 192, 35, 35), 3, 1, 1, cip=1),
    _pool("inceptionv3", "avgpool2d", (1, 768, 17, 17), 3, 1, 1, cip=1),
    _pool("inceptionv3", "avgpool2d", (1, 2048, 8, 8), 3, 1, 1, cip=1),
    Case("nasneta", "global_avgpool", (1, 1280, 14, 14)),
    Case("resnext50", "global_avgpool", (1, 2048, 7, 7)),
    Case("squeezenet", "global_avgpool", (1, 1000, 13, 13)),
]


def build(case: Case, gen: torch.Generator) -> tuple[Graph, torch.Tensor, Callable[[torch.Tensor], torch.Tensor]]:
    """The one-op graph, its input, and the torch call computing the same."""
    b = GraphBuilder(case.op)
    xv = b.input("x", case.x)
    a = case.attrs
    x = torch.randn(case.x, generator=gen)
    if case.op.startswith("conv2d"):
        w = torch.randn(case.w, generator=gen) / math.sqrt(case.w[1] * case.w[2] * case.w[3])
        conv = dict(stride=a["stride"], padding=a["padding"], dilation=a["dilation"], groups=a["groups"])
        if case.op == "conv2d_bias_act":
            bias = torch.randn(case.w[0], generator=gen)
            g = b.build([b.conv2d_bias_act(xv, b.weight("w", w), b.weight("b", bias), act=a["act"], **conv)])
            return g, x, lambda t: torch.relu(F.conv2d(t, w, bias, **conv))
        g = b.build([b.conv2d(xv, b.weight("w", w), **conv)])
        return g, x, lambda t: F.conv2d(t, w, **conv)
    if case.op == "global_avgpool":
        return b.build([b.global_avgpool(xv)]), x, lambda t: F.adaptive_avg_pool2d(t, 1)
    pool = dict(kernel_size=a["kernel"], stride=a["stride"], padding=a["padding"], ceil_mode=bool(a["ceil_mode"]))
    if case.op == "maxpool2d":
        return b.build([b.maxpool2d(xv, **a)]), x, lambda t: F.max_pool2d(t, **pool)
    cip = bool(a["count_include_pad"])
    return b.build([b.avgpool2d(xv, **a)]), x, lambda t: F.avg_pool2d(t, **pool, count_include_pad=cip)


def bench_case(case: Case, threads: int, repeats: int) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(0)
    g, x, ref = build(case, gen)
    cg = compile(g, threads=threads)
    feed = {"x": x}
    got, want = cg(feed)[0], ref(x)
    err = normwise_rel_err(got, want)
    if not err < 1e-4:
        raise AssertionError(f"{case.name}: relative error {err:.3g} against torch")
    # enough calls per sample that one sample takes ~1 ms at least
    t_one = interleaved([lambda: cg(feed)], repeats=3, warmup=1, threads=threads).timings[0].median
    inner = max(1, int(1e-3 / max(t_one, 1e-7)))

    def ours() -> None:
        for _ in range(inner):
            cg(feed)

    def theirs() -> None:
        for _ in range(inner):
            ref(x)

    run = interleaved([ours, theirs], repeats, 3, threads, names=("ours", "torch"))
    a, t = (tm.median / inner for tm in run.timings)
    return {
        "name": case.name,
        "ours_ms": a * 1e3,
        "torch_ms": t * 1e3,
        "ratio": t / a,
        "ours_gflops": case.flops() / a / 1e9,
        "rel_err": err,
        "notes": list(run.notes),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.kernels_conv", description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="OUT", help="write the rows as JSON")
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default="", help="only the cases whose name contains this")
    args = ap.parse_args(argv)
    repeats = 5 if args.quick else 15
    rows = []
    print(f"{'case':58s} {'ours ms':>9s} {'torch ms':>9s} {'ratio':>6s} {'GF/s':>6s}")
    for case in CASES:
        if args.only not in case.name:
            continue
        r = bench_case(case, args.threads, repeats)
        rows.append(r)
        flag = "  (noisy)" if r["notes"] else ""
        print(
            f"{r['name']:58s} {r['ours_ms']:9.4f} {r['torch_ms']:9.4f} {r['ratio']:6.2f} {r['ours_gflops']:6.1f}{flag}"
        )
        sys.stdout.flush()
    if rows:
        geo = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
        print(f"geomean ratio (torch / ours) {geo:.2f}, {sum(r['ratio'] > 1 for r in rows)}/{len(rows)} faster")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
