"""Layout ONNX ops: ``Transpose``, ``Reshape``, ``Flatten``, ``Squeeze``, ``Unsqueeze``, ``Concat``, ``Split``,
``Slice``, ``Pad``, ``Expand``, ``Tile``, ``Resize``, and the constants eqsat's static shapes fold:
``Constant``, ``Shape``, ``Size``, ``ConstantOfShape``, ``Range``.

A layout op on constants is applied at import time (numpy), so shape arithmetic never
reaches the graph.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from rewrite.frontends.compose import resample
from rewrite.frontends.onnx.context import (
    NP_DTYPES,
    Ctx,
    Refuse,
    Tensor,
    handles,
    imports,
    norm_axes,
    only_attrs,
    opt_input,
)
from rewrite.ir.graph import Value
from rewrite.ir.ops.resize import COORDS, TORCH


@imports("transpose")
def _transpose(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"perm"})
    x = c.env[n.input[0]]
    perm = tuple(int(p) for p in a.get("perm", range(len(c.shape(x)) - 1, -1, -1)))
    if isinstance(x, np.ndarray):
        return [np.ascontiguousarray(np.transpose(x, perm))]
    return [c.add("transpose", [x], perm=perm)]


@handles("DepthToSpace", "SpaceToDepth")
def _depth_space(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """Channels to b x b pixel blocks and back: a reshape, a transpose and a reshape (DCR: depth, column,
    row order of the split channels; CRD: column, row, depth, as pixel_shuffle)."""
    only_attrs(a, {"blocksize", "mode"})
    x = c.env[n.input[0]]
    if len(c.shape(x)) != 4:
        raise Refuse(f"input of shape {c.shape(x)}: {n.op_type} takes N, C, H, W")
    nb, ch, h, w = c.shape(x)
    b = int(a["blocksize"])
    mode = a.get("mode", "DCR")
    if mode not in ("DCR", "CRD"):
        raise Refuse(f"mode '{mode}' is not one of 'DCR', 'CRD'")
    if n.op_type == "SpaceToDepth":
        if h % b or w % b:
            raise Refuse(f"height {h} and width {w} are not multiples of the block size {b}")
        split: tuple[int, ...] = (nb, ch, h // b, b, w // b, b)
        perm: tuple[int, ...] = (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4)
        out: tuple[int, ...] = (nb, ch * b * b, h // b, w // b)
    else:
        if ch % (b * b):
            raise Refuse(f"{ch} channels are not a multiple of the block size squared ({b * b})")
        cb = ch // (b * b)
        if mode == "DCR":
            split, perm = (nb, b, b, cb, h, w), (0, 3, 4, 1, 5, 2)
        else:
            split, perm = (nb, cb, b, b, h, w), (0, 1, 4, 2, 5, 3)
        out = (nb, cb, h * b, w * b)
    if isinstance(x, np.ndarray):
        return [np.ascontiguousarray(x.reshape(split).transpose(perm).reshape(out))]
    return [c.reshape(c.add("transpose", [c.value(c.reshape(x, split))], perm=perm), out)]


def _reshape_to(c: Ctx, x: Tensor, shape: Sequence[int]) -> list[Tensor]:
    if isinstance(x, np.ndarray):
        return [x.reshape(tuple(shape))]
    out = c.reshape(x, shape)
    # a reshape to the same shape is still a node, so every ONNX output is its own value
    return [out if out != x else c.add("identity", [x])]


@imports("reshape")
def _reshape(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"allowzero"})
    x = c.env[n.input[0]]
    xs = c.shape(x)
    target = c.ints(n.input[1], "shape")
    if a.get("allowzero", 0) and 0 in target:
        raise Refuse(f"allowzero=1 with a 0 in shape {target} makes an empty tensor")
    dims = [xs[i] if d == 0 else d for i, d in enumerate(target)]
    if dims.count(-1) > 1:
        raise Refuse(f"shape {target} has more than one -1")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or math.prod(xs) % known:
            raise Refuse(f"cannot infer -1 in shape {target} for input {xs}")
        dims[dims.index(-1)] = math.prod(xs) // known
    if math.prod(dims) != math.prod(xs) or any(d <= 0 for d in dims):
        raise Refuse(f"cannot reshape {xs} to {target}")
    return _reshape_to(c, x, dims)


@handles("Flatten")
def _flatten(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis"})
    x = c.env[n.input[0]]
    xs = c.shape(x)
    axis = int(a.get("axis", 1))
    axis = axis + len(xs) if axis < 0 else axis
    return _reshape_to(c, x, (math.prod(xs[:axis]), math.prod(xs[axis:])))


def _axes(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[int] | None:
    if "axes" in a:
        return [int(v) for v in a["axes"]]
    name = opt_input(n, 1)
    return c.ints(name, "axes") if name else None


@handles("Squeeze")
def _squeeze(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axes"})
    x = c.env[n.input[0]]
    xs = c.shape(x)
    axes = _axes(c, n, a)
    drop = {i for i, d in enumerate(xs) if d == 1} if axes is None else {ax % len(xs) for ax in axes}
    if any(xs[i] != 1 for i in drop):
        raise Refuse(f"cannot squeeze axes {sorted(drop)} of shape {xs}")
    return _reshape_to(c, x, [d for i, d in enumerate(xs) if i not in drop])


@handles("Unsqueeze")
def _unsqueeze(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axes"})
    x = c.env[n.input[0]]
    xs = list(c.shape(x))
    axes = _axes(c, n, a)
    if axes is None:
        raise Refuse("Unsqueeze needs axes")
    r = len(xs) + len(axes)
    norm = sorted(ax % r for ax in axes)
    if len(set(norm)) != len(norm):
        raise Refuse(f"axes {axes} repeat")
    for ax in norm:
        xs.insert(ax, 1)
    return _reshape_to(c, x, xs)


@imports("concat")
def _concat(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis"})
    if "axis" not in a:
        raise Refuse("Concat needs an axis")
    parts = [c.env[i] for i in n.input if i]
    axis = int(a["axis"])
    arrays = [p for p in parts if isinstance(p, np.ndarray)]
    if len(arrays) == len(parts) and len({p.dtype for p in arrays}) == 1:
        return [np.concatenate(arrays, axis=axis)]
    # an empty operand (a zero-length KV cache, an empty shape piece) adds nothing
    kept = [p for p in parts if 0 not in c.shape(p)]
    if len(kept) == 1:
        return [c.identity(kept[0])]
    return [c.add("concat", [c.value(p) for p in kept], axis=axis)]


@imports("split")
def _split(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis", "split", "num_outputs"})
    x = c.value(c.env[n.input[0]])
    xs = c.shape(x)
    axis = int(a.get("axis", 0)) % len(xs)
    outs = len(n.output)
    if "split" in a:
        sizes = [int(s) for s in a["split"]]
    elif opt_input(n, 1):
        sizes = c.ints(n.input[1], "split")
    elif "num_outputs" in a:
        k = int(a["num_outputs"])
        step = -(-xs[axis] // k)
        sizes = [min(step, xs[axis] - i * step) for i in range(k)]
    else:
        if xs[axis] % outs:
            raise Refuse(f"dimension {xs[axis]} does not split evenly into {outs} outputs")
        sizes = [xs[axis] // outs] * outs
    if len(sizes) != outs:
        raise Refuse(f"{len(sizes)} split sizes for {outs} outputs")
    if any(s < 0 for s in sizes) or sum(sizes) != xs[axis]:
        raise Refuse(f"split sizes {sizes} do not cover dimension {xs[axis]}")
    kept = [s for s in sizes if s]
    pieces = iter([c.identity(x)] if len(kept) == 1 else c.add_multi("split", [x], axis=axis, sizes=tuple(kept)))
    # an empty piece is known by its shape alone: a constant
    empty = np.zeros(xs[:axis] + (0,) + xs[axis + 1 :], NP_DTYPES[c.dtype(x)])
    return [next(pieces) if s else empty for s in sizes]


@imports("slice")
def _slice(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    x = c.env[n.input[0]]
    xs = c.shape(x)
    if c.opset < 10:
        only_attrs(a, {"starts", "ends", "axes"})
        starts, ends = list(a["starts"]), list(a["ends"])
        axes = list(a.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        only_attrs(a, set())
        starts, ends = c.ints(n.input[1], "starts"), c.ints(n.input[2], "ends")
        axes = c.ints(n.input[3], "axes") if opt_input(n, 3) else list(range(len(starts)))
        steps = c.ints(n.input[4], "steps") if opt_input(n, 4) else [1] * len(starts)
    axes = norm_axes(axes, len(xs))
    if isinstance(x, np.ndarray):  # any step: numpy slicing has ONNX's clamping rules
        index = [slice(None)] * len(xs)
        for ax, st, en, sp in zip(axes, starts, ends, steps):
            if sp == 0:
                raise Refuse("a step of 0")
            index[ax] = slice(st, en, sp)
        return [np.ascontiguousarray(x[tuple(index)])]
    out: Tensor = x
    for ax, st, en, sp in zip(axes, starts, ends, steps):
        if sp == 0:
            raise Refuse("a step of 0")
        dim = xs[ax]
        picked = np.arange(dim)[slice(st, en, sp)]  # numpy's clamping is ONNX's, for any step
        if picked.size == 0:  # an empty tensor is known by its shape alone: a constant
            return [np.zeros(xs[:ax] + (0,) + xs[ax + 1 :], NP_DTYPES[c.dtype(x)])]
        if sp == 1 and picked.size != dim:
            out = c.add("slice", [c.value(out)], axis=ax, start=int(picked[0]), end=int(picked[-1]) + 1)
        elif sp != 1:  # strided or reversed (Swin's patch merging, x[::-1]): the positions, gathered
            out = c.add("index_select", [c.value(out), c.value(np.ascontiguousarray(picked, dtype=np.int64))], axis=ax)
    return [out if out is not x else c.identity(x)]


@imports("pad")
def _pad(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"mode", "pads", "value"})
    mode = a.get("mode", "constant")
    if mode != "constant":
        raise Refuse(f"mode '{mode}' is not supported; eqsat pads with a constant only")
    x = c.env[n.input[0]]
    xs = c.shape(x)
    r = len(xs)
    if c.opset < 11:
        pads, value = list(a["pads"]), float(a.get("value", 0.0))
        axes = list(range(r))
    else:
        pads = c.ints(n.input[1], "pads")
        value = c.scalar(n.input[2], "constant_value") if opt_input(n, 2) else 0.0
        axes = norm_axes(c.ints(n.input[3], "axes"), r) if opt_input(n, 3) else list(range(r))
    k = len(axes)
    if len(pads) != 2 * k:
        raise Refuse(f"{len(pads)} pads for {k} axes")
    begin = {ax: 0 for ax in range(r)} | dict(zip(axes, pads[:k]))
    end = {ax: 0 for ax in range(r)} | dict(zip(axes, pads[k:]))
    out: Tensor = x
    for ax in range(r):  # negative pads crop: a slice first
        st, en = -min(begin[ax], 0), xs[ax] + min(end[ax], 0)
        if st >= en:
            raise Refuse(f"pads {pads} crop axis {ax} to nothing")
        if (st, en) != (0, xs[ax]):
            out = c.add("slice", [c.value(out)], axis=ax, start=st, end=en)
    grow = [max(v, 0) for ax in range(r) for v in (begin[ax], end[ax])]
    if not any(grow):
        return [out if out is not x else c.identity(x)]
    if value == 0.0 and r >= 2 and not any(grow[: 2 * (r - 2)]):  # the last two dims with zeros: pad2d
        return [c.add("pad2d", [c.value(out)], pads=tuple(grow[2 * (r - 2) :]))]
    return [c.add("pad", [c.value(out)], pads=tuple(grow), value=value)]


def _broadcast(c: Ctx, xs: Sequence[int], shape: Sequence[int]) -> tuple[int, ...]:
    r = max(len(xs), len(shape))
    a, b = (1,) * (r - len(xs)) + tuple(xs), (1,) * (r - len(shape)) + tuple(shape)
    out = []
    for p, q in zip(a, b):
        if p != q and 1 not in (p, q):
            raise Refuse(f"shape {tuple(shape)} does not broadcast with the input's {tuple(xs)}")
        out.append(q if p == 1 else p)
    return tuple(out)


@imports("expand")
def _expand(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    x = c.env[n.input[0]]
    out = _broadcast(c, c.shape(x), c.ints(n.input[1], "shape"))
    if isinstance(x, np.ndarray):
        return [np.ascontiguousarray(np.broadcast_to(x, out))]
    x = c.rank_up(x, len(out))
    if c.shape(x) == out:
        return [c.identity(x)]
    return [c.add("expand", [c.value(x)], shape=out)]


@handles("Tile")
def _tile(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    x = c.env[n.input[0]]
    reps = c.ints(n.input[1], "repeats")
    if len(reps) != len(c.shape(x)) or any(r < 1 for r in reps):
        raise Refuse(f"repeats {reps} for an input of shape {c.shape(x)}")
    if isinstance(x, np.ndarray):
        return [np.tile(x, reps)]
    out: Value = x
    for ax, k in enumerate(reps):
        if k > 1:
            out = c.add("concat", [out] * k, axis=ax)
    return [out if out is not x else c.identity(x)]


@imports("resize")
def _resize(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(
        a,
        {
            "mode",
            "coordinate_transformation_mode",
            "nearest_mode",
            "antialias",
            "axes",
            "keep_aspect_ratio_policy",
            "exclude_outside",
            "cubic_coeff_a",
            "extrapolation_value",
        },
    )
    if c.opset < 11:
        raise Refuse("Resize before opset 11 (no coordinate_transformation_mode) is not supported")
    if all(isinstance(c.env[i], np.ndarray) for i in n.input if i):  # a table of parameters: folded
        raise Refuse("every input is a constant: the reference evaluator folds it")
    x = c.value(c.env[n.input[0]])
    xs = c.shape(x)
    mode = a.get("mode", "nearest")
    coord = a.get("coordinate_transformation_mode", "half_pixel")
    if mode not in ("nearest", "linear", "cubic"):
        raise Refuse(f"mode '{mode}' is not one of nearest, linear, cubic")
    policy = a.get("keep_aspect_ratio_policy", "stretch")
    special = mode == "cubic" or a.get("antialias", 0) or a.get("exclude_outside", 0) or coord not in COORDS
    if (special or len(xs) != 4 or coord == TORCH) and policy == "stretch":
        return [_resize_by_taps(c, n, a, x)]
    if len(xs) != 4:
        raise Refuse(f"keep_aspect_ratio_policy '{policy}' with input shape {xs} (only NCHW)")
    axes = norm_axes([int(v) for v in a.get("axes", range(4))], 4)
    if special or coord == TORCH:
        raise Refuse(f"keep_aspect_ratio_policy '{policy}' with mode '{mode}', '{coord}', antialias, exclude_outside")
    out, scale = list(xs), [0.0] * 4  # scale 0: the op maps coordinates by out / in
    if opt_input(n, 3) and c.shape(c.const(n.input[3], "sizes")) != (0,):
        sizes = c.ints(n.input[3], "sizes")
        if policy == "stretch":
            for ax, size in zip(axes, sizes):
                out[ax] = size
        elif policy in ("not_larger", "not_smaller"):
            # the spec: one scale for every axis in axes, the sizes rounded half up from it
            ratios = [size / xs[ax] for ax, size in zip(axes, sizes)]
            common = min(ratios) if policy == "not_larger" else max(ratios)
            for ax in axes:
                out[ax], scale[ax] = int(common * xs[ax] + 0.5), common
        else:
            raise Refuse(f"keep_aspect_ratio_policy '{policy}' is not supported")
    elif opt_input(n, 2):
        scales = [float(v) for v in c.const(n.input[2], "scales").reshape(-1)]
        for ax, sc in zip(axes, scales):
            out[ax], scale[ax] = math.floor(xs[ax] * sc), sc
    else:
        raise Refuse("neither scales nor sizes are given")
    if out[:2] != list(xs[:2]) or min(out) <= 0:
        raise Refuse(f"resizing {xs} to {tuple(out)}: only H and W may change")
    if any(scale[ax] not in (0.0, 1.0) for ax in (0, 1)):
        raise Refuse(f"scales {scale[:2]} on N and C: only H and W may be resized")
    return [
        c.add(
            "resize",
            [x],
            size=tuple(out[2:]),
            mode="nearest" if mode == "nearest" else "bilinear",
            coord=coord,
            nearest_mode=a.get("nearest_mode", "round_prefer_floor"),
            scale_h=scale[2],
            scale_w=scale[3],
        )
    ]


def _axis_map(
    c: Ctx, n: onnx.NodeProto, a: dict[str, Any], n_in: int, given: tuple[str, float], roi: tuple[float, float] | None
) -> tuple[np.ndarray, np.ndarray]:
    """One axis of the resize as ``(matrix, offset)``: onnx's reference resizes unit vectors (and zeros)
    along that axis alone, in float64, with the node's attributes and that axis's scale or size."""
    from onnx import TensorProto
    from onnx import helper as oh
    from onnx.reference import ReferenceEvaluator

    kind, value = given
    attrs = {k: v for k, v in a.items() if k not in ("axes", "keep_aspect_ratio_policy")}
    ins = [
        "x",
        "roi" if roi is not None else "",
        "scales" if kind == "scales" else "",
        "sizes" if kind == "sizes" else "",
    ]
    while not ins[-1]:
        ins.pop()
    inits = []
    if roi is not None:
        inits.append(oh.make_tensor("roi", TensorProto.FLOAT, [2], list(roi)))
    if kind == "scales":
        inits.append(oh.make_tensor("scales", TensorProto.FLOAT, [1], [value]))
    else:
        inits.append(oh.make_tensor("sizes", TensorProto.INT64, [1], [int(value)]))
    node = oh.make_node("Resize", ins, ["y"], axes=[0], **attrs)
    graph = oh.make_graph(
        [node],
        "axis",
        [oh.make_tensor_value_info("x", TensorProto.DOUBLE, [n_in, n_in + 1])],
        [oh.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
        inits,
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", max(c.opset, 19))])
    basis = np.concatenate([np.eye(n_in), np.zeros((n_in, 1))], axis=1)
    (y,) = (np.asarray(t, np.float64) for t in ReferenceEvaluator(model).run(None, {"x": basis}))
    offset = y[:, n_in]
    return y[:, :n_in] - offset[:, None], offset


def _resize_by_taps(c: Ctx, n: onnx.NodeProto, a: dict[str, Any], x: Value) -> Value:
    """A resize eqsat's ``resize`` op does not cover (cubic, antialias, exclude_outside, tf_crop_and_resize,
    pytorch_half_pixel, ranks other than 4): separable, so one constant linear map per resized axis, found
    by the reference (``_axis_map``) and applied as gathers (``frontends.compose.resample``)."""
    xs = c.shape(x)
    rank = len(xs)
    axes = norm_axes([int(v) for v in a.get("axes", range(rank))], rank)
    if opt_input(n, 3) and c.shape(c.const(n.input[3], "sizes")) != (0,):
        given = [("sizes", float(v)) for v in c.ints(n.input[3], "sizes")]
    elif opt_input(n, 2):
        given = [("scales", float(v)) for v in c.const(n.input[2], "scales").reshape(-1)]
    else:
        raise Refuse("neither scales nor sizes are given")
    if len(given) != len(axes):
        raise Refuse(f"{len(given)} scales or sizes for {len(axes)} axes")
    rois: list[tuple[float, float] | None] = [None] * len(axes)
    if a.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        roi = [float(v) for v in c.const(n.input[1], "roi").reshape(-1)] if opt_input(n, 1) else []
        if len(roi) != 2 * len(axes):
            raise Refuse(f"roi {roi} must hold a start and an end for each of {len(axes)} axes")
        rois = [(roi[i], roi[len(axes) + i]) for i in range(len(axes))]
    e = c.emit()
    y = x
    for ax, g, roi_ax in zip(axes, given, rois):
        matrix, offset = _axis_map(c, n, a, xs[ax], g, roi_ax)
        if matrix.shape[0] == 0:
            raise Refuse(f"resizing axis {ax} of {xs[ax]} to nothing")
        if matrix.shape == (xs[ax], xs[ax]) and np.array_equal(matrix, np.eye(xs[ax])) and not offset.any():
            continue
        y = resample(e, y, ax, matrix, offset)
    return y if y is not x else c.identity(x)  # type: ignore[return-value]


@handles("Constant")
def _constant(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    if "value" in a:
        return [numpy_helper.to_array(a["value"])]
    if "value_float" in a:
        return [np.array(a["value_float"], np.float32)]
    if "value_floats" in a:
        return [np.array(a["value_floats"], np.float32)]
    if "value_int" in a:
        return [np.array(a["value_int"], np.int64)]
    if "value_ints" in a:
        return [np.array(a["value_ints"], np.int64)]
    raise Refuse(f"attribute(s) {sorted(a)} are not supported (sparse or string constants)")


@handles("Shape")
def _shape(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"start", "end"})
    s = c.shape(c.env[n.input[0]])
    start, end = int(a.get("start", 0)), a.get("end")
    return [np.array(s[start : None if end is None else int(end)], np.int64)]


@handles("Size")
def _size(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    return [np.array(math.prod(c.shape(c.env[n.input[0]])), np.int64)]


@handles("ConstantOfShape")
def _constant_of_shape(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"value"})
    fill = numpy_helper.to_array(a["value"]).reshape(-1) if "value" in a else np.zeros(1, np.float32)
    if fill.size != 1:
        raise Refuse(f"value has {fill.size} elements, not 1")
    return [np.full(c.ints(n.input[0], "shape"), fill[0], fill.dtype)]


@handles("Range")
def _range(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    start, limit, delta = (c.const(i, what).reshape(-1)[0] for i, what in zip(n.input, ("start", "limit", "delta")))
    if delta == 0:
        raise Refuse("delta is 0")
    count = max(math.ceil((float(limit) - float(start)) / float(delta)), 0)
    dtype = c.const(n.input[0], "start").dtype
    # start + i * delta, element by element as ONNX defines it
    return [(start + np.arange(count, dtype=dtype) * delta).astype(dtype)]


__all__: list[str] = []
