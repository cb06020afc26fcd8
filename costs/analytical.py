"""The analytical (roofline) cost model: a plain function of op, attributes and shapes.

    time = launch overhead + max(FLOPs / peak FLOP/s, bytes moved / bandwidth)

Each op's ``cost_class`` in the registry says how it is priced: views
(reshape, slice, identity) move no data and cost a view's overhead; transpose
copies; matmul-like and conv-like contractions have their own overheads and
peaks.  Weight-only sub-graphs are precomputed once, so extraction prices them
at zero; that decision lives in extraction, not here.

    >>> model = AnalyticalCost(MachineProfile("x", 1e11, 1e10, 5e-6, 1e-6, 5e-6, 5e-6, 5e10, 5e9))
    >>> round(model("matmul", {}, [(64, 1024), (1024, 1024)]) * 1e6)  # microseconds
    1347
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from costs.machine import MachineProfile, machine_profile
from rewrite.ir.ops import OPS, CostClass, Shape, numel
from rewrite.ir.ops.nn import IM2COL_OPS

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}


class AnalyticalCost:
    def __init__(self, profile: MachineProfile | None = None) -> None:
        self.profile = profile or machine_profile()

    def __call__(
        self, op: str, attrs: Mapping[str, object], in_shapes: Sequence[Shape], dtype: str = "float32"
    ) -> float:
        p = self.profile
        opdef = OPS[op]
        cls = opdef.cost_class
        if cls is CostClass.FREE:
            return 0.0
        if cls is CostClass.VIEW:
            return p.view_overhead
        outs = opdef.infer(list(in_shapes), attrs)
        flops = opdef.flops(list(in_shapes), outs, attrs)
        nbytes = DTYPE_BYTES[dtype] * (sum(numel(s) for s in in_shapes) + sum(numel(s) for s in outs))
        peak = p.peak_flops
        if cls is CostClass.MATMUL:  # fused variants launch like their contraction
            overhead = p.matmul_overhead
        elif cls is CostClass.CONV:  # convs run below matmul peak; depthwise far below
            overhead = p.conv_overhead
            groups = attrs.get("groups", 1)  # a blocked conv's groups are depthwise or 1
            depthwise = groups != 1 and (groups == in_shapes[0][1] or len(in_shapes[0]) == 5)
            peak = (p.depthwise_flops if depthwise else p.conv_flops) or peak
        else:
            overhead = p.op_overhead
        copy = 0.0
        if op in IM2COL_OPS:  # its im2col matrix [N * G, Cg * KH * KW, OH * OW], written before the GEMM reads it
            copy = (
                2 * DTYPE_BYTES[dtype] * numel(outs[0]) // in_shapes[1][0] * in_shapes[0][1] * numel(in_shapes[1][2:])
            )
        return overhead + max(flops / peak, nbytes / p.bandwidth) + copy / p.bandwidth
