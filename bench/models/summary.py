"""Print fx node count, parameter count, output shape and forward time of every model.

Run as ``python -m bench.models.summary [name ...]``.
"""

from __future__ import annotations

import sys
import time

import torch
import torch.fx

from costs.timing import interleaved

from . import MODELS, load


def summarize(name: str, repeats: int = 3) -> dict:
    t0 = time.perf_counter()
    model, inputs = load(name)
    build_s = time.perf_counter() - t0
    nodes = len(torch.fx.symbolic_trace(model).graph.nodes)
    params = sum(p.numel() for p in model.parameters())
    with torch.no_grad():
        out = model(*inputs)
        forward = interleaved([lambda: model(*inputs)], repeats, warmup=0).timings[0]
    return {
        "name": name,
        "nodes": nodes,
        "params": params,
        "shape": tuple(out.shape),
        "build_s": build_s,
        "forward_ms": 1e3 * forward.median,
        "out_std": out.std().item(),
    }


def main(argv: list[str]) -> None:
    names = argv or list(MODELS)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'model':<12} {'fx nodes':>8} {'params':>12} {'output':>14} {'build s':>8} {'fwd ms':>8} {'out std':>9}")
    for name in names:
        r = summarize(name)
        print(
            f"{r['name']:<12} {r['nodes']:>8} {r['params']:>12,} {r['shape']!s:>14} "
            f"{r['build_s']:>8.2f} {r['forward_ms']:>8.1f} {r['out_std']:>9.3g}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
