"""``eqsat bench tune-ray``: the same tuning budget on a one-node and a two-node local Ray cluster, wall time.

    eqsat bench tune-ray --models bert,squeezenet --trials 200 [--nodes 1,2] [--json OUT]

For each node count a fresh ``LocalCluster`` on this machine, every node with one CPU and its measuring
worker pinned to its own core (``RayRunner(pin_cores=True)``), and a fresh cache folder (no kernel object,
schedule, record or trial of another configuration is reused; the nodes get it through their environment).
Each model's graph as imported is tuned with the same budget and seed; the table prints each configuration's
wall seconds and its ratio to the first's (issue: two nodes in at most 0.65x one node's time).  The search
itself runs in this process, on whichever core is free: on a two-core machine it shares them with the nodes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.e2e import load_model, model_args
from lower.schedule import cache as schedule_cache
from lower.target import parse_target
from lower.tune import records
from lower.tune.runners import LocalCluster, RayRunner
from lower.tune.search import TuneOptions, tune
from lower.tune.space import tasks_of
from rewrite.frontends import from_torch
from rewrite.progress import say


def run(models: list[str], trials: int, nodes: list[int]) -> list[dict[str, Any]]:
    graphs = []
    for spec in models:
        module, inputs = load_model(spec)
        graphs.append((spec, from_torch(module, inputs, name=spec)))
    target = parse_target("llvm", 1)
    rows = []
    old = os.environ.get("EQSAT_CACHE_DIR")
    try:
        for n in nodes:
            with tempfile.TemporaryDirectory(prefix="eqsat-tune-ray-") as tmp:
                os.environ["EQSAT_CACHE_DIR"] = tmp
                records.forget()
                schedule_cache.clear_memo()
                say(f"{n} node(s): starting a local Ray cluster ...")
                with LocalCluster(nodes=n, cpus=1, env={"EQSAT_CACHE_DIR": tmp}):
                    runner = RayRunner(threads=1, pin_cores=True)
                    for spec, g in graphs:
                        tasks = tasks_of(g, target, spec)
                        t0 = time.perf_counter()
                        rep = tune(tasks, TuneOptions(trials=trials), runner)
                        rows.append(
                            {
                                "model": spec,
                                "nodes": n,
                                "seconds": time.perf_counter() - t0,
                                "trials": rep.trials,
                                "machines": rep.machines,
                                "retried": rep.retried,
                            }
                        )
                    runner.close()
    finally:
        if old is None:
            os.environ.pop("EQSAT_CACHE_DIR", None)
        else:
            os.environ["EQSAT_CACHE_DIR"] = old
        records.forget()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    first = {r["model"]: r["seconds"] for r in rows if r["nodes"] == rows[0]["nodes"]}
    out = [f"{'model':<22} {'nodes':>5} {'trials':>6} {'seconds':>8} {'ratio':>6}"]
    for r in rows:
        out.append(
            f"{r['model']:<22} {r['nodes']:>5} {r['trials']:>6} {r['seconds']:>8.1f} "
            f"{r['seconds'] / first[r['model']]:>6.2f}"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="eqsat bench tune-ray", description=__doc__)
    p.add_argument("--models", default="bert,squeezenet")
    p.add_argument("--trials", type=int, default=200)
    p.add_argument("--nodes", default="1,2")
    p.add_argument("--json")
    args = p.parse_args(argv)
    rows = run(model_args(args.models), args.trials, [int(x) for x in args.nodes.split(",")])
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
