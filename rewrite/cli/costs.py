"""``eqsat costs profile|show|machine``: fill and list the measured-cost cache, and this machine's profile.

eqsat costs profile resnet50 --threads 1 [--egraph]
eqsat costs show [--json]
eqsat costs machine [--refresh]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

import torch

from bench.models import MODELS, load_spec
from costs.machine import machine_profile, profile_path
from costs.measured import MeasuredCost, cached_entries, egraph_configs, graph_configs, profile_configs
from rewrite.cli.args import add_limits, add_rules, limits_of, load_rule_args, nonneg_int, positive_int
from rewrite.cli.main import Parser
from rewrite.frontends import from_torch
from rewrite.pipeline import saturated_egraph
from rewrite.progress import counter


def cmd_profile(args: argparse.Namespace) -> int:
    rules = load_rule_args(args.rules) if args.egraph else []
    if args.threads:
        torch.set_num_threads(args.threads)
    name, module, inputs = load_spec(args.model)
    graph = from_torch(module, inputs, name=name)
    model = MeasuredCost(cache=args.cache, warmup=args.warmup, repeats=args.repeats)
    configs = graph_configs(graph)
    if args.egraph:  # also what extraction may pick: merged, fused and concatenated forms
        configs = egraph_configs(saturated_egraph(graph, rules, limits_of(args)))
    total = len(configs)

    n = profile_configs(configs, model, counter(f"profile {name}"))
    print(
        f"measured {n} operator configurations, {total - n} already cached "
        f"(target {model.fingerprint}) in {model.cache.path}"
    )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    rows = cached_entries(args.cache, target=args.target)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        print(f"{r['seconds'] * 1e6:10.1f} us  {r['op']:<16} {r['in_shapes']} {r['attrs']}  [{r['target']}]")
    print(f"{len(rows)} entries")
    return 0


def cmd_machine(args: argparse.Namespace) -> int:
    prof = machine_profile(refresh=args.refresh)
    if args.json:
        print(json.dumps(asdict(prof), indent=1))
        return 0
    print(f"machine profile ({profile_path()}):")
    print(f"  peak        {prof.peak_flops / 1e9:8.1f} GFLOP/s (fp32 matmul)")
    print(
        f"  conv        {prof.conv_flops / 1e9:8.1f} GFLOP/s (3x3, 64 channels), depthwise "
        f"{prof.depthwise_flops / 1e9:.1f} GFLOP/s"
    )
    print(f"  bandwidth   {prof.bandwidth / 1e9:8.1f} GB/s (copy)")
    for name in ("op_overhead", "view_overhead", "matmul_overhead", "conv_overhead"):
        print(f"  {name:<15} {getattr(prof, name) * 1e6:6.2f} us per node")
    return 0


def parser(prog: str) -> argparse.ArgumentParser:
    c = Parser(prog=prog, description="Measure operator costs on this machine; inspect the cache.")
    csub = c.add_subparsers(dest="costs_command", required=True, metavar="{profile,show,machine}")
    p = csub.add_parser("profile", help="measure every operator configuration of a model (with progress)")
    p.add_argument("model", help=f"one of {', '.join(MODELS)}, or FILE.py:FACTORY")
    p.add_argument(
        "--egraph",
        action="store_true",
        help="also measure every configuration in the saturated e-graph (what extraction may pick)",
    )
    p.add_argument("--threads", type=nonneg_int, default=0, help="torch threads while measuring (0: leave as is)")
    p.add_argument("--warmup", type=nonneg_int, default=5)
    p.add_argument("--repeats", type=positive_int, default=20)
    p.add_argument("--cache", help="cache file (default: $EQSAT_CACHE_DIR/costs.sqlite)")
    add_rules(p)
    add_limits(p)
    p.set_defaults(fn=cmd_profile)
    s = csub.add_parser("show", help="list the cached measurements")
    s.add_argument("--target")
    s.add_argument("--cache")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_show)
    m = csub.add_parser("machine", help="show this machine's peak FLOP/s, bandwidth and per-node overheads")
    m.add_argument("--refresh", action="store_true", help="measure again (do it on a quiet machine)")
    m.add_argument("--json", action="store_true")
    m.set_defaults(fn=cmd_machine)
    return c


def main(argv: list[str], prog: str = "eqsat costs") -> int:
    args = parser(prog).parse_args(argv)
    return int(args.fn(args))
