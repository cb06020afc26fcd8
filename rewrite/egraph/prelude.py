"""The egglog prelude, generated from the op registry.

One constructor per op (attributes first, in registry order, then tensor
inputs), a ``shape`` function every tensor e-class gets, and a ``WeightOnly``
relation for sub-terms that depend only on weights (rule guards read both).

Two ops are encoded differently from the graph IR because egglog terms have a
fixed arity and a single output: ``concat`` is binary (n-ary concats nest to
the left) and ``split`` is not a constructor (each output is a ``slice``).

    >>> egg_name("global_avgpool")
    'GlobalAvgpool'
"""

from __future__ import annotations

import numpy as np

from rewrite.ir.ops import OPS, VARIADIC, AttrKind, OpDef

SORT = {AttrKind.INT: "i64", AttrKind.INTS: "IVec", AttrKind.FLOAT: "f64", AttrKind.STR: "String"}
NOT_ENCODED = {"split"}  # outputs become slices
MAX_RANK = 6


def egg_name(op: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in op.split("_"))


EGG_TO_OP = {egg_name(n): n for n in OPS}


def egg_arity(op: OpDef) -> int:
    return 2 if op.arity == VARIADIC else op.arity


def literal(kind: AttrKind, value: object) -> str:
    """An attribute value as egglog text."""
    if kind is AttrKind.INT:
        return str(int(value))  # type: ignore[arg-type]
    if kind is AttrKind.INTS:
        vals = list(value)  # type: ignore[call-overload]
        return f"(vec-of {' '.join(str(int(v)) for v in vals)})" if vals else "(vec-empty)"
    if kind is AttrKind.FLOAT:
        f = float(value)  # type: ignore[arg-type]
        if not np.isfinite(f):
            raise ValueError(f"non-finite float attribute {f!r} cannot be encoded")
        text = np.format_float_positional(f, unique=True, trim="0")
        return text if "." in text else text + ".0"
    s = str(value)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _vg(v: str, i: int | str) -> str:
    return f"(vec-get {v} {i})"


def _pool_dim(i: int, ceil: bool, dec: bool) -> tuple[str, str]:
    """(condition, size) of pooled spatial dim ``i`` for one ceil-mode case."""
    size = _vg("s0", 2 + i)
    k, s, p = _vg("a_kernel", i), _vg("a_stride", i), _vg("a_padding", i)
    span = f"(- (+ {size} (* 2 {p})) {k})"
    if not ceil:
        return "", f"(+ (/ {span} {s}) 1)"
    out = f"(+ (/ (+ {span} (- {s} 1)) {s}) 1)"
    last = f"(* (- {out} 1) {s})"
    lim = f"(+ {size} {p})"
    cond = f"(>= {last} {lim})" if dec else f"(< {last} {lim})"
    return cond, (f"(- {out} 1)" if dec else out)


def shape_cases(op: str) -> list[tuple[str, str]]:
    """(extra query conditions, output shape expression) for each rule of ``op``."""
    o = OPS[op]
    if op in ("input", "weight", "reshape"):
        return [("", "a_shape")]
    if o.arity == 2 and o.group.value == "elementwise":
        sa, sb = "s0", "s1"
        return [
            (
                f"(= (vec-length s0) {r}) (= (vec-length s1) {r})",
                f"(vec-of {' '.join(f'(max {_vg(sa, i)} {_vg(sb, i)})' for i in range(r))})",
            )
            for r in range(1, MAX_RANK + 1)
        ]
    if op == "matmul":
        cases = []
        for r in range(2, MAX_RANK + 1):
            batch = " ".join(f"(max {_vg('s0', i)} {_vg('s1', i)})" for i in range(r - 2))
            cases.append(
                (
                    f"(= (vec-length s0) {r}) (= (vec-length s1) {r}) (= {_vg('s0', r - 1)} {_vg('s1', r - 2)})",
                    f"(vec-of {batch} {_vg('s0', r - 2)} {_vg('s1', r - 1)})".replace("  ", " "),
                )
            )
        return cases
    if op == "linear":
        last = "(- (vec-length s0) 1)"
        return [(f"(= {_vg('s0', last)} {_vg('s1', 1)})", f"(vec-set s0 {last} {_vg('s1', 0)})")]
    if op == "conv2d":
        dims = []
        for i in range(2):
            span = (
                f"(- (+ {_vg('s0', 2 + i)} (* 2 {_vg('a_padding', i)})) "
                f"(+ (* {_vg('a_dilation', i)} (- {_vg('s1', 2 + i)} 1)) 1))"
            )
            dims.append(f"(+ (/ {span} {_vg('a_stride', i)}) 1)")
        return [
            (
                f"(= {_vg('s0', 1)} (* {_vg('s1', 1)} a_groups))",
                f"(vec-of {_vg('s0', 0)} {_vg('s1', 0)} {dims[0]} {dims[1]})",
            )
        ]
    if op == "transpose":
        return [
            (f"(= (vec-length s0) {r})", f"(vec-of {' '.join(_vg('s0', _vg('a_perm', i)) for i in range(r))})")
            for r in range(1, MAX_RANK + 1)
        ]
    if op == "concat":
        return [
            (
                "(= (vec-length s0) (vec-length s1))",
                f"(vec-set s0 a_axis (+ {_vg('s0', 'a_axis')} {_vg('s1', 'a_axis')}))",
            )
        ]
    if op == "slice":
        return [("", "(vec-set s0 a_axis (- a_end a_start))")]
    if op in ("maxpool2d", "avgpool2d"):
        cases = [
            (
                "(= a_ceil_mode 0)",
                f"(vec-of {_vg('s0', 0)} {_vg('s0', 1)} "
                f"{_pool_dim(0, False, False)[1]} {_pool_dim(1, False, False)[1]})",
            )
        ]
        for d0 in (False, True):
            for d1 in (False, True):
                (c0, h), (c1, w) = _pool_dim(0, True, d0), _pool_dim(1, True, d1)
                cases.append((f"(= a_ceil_mode 1) {c0} {c1}", f"(vec-of {_vg('s0', 0)} {_vg('s0', 1)} {h} {w})"))
        return cases
    if op == "conv2d_bias_act":  # conv2d's rule, and the bias is one value per output channel
        ((cond, result),) = shape_cases("conv2d")
        return [(f"{cond} (= (vec-length s2) 1) (= {_vg('s2', 0)} {_vg('s1', 0)})", result)]
    if op == "matmul_bias_act":  # matmul's rules, and the bias is one value per output column
        return [
            (f"{cond} (= (vec-length s2) 1) (= {_vg('s2', 0)} {_vg('s1', '(- (vec-length s1) 1)')})", result)
            for cond, result in shape_cases("matmul")
        ]
    if op == "pad2d":
        h, w = "(- (vec-length s0) 2)", "(- (vec-length s0) 1)"
        hp = f"(+ {_vg('s0', h)} (+ {_vg('a_pads', 0)} {_vg('a_pads', 1)}))"
        wp = f"(+ {_vg('s0', w)} (+ {_vg('a_pads', 2)} {_vg('a_pads', 3)}))"
        return [("(>= (vec-length s0) 2) (= (vec-length a_pads) 4)", f"(vec-set (vec-set s0 {h} {hp}) {w} {wp})")]
    if op == "global_avgpool":
        return [("", f"(vec-of {_vg('s0', 0)} {_vg('s0', 1)} 1 1)")]
    if o.group.value in ("elementwise", "normalization"):
        return [("", "s0")]
    raise KeyError(f"no egglog shape rule for op '{op}'")


def constructor_pattern(op: OpDef, out: str = "e") -> str:
    attrs = " ".join(f"a_{a.name}" for a in op.attrs)
    ins = " ".join(f"x{i}" for i in range(egg_arity(op)))
    return f"(= {out} ({egg_name(op.name)} {attrs} {ins}))".replace("  ", " ").replace(" )", ")")


def prelude() -> str:
    """Sorts, constructors, analysis functions and their rules, as egglog text."""
    lines = ["(sort IVec (Vec i64))", "(datatype T"]
    for op in OPS.values():
        if op.name in NOT_ENCODED:
            continue
        sig = [SORT[a.kind] for a in op.attrs] + ["T"] * egg_arity(op)
        lines.append(f"  ({egg_name(op.name)} {' '.join(sig)})")
    lines.append(")")
    # No merge: two shapes for one e-class means an unsound rule, and egglog stops loudly.
    lines += [
        "(function shape (T) IVec :no-merge)",
        "(relation WeightOnly (T))",
        # weight order: the first/last original weight inside a concat of weights
        "(function wfirst (T) i64 :merge (min old new))",
        "(function wlast (T) i64 :merge (max old new))",
        "(ruleset analysis)",
        "(ruleset rewrites)",
        "(rule ((= e (Concat ax a b)) (= f (wfirst a)) (= l (wlast b))) ((set (wfirst e) f) (set (wlast e) l))"
        ' :ruleset analysis :name "weight-order-concat")',
        # a zero-padded weight (an enlarged conv kernel) keeps its weight's order, so merges
        # of enlarged kernels stay canonical
        "(rule ((= e (Pad2d p a)) (= f (wfirst a)) (= l (wlast a))) ((set (wfirst e) f) (set (wlast e) l))"
        ' :ruleset analysis :name "weight-order-pad2d")',
    ]
    for op in OPS.values():
        if op.name in NOT_ENCODED:
            continue
        n = egg_arity(op)
        head = constructor_pattern(op) + "".join(f" (= s{i} (shape x{i}))" for i in range(n))
        for k, (cond, result) in enumerate(shape_cases(op.name)):
            lines.append(
                f'(rule ({head} {cond}) ((set (shape e) {result})) :ruleset analysis :name "shape-{op.name}-{k}")'
            )
        if op.name == "weight":
            lines.append(f'(rule ({constructor_pattern(op)}) ((WeightOnly e)) :ruleset analysis :name "const-weight")')
        elif n and op.name != "input":
            deps = " ".join(f"(WeightOnly x{i})" for i in range(n))
            lines.append(
                f'(rule ({constructor_pattern(op)} {deps}) ((WeightOnly e)) :ruleset analysis :name "const-{op.name}")'
            )
    return "\n".join(lines) + "\n"
