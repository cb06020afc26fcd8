"""Cost-model fidelity: predicted vs measured time of candidate graphs sampled from e-graphs.

    python -m bench.fidelity --json fidelity.json        # or: eqsat bench fidelity

For each model, the e-graph is saturated under the default limits and up to
``--per-model`` distinct candidate graphs are decoded from random acyclic
selections (biased towards the greedy choice so candidates stay realistic).
Each candidate's cost is predicted and its run time measured with torch
(alternated, median of repeats).  Prints the Spearman rank correlation and the
median relative error, pooled over all candidates and per model.
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
from costs.analytical import AnalyticalCost
from costs.fidelity import fidelity, spearman
from costs.measured import MeasuredCost
from rewrite.egraph.saturate import Limits, saturate
from rewrite.extract.egraph_data import read_serialized
from rewrite.extract.greedy import greedy_choice, node_costs, select
from rewrite.extract.sample import sample_graphs
from rewrite.frontends import from_torch
from rewrite.progress import counter, each
from rewrite.rulelang.loader import load_rules

DEFAULT_MODELS = ("nasrnn", "squeezenet", "bert", "resnet50", "inceptionv3")


def candidates(name: str, n: int, cost_model: Any, seed: int = 0) -> list[Any]:
    graph = from_torch(*load(name), name=name)
    data = read_serialized(saturate(graph, load_rules(), Limits()).serialized())
    ncost = node_costs(data, cost_model)
    prefer = select(data, greedy_choice(data, ncost), ncost)
    return [graph] + sample_graphs(data, graph, n - 1, seed=seed, prefer=prefer, p_random=0.3)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.fidelity", description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(DEFAULT_MODELS))
    p.add_argument("--per-model", type=int, default=50, help="candidate graphs per model")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--cost", choices=("analytical", "measured"), default="analytical")
    p.add_argument("--json", help="write spearman, median_rel_err, candidates and per-model results")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    model: Any = MeasuredCost(measure_missing=True) if args.cost == "measured" else AnalyticalCost()
    names = [m for m in args.models.split(",") if m]
    bad = [m for m in names if m not in MODELS]
    if bad:
        print(f"unknown model(s) {bad}; known: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    pooled_pred: list[float] = []
    pooled_meas: list[float] = []
    per_model: dict[str, Any] = {}
    for name in each(names, "bench fidelity"):
        graphs = candidates(name, args.per_model, model)
        res = fidelity(
            graphs, model, repeats=args.repeats, on_progress=counter(f"measure {len(graphs)} graphs", "round")
        )
        per_model[name] = {k: res[k] for k in ("spearman", "median_rel_err", "candidates")}
        pooled_pred += res["predicted"]
        pooled_meas += res["measured"]
        print(
            f"{name}: {len(graphs)} candidates, spearman {res['spearman']:.3f}, "
            f"median relative error {res['median_rel_err']:.3f}",
            file=sys.stderr,
        )
    rel = sorted(abs(a - b) / b for a, b in zip(pooled_pred, pooled_meas))
    out = {
        "spearman": spearman(pooled_pred, pooled_meas),
        "median_rel_err": rel[len(rel) // 2],
        "candidates": len(rel),
        "cost_model": args.cost,
        "threads": args.threads,
        "per_model": per_model,
    }
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
