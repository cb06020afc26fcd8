"""Cost-model fidelity: predicted vs measured time of candidate graphs sampled from e-graphs.

    python -m bench.fidelity --json fidelity.json        # or: eqsat bench fidelity
    eqsat bench fidelity --target llvm        # nasrnn, squeezenet, bert, vgg19 compiled (~30 min)
    eqsat bench fidelity --target llvm --models full:mobilenet_v2,full:shufflenet_v2,full:convnext

For each model, the e-graph is saturated under the default limits and up to
``--per-model`` distinct candidate graphs are decoded from random acyclic
selections (biased towards the greedy choice so candidates stay realistic).
Each candidate's cost is predicted and its run time measured (alternated,
median of repeats): with ``--target torch`` (default) by ``Graph.run`` and the
``--cost`` model; with ``--target llvm`` each candidate is compiled and its
compiled latency measured, and the prediction is the compiled cost model
(``rewrite.pipeline.compiled_cost``; it measures the e-graph's kernels first).
Prints the Spearman rank correlation and the median relative error, pooled over
all candidates and per model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from bench.e2e import load_model, model_args
from costs.analytical import AnalyticalCost
from costs.compiled import CompiledCost
from costs.fidelity import agreement, fidelity, spearman
from costs.measured import MeasuredCost, egraph_configs
from costs.model import graph_cost
from costs.timing import interleaved
from rewrite.egraph.saturate import Limits, saturate
from rewrite.extract.egraph_data import read_serialized
from rewrite.extract.greedy import greedy_choice, node_costs, select
from rewrite.extract.sample import sample_graphs
from rewrite.frontends import from_torch
from rewrite.pipeline import compile, compiled_cost
from rewrite.progress import counter, each
from rewrite.rulelang.loader import load_rules

# per target; with llvm every candidate is compiled, and resnet50 / inceptionv3 (hundreds of kernels each) take
# over 40 minutes for 30 candidates on 2 cores, so the compiled default is the four that finish in ~30 minutes
DEFAULT_MODELS = {
    "torch": ("nasrnn", "squeezenet", "bert", "resnet50", "inceptionv3"),
    "llvm": ("nasrnn", "squeezenet", "bert", "vgg19"),
}


CHUNK = 32  # compiled candidates held (and interleaved) at once at most; each chunk also times the input graph
CHUNK_BYTES = 1 << 30  # ... and about this many bytes of their weights (bert: 128 MB, held again packed)


def candidates(name: str, n: int, cost_model: Any, seed: int = 0) -> list[Any]:
    graph = from_torch(*load_model(name), name=name)
    data = read_serialized(saturate(graph, load_rules(), Limits()).serialized())
    if isinstance(cost_model, CompiledCost):  # measure every kernel extraction may pick, first
        # (not hasattr "profile": the analytical model's profile is its MachineProfile, a record)
        cost_model.profile(egraph_configs(data), counter(f"{name}: measure kernels"))
    ncost = node_costs(data, cost_model)
    prefer = select(data, greedy_choice(data, ncost), ncost)
    return [graph] + sample_graphs(data, graph, n - 1, seed=seed, prefer=prefer, p_random=0.3)


def measure_compiled(graphs: Sequence[Any], threads: int, repeats: int, warmup: int = 2) -> list[float]:
    """Latency of each graph compiled for llvm on ``threads`` threads: the reference's (``graphs[0]``) median time
    times the median, over rounds, of the graph's time over the reference's in the same round.  Candidates are
    compiled and timed interleaved in chunks (``CHUNK`` graphs, ``CHUNK_BYTES`` of weights), each chunk with the
    reference, so drift within and between chunks cancels in the ratios (``Timing.over``, as ``speedup`` takes
    them).

    Not a graph's fastest round: on a shared host a whole graph's fastest of a few rounds says whether one of them
    fell in a quiet spell more than how fast the graph is.  ShuffleNetV2's 30 candidates (1 thread), all timed
    together for 21 rounds: Spearman against the compiled cost model 0.50 on the fastest rounds, 0.93 on the
    medians and 0.90 on the per-round ratios; the fastest rounds scaled per chunk of 12 by the reference's own
    fastest round (this function before) gave 0.66, candidates of one chunk all 20% off those of the other."""
    ref = compile(graphs[0], "llvm", threads=threads)
    ref_in = graphs[0].random_inputs(0)
    ratio: list[float] = [1.0] * len(graphs)
    ref_samples: list[float] = []
    todo = list(range(1, len(graphs)))
    weight_bytes = sum(t.numel() * t.element_size() for t in graphs[0].weights.values())
    chunk = max(1, min(CHUNK, CHUNK_BYTES // max(weight_bytes, 1) - 1))
    tick = counter(f"measure {len(graphs)} compiled graphs", "graph")
    with torch.no_grad():
        for start in range(0, max(len(todo), 1), chunk):
            idx = todo[start : start + chunk]
            runs = [compile(graphs[i], "llvm", threads=threads) for i in idx]
            feeds = [graphs[i].random_inputs(0) for i in idx]
            fns = [lambda: ref(ref_in)] + [lambda cg=cg, x=x: cg(x) for cg, x in zip(runs, feeds, strict=True)]
            t = interleaved(fns, repeats, warmup).timings
            ref_samples += t[0].samples
            for i, ti in zip(idx, t[1:], strict=True):
                ratio[i] = ti.over(t[0]).median
            tick(min(start + chunk, len(todo)) + 1, len(graphs))
    ref_time = statistics.median(ref_samples) if ref_samples else 0.0
    return [r * ref_time for r in ratio]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.fidelity", description=__doc__.splitlines()[0])
    p.add_argument(
        "--models",
        help="comma-separated benchmark or zoo models (full:NAME: deployment size), full (every full:NAME) or "
        "FILE.py:FACTORY (default per target: "
        + "; ".join(f"{t}: {','.join(ms)}" for t, ms in DEFAULT_MODELS.items())
        + ")",
    )
    p.add_argument("--per-model", type=int, default=50, help="candidate graphs per model")
    p.add_argument("--repeats", type=int, default=21)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--cost", choices=("analytical", "measured"), default="analytical", help="with --target torch")
    p.add_argument(
        "--target",
        choices=("torch", "llvm"),
        default="torch",
        help="what candidates run on: torch eager (Graph.run), or compiled by eqsat for llvm (the compiled cost model)",
    )
    p.add_argument("--json", help="write spearman, median_rel_err, candidates and per-model results")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    model: Any
    if args.target == "llvm":
        model = compiled_cost("llvm", threads=args.threads)
    else:
        model = MeasuredCost(measure_missing=True) if args.cost == "measured" else AnalyticalCost()
    try:
        names = model_args(args.models or ",".join(DEFAULT_MODELS[args.target]))
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    pooled_pred: list[float] = []
    pooled_meas: list[float] = []
    per_model: dict[str, Any] = {}
    for name in each(names, "bench fidelity"):
        graphs = candidates(name, args.per_model, model)
        if args.target == "llvm":
            predicted = [graph_cost(g, model) for g in graphs]
            res = agreement(predicted, measure_compiled(graphs, args.threads, args.repeats))
        else:
            res = fidelity(
                graphs, model, repeats=args.repeats, on_progress=counter(f"measure {len(graphs)} graphs", "round")
            )
        per_model[name] = {k: res[k] for k in ("spearman", "median_rel_err", "candidates", "predicted", "measured")}
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
        "cost_model": "compiled" if args.target == "llvm" else args.cost,
        "target": args.target,
        "threads": args.threads,
        "per_model": per_model,
    }
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
