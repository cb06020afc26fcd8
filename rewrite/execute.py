"""Run an optimized graph through our own kernels and hold it against PyTorch eager.

>>> stats = compile_and_compare(result.graph, module, inputs)     # doctest: +SKIP
>>> stats["max_rel_err"] <= 1e-4, stats["speedup_vs_eager"]        # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import torch

from costs.timing import alternate
from rewrite.api import VerificationError, compile
from rewrite.graph import Graph

REL_TOL = 1e-4


def max_rel_err(ref: list[torch.Tensor], out: list[torch.Tensor]) -> float:
    """max |a - b| / max(1, max |a|) over all outputs."""
    worst = 0.0
    for a, b in zip(ref, out):
        scale = max(1.0, a.abs().max().item() if a.numel() else 0.0)
        worst = max(worst, (a - b).abs().max().item() / scale if a.numel() else 0.0)
    return worst


def compile_and_compare(
    graph: Graph, module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], target: str = "llvm", repeats: int = 10
) -> dict[str, Any]:
    """Compile ``graph``, check its outputs against ``module`` and time both, alternated.

    Raises ``VerificationError`` when the compiled graph's outputs differ from PyTorch's.
    """
    run = compile(graph, target=target)
    names = [n.attrs["name"] for n in graph.inputs]  # decode keeps the original input order
    feed = dict(zip(names, inputs))
    with torch.no_grad():
        ref = module(*inputs)
        refs = [ref] if isinstance(ref, torch.Tensor) else list(ref)
        outs = run(feed)
        err = max_rel_err(refs, outs)
        if err > REL_TOL:
            raise VerificationError(
                f"compiled graph '{graph.name}' differs from PyTorch: max relative error {err:.3g} > {REL_TOL}"
            )
        t_ours, t_eager = alternate([lambda: run(feed), lambda: module(*inputs)], repeats=repeats)
    return {
        "target": target,
        "compile_seconds": run.compile_seconds,
        "kernels": run.kernels,
        "latency_ms": t_ours * 1e3,
        "torch_eager_ms": t_eager * 1e3,
        "speedup_vs_eager": t_eager / t_ours,
        "max_rel_err": err,
        "torch_threads": torch.get_num_threads(),
        "plan": str(run.plan),
    }


def run_table(stats: dict[str, Any]) -> str:
    return (
        f"{stats['target']}: {stats['kernels']} kernels compiled in {stats['compile_seconds']:.2f}s; "
        f"latency {stats['latency_ms']:.3f} ms vs PyTorch eager {stats['torch_eager_ms']:.3f} ms "
        f"({stats['speedup_vs_eager']:.2f}x, {stats['torch_threads']} thread(s)); "
        f"max relative error {stats['max_rel_err']:.2e}"
    )
