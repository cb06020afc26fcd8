"""``eqsat costs profile MODEL`` and ``eqsat costs show``: fill and list the measured-cost cache."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rewrite.egraph.saturate import Limits


def cmd_costs_profile(args: argparse.Namespace) -> int:
    import torch

    from costs.measured import MeasuredCost, egraph_configs, graph_configs, profile_configs
    from rewrite.cli import load_model

    if args.threads:
        torch.set_num_threads(args.threads)
    graph = load_model(args.model)
    model = MeasuredCost(cache=args.cache, warmup=args.warmup, repeats=args.repeats)
    configs = graph_configs(graph)
    if args.egraph:  # also what extraction may pick: merged, fused and concatenated forms
        from rewrite.api import load_rules
        from rewrite.egraph.saturate import saturate
        from rewrite.extract.egraph_data import read_serialized

        limits = Limits(iterations=args.iters, nodes=args.nodes, seconds=args.seconds)
        configs = egraph_configs(read_serialized(saturate(graph, load_rules(args.rules), limits).serialized()))
    total = len(configs)

    def progress(done: int, tot: int, key: Any) -> None:
        width = 30
        filled = int(width * done / max(tot, 1))
        print(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{tot}", end="", file=sys.stderr, flush=True)

    n = profile_configs(configs, model, progress)
    print(file=sys.stderr)
    print(
        f"measured {n} operator configurations, {total - n} already cached "
        f"(target {model.fingerprint}) in {model.cache.path}"
    )
    return 0


def cmd_costs_show(args: argparse.Namespace) -> int:
    from costs.measured import cached_entries

    rows = cached_entries(args.cache, target=args.target)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        print(f"{r['seconds'] * 1e6:10.1f} us  {r['op']:<16} {r['in_shapes']} {r['attrs']}  [{r['target']}]")
    print(f"{len(rows)} entries")
    return 0


def cmd_costs_machine(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from costs.machine import cache_dir, machine_profile

    prof = machine_profile(refresh=args.refresh)
    if args.json:
        print(json.dumps(asdict(prof), indent=1))
        return 0
    print(f"machine profile ({cache_dir() / 'machine.json'}):")
    print(f"  peak        {prof.peak_flops / 1e9:8.1f} GFLOP/s (fp32 matmul)")
    print(
        f"  conv        {prof.conv_flops / 1e9:8.1f} GFLOP/s (3x3, 64 channels), depthwise "
        f"{prof.depthwise_flops / 1e9:.1f} GFLOP/s"
    )
    print(f"  bandwidth   {prof.bandwidth / 1e9:8.1f} GB/s (copy)")
    for name in ("op_overhead", "view_overhead", "matmul_overhead", "conv_overhead"):
        print(f"  {name:<15} {getattr(prof, name) * 1e6:6.2f} us per node")
    return 0


def add_costs_commands(sub: Any) -> None:
    c = sub.add_parser("costs", help="measure operator costs on this machine and inspect the cache")
    csub = c.add_subparsers(dest="costs_command", required=True)
    p = csub.add_parser("profile", help="measure every operator configuration of a model (with progress)")
    p.add_argument("model")
    p.add_argument(
        "--egraph",
        action="store_true",
        help="also measure every configuration in the saturated e-graph (what extraction may pick)",
    )
    p.add_argument("--threads", type=int, default=0, help="torch threads while measuring (0: leave as is)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--cache", help="cache file (default: $EQSAT_CACHE_DIR or ~/.cache/eqsat/costs.sqlite)")
    p.add_argument("--rules", action="append")
    p.add_argument("--iters", type=int, default=Limits.iterations)
    p.add_argument("--nodes", type=int, default=Limits.nodes)
    p.add_argument("--seconds", type=float, default=Limits.seconds)
    p.set_defaults(fn=cmd_costs_profile)
    s = csub.add_parser("show", help="list the cached measurements")
    s.add_argument("--target")
    s.add_argument("--cache")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_costs_show)
    m = csub.add_parser("machine", help="show this machine's peak FLOP/s, bandwidth and per-node overheads")
    m.add_argument("--refresh", action="store_true", help="measure again (do it on a quiet machine)")
    m.add_argument("--json", action="store_true")
    m.set_defaults(fn=cmd_costs_machine)
