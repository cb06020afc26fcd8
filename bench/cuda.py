"""The GPU benchmarks of ``make gpu-check`` in one JSON file: ``bench e2e --target cuda`` and
``bench kernels --target cuda`` (defined in ``bench.e2e`` and ``bench.kernels``; this only runs both).

    python -m bench.cuda [--models bert,nasrnn] [--peers eager,inductor] [--cost compiled] [--out FILE]

Needs a CUDA device and torch built with CUDA.  Writes ``bench/results/cuda-<gpu>.json`` (the GPU's
slug, e.g. ``cuda-nvidia-h100-80gb-hbm3.json``): ``{"target": the GPU target's cache key, "gpu",
"e2e": {settings, rows, summary}, "kernels": {gemm, elementwise_chain, summary}}``.  Exits 1 when a
model does not match PyTorch (the file is written first), 2 without a device.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench import e2e, e2e_cuda, kernels
from bench.gpu_timing import Timer, cuda_event_ms, cuda_missing
from bench.models import MODELS
from lower import parse_target
from rewrite.ir.target import HALF_REL_TOL

# the models gpu-check runs by default: compiling one model's kernels takes 8-40 s today, and the compiled
# cost model first compiles and times each distinct e-node configuration of the saturated e-graph (default
# limits: nasrnn 29, bert 31, vgg19 91, resnext50 183, nasneta 183, resnet50 189, squeezenet 223,
# inceptionv3 513), so the three smallest e-graphs (a transformer, an RNN, a CNN) are what fits the ~8 minutes
# gpu-check has on an H100; --models all (with --cost analytical to skip the measuring) runs every model
GPU_CHECK_MODELS = ("bert", "nasrnn", "vgg19")
RESULTS = Path("bench/results")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.cuda", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(GPU_CHECK_MODELS), help="comma-separated built-in models, or 'all'")
    p.add_argument("--peers", default=",".join(e2e_cuda.CUDA_PEERS), help=f"subset of {','.join(e2e_cuda.CUDA_PEERS)}")
    p.add_argument("--cost", choices=e2e.COSTS, default=e2e.COSTS[0], help="the cost model e2e optimizes with")
    p.add_argument("--imported", action="store_true", help="e2e: also time each graph compiled as imported")
    p.add_argument("--dtype", default="float32", choices=("float32", *HALF_REL_TOL), help="e2e: models in this")
    p.add_argument("--repeats", type=int, default=20, help="timed rounds per contender")
    p.add_argument("--quick", action="store_true", help="kernels: 1024^3 GEMMs and a 2^20 chain only")
    p.add_argument("--out", type=Path, help=f"JSON file (default {RESULTS}/cuda-<gpu>.json)")
    return p


def main(argv: list[str] | None = None, timer: Timer = cuda_event_ms) -> int:
    args = parser().parse_args(argv)
    try:
        names = list(MODELS) if args.models == "all" else e2e.list_arg(args.models, list(MODELS), "model")
        peers = e2e.list_arg(args.peers, e2e_cuda.CUDA_PEERS, "peer")
    except ValueError as err:
        print(err, file=sys.stderr)
        return 2
    if args.repeats < 1:
        print(f"--repeats wants a positive integer, got {args.repeats}", file=sys.stderr)
        return 2
    if (missing := cuda_missing("python -m bench.cuda (make gpu-check)")) is not None:
        print(missing, file=sys.stderr)
        return 2
    target = parse_target("cuda")
    t0 = time.perf_counter()
    record_e2e = e2e_cuda.run_cuda(names, peers, args.repeats, args.cost, args.imported, timer, args.dtype)
    e2e_cuda.print_cuda_table(record_e2e["rows"], record_e2e["gpu"])
    t1 = time.perf_counter()
    record_kernels = kernels.run_cuda(args.quick, args.repeats, timer)
    t2 = time.perf_counter()
    out = args.out or RESULTS / f"{target.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "target": target.cache_key,
        "gpu": target.name,
        "seconds": {"e2e": t1 - t0, "kernels": t2 - t1},
        "e2e": record_e2e,
        "kernels": record_kernels,
    }
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out} (e2e {t1 - t0:.0f} s, kernels {t2 - t1:.0f} s)")
    return 0 if all(r["verified"] for r in record_e2e["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
