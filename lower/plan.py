"""The kernels of a graph, planned: weight-only values folded, live nodes grouped into kernels, each kernel
lowered to loop IR and scheduled for the target (each schedule built once: ``lower.schedule.cache``).

    >>> p = plan_kernels(graph, parse_target("llvm"))          # doctest: +SKIP
    >>> [bk.kernel.name for bk in p.built]                      # doctest: +SKIP
    ['k0_matmul', 'k1_softmax']

The one planner every compile starts from: ``CompiledGraph`` (the runtime, any backend) goes on to hoist
constant stages, lay out its arena and compile; ``lower.cuda.graph_kernels`` (and so ``graph_ptx`` and
``rewrite.compile_ptx``) stops here, so the kernels a GPU-less snapshot test sees are the ones a GPU runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from lower.fusion import BuiltKernel, FusionPlan, build_kernel, plan_fusion
from lower.reshapes import sink_reshapes
from lower.schedule.cache import cached_schedule
from rewrite.ir.graph import Graph, Value
from rewrite.ir.target import Target


@dataclass
class KernelPlan:
    graph: Graph  # the graph the kernels compute: the one planned, reshapes sunk (``reshapes.sink_reshapes``)
    consts: dict[Value, torch.Tensor]  # every live weight-only value, on the kernels' device
    fusion: FusionPlan
    built: list[BuiltKernel]  # in launch order


def plan_kernels(
    graph: Graph,
    target: Target,
    *,
    grid: bool = False,
    device: torch.device | str = "cpu",
    fuse: bool = True,
    schedule: bool = True,
    on_kernel: Callable[[KernelPlan, int, BuiltKernel], None] | None = None,
) -> KernelPlan:
    """Plan ``graph``'s kernels for ``target``: ``grid`` as the target's backend runs them (``Backend.grid``),
    the folded constants placed on ``device`` (lowerings derive their packed constants from them there), no
    fusion without ``fuse``, no schedule without ``schedule``.  ``on_kernel(plan, k, kernel)`` is called as
    each kernel is scheduled, with the plan so far (its graph, constants and fusion whole; ``built`` up to
    ``k``): the runtime starts compiling kernel ``k`` while the next ones are lowered."""
    graph.validate()
    if fuse:
        graph = sink_reshapes(graph)
    # folded on the host (where the weights are and the refs build their own constants), then placed
    consts = {v: t.to(device) for v, t in graph.weight_values(graph.live()).items()}
    fusion = plan_fusion(graph, {v.node for v in consts}, fuse=fuse, grid=grid)
    built: list[BuiltKernel] = []
    plan = KernelPlan(graph, consts, fusion, built)
    for k, grp in enumerate(fusion.groups):
        name = f"k{k}_{graph.nodes[grp.anchor].op}"
        bk = build_kernel(
            graph, grp, consts, fusion.resolve, name=name, grid=grid, threads=target.threads, features=target.features
        )
        sched = cached_schedule(bk.kernel, bk.gemm, bk.const_names, target) if schedule else None
        if sched is not None:
            bk.kernel, bk.schedule = sched.kernel, sched
        built.append(bk)
        if on_kernel is not None:
            on_kernel(plan, k, bk)
    return plan


__all__ = ["KernelPlan", "plan_kernels"]
