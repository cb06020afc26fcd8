"""Random well-typed graphs for the differential fuzzer, from a seed.

A graph is grown one *move* at a time from a pool of values (inputs, weights,
earlier results).  Moves cover the whole op set — elementwise ops are taken
from the registry, so a new elementwise op is fuzzed without a change here —
and the shapes the rules target: matmuls sharing an input, concat then slice,
conv → batchnorm → relu, scalars around matmuls, transposes, and identity-like
ops (identity perm, ``smul`` by 1, reshape to the same shape, full-axis
slices, ``relu(relu(x))``, two identical nodes).  Outputs are a few values,
sometimes the same value twice, sometimes an input.

``random_inputs`` draws fresh inputs for a graph, with inf / -inf / NaN
sprinkled in on some seeds.

    >>> g = random_graph(3)
    >>> g.validate(); 1 <= len(g.outputs) <= 4
    True
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import torch

from lower.ir.nodes import TRIG_FUNCS
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.dtypes import ANY_SAME, FLOAT, HALF, NUMERIC
from rewrite.ir.errors import GraphError, ShapeError
from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import ACTS, OPS, Group

Shape = tuple[int, ...]


# Step functions are not drawn on floats: a rewrite may change its input by an ulp (a scale moved through an
# add), which moves a step by a whole unit (float mod: by the divisor), and the oracle could not tell that from
# a wrong rewrite.  tests/lower checks their kernels exactly; int_arith draws mod and idiv on int64 values.
STEPS = frozenset({"floor", "ceil", "round", "sign", "mod"})
# The trigonometric and hyperbolic functions are a move of their own (nine more unary ops would crowd out the
# rest); those defined on part of the line get, half the time, a value clamped into their domain (else NaN outside)
TRIG = TRIG_FUNCS  # the loop IR's list of them, each also the registry op of its name
TRIG_DOMAIN = {"asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9), "acosh": (1.1, 1e30)}


def _unary_elementwise() -> list[str]:
    """Registry ops that take one tensor and no required attribute (relu, tanh, ...)."""
    return sorted(
        n
        for n, d in OPS.items()
        if d.group is Group.ELEMENTWISE
        and n not in STEPS
        and n not in TRIG
        and d.arity == 1
        and all(a.default is not None for a in d.attrs)
        and d.dtype_rule in (FLOAT, ANY_SAME, NUMERIC)
    )


def _binary_elementwise() -> list[str]:
    return sorted(
        n
        for n, d in OPS.items()
        if d.group is Group.ELEMENTWISE
        and n not in STEPS
        and d.arity == 2
        and d.dtype_rule in (FLOAT, ANY_SAME, NUMERIC)
    )


class _Grower:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        # picks the Winograd form of some 3x3 convs; its own stream, so the other seeds' graphs stay as they were
        self.wrng = random.Random(seed + 7_000_003)
        # adds an LRN after some pools; its own stream too (graphs change only from where it adds one)
        self.lrng = random.Random(seed + 11_000_027)
        self.gen = torch.Generator().manual_seed(seed)
        self.b = GraphBuilder(f"fuzz{seed}")
        self.pool: list[Value] = []
        self.n_inputs = 0
        self.n_weights = 0

    # ------------------------------------------------------------ sources
    def shape(self, rank: int | None = None, lo: int = 1, hi: int = 6) -> Shape:
        r = rank if rank is not None else self.rng.choice((1, 2, 2, 3, 4))
        return tuple(self.rng.randint(lo, hi) for _ in range(r))

    def input(self, shape: Shape) -> Value:
        v = self.b.input(f"x{self.n_inputs}", shape)
        self.n_inputs += 1
        self.pool.append(v)
        return v

    def weight(self, shape: Shape, positive: bool = False, zeros: bool = False) -> Value:
        t = torch.randn(shape, generator=self.gen)
        if positive:
            t = t.abs() + 0.5
        if zeros and t.numel() > 1:  # a divisor with exact zeros: inf and NaN downstream
            t.view(-1)[:: max(2, t.numel() // 2)] = 0.0
        v = self.b.weight(f"w{self.n_weights}", t)
        self.n_weights += 1
        return v

    def pick(self, want: Callable[[Shape], bool] = lambda s: True) -> Value | None:
        fits = [v for v in self.pool if want(self.b.shape(v))]
        if not fits:
            return None
        recent = fits[-4:]  # prefer recent values: deeper graphs
        return self.rng.choice(recent if self.rng.random() < 0.7 else fits)

    def pick_or_input(self, want: Callable[[Shape], bool], make: Callable[[], Shape]) -> Value:
        v = self.pick(want)
        return v if v is not None and self.rng.random() < 0.8 else self.input(make())

    def emit(self, v: Value) -> Value:
        self.pool.append(v)
        return v

    # ------------------------------------------------------------ moves
    def unary(self) -> None:
        x = self.pick_or_input(lambda s: True, self.shape)
        op = self.rng.choice([*_unary_elementwise(), "smul", "smul", "relu_relu", "twin"])
        if op == "smul":
            s = self.rng.choice((1.0, 2.0, -1.5, 0.5, 0.0, round(self.rng.uniform(-3, 3), 3)))
            self.emit(self.b.smul(x, scalar=s))
        elif op == "relu_relu":
            self.emit(self.b.relu(self.b.relu(x)))
        elif op == "twin":  # the same op on the same value twice: one e-class in the e-graph
            a, c = self.b.tanh(x), self.b.tanh(x)
            self.emit(a)
            self.emit(c)
        else:
            self.emit(self.b.op(op, x))

    def trig(self) -> None:
        x = self.pick_or_input(lambda s: True, self.shape)
        op = self.rng.choice(TRIG)
        if op in TRIG_DOMAIN and self.rng.random() < 0.5:
            lo, hi = TRIG_DOMAIN[op]
            x = self.b.clamp(x, min=lo, max=hi)
        self.emit(self.b.op(op, x))

    def binary(self) -> None:
        x = self.pick_or_input(lambda s: True, self.shape)
        sx = self.b.shape(x)
        op = self.rng.choice(_binary_elementwise())
        r = self.rng.random()
        if r < 0.35:
            y = self.pick(lambda s: s == sx) or self.weight(sx, positive=op == "div", zeros=op == "div" and r < 0.1)
        elif r < 0.55:  # broadcast: a size-1 dim on one side
            bs = tuple(1 if self.rng.random() < 0.5 else d for d in sx)
            y = self.weight(bs, positive=op == "div")
        elif r < 0.7:
            y = x  # x op x
        else:
            y = self.input(sx)
        if self.rng.random() < 0.5:
            x, y = y, x
        self.emit(self.b.op(op, x, y))

    def matmul(self) -> None:
        x = self.pick_or_input(lambda s: 2 <= len(s) <= 3, lambda: self.shape(self.rng.choice((2, 3))))
        sx = self.b.shape(x)
        n_users = self.rng.choice((1, 1, 2, 3))  # matmuls sharing an input: the merge rules' pattern
        for _ in range(n_users):
            w_shape = (1,) * (len(sx) - 2) + (sx[-1], self.rng.randint(1, 6))
            w = self.weight(w_shape)
            if self.rng.random() < 0.3:
                w = self.b.smul(w, scalar=self.rng.choice((2.0, -0.5)))  # a scalar around a matmul
            y = self.b.matmul(x, w)
            if self.rng.random() < 0.3:
                y = self.b.smul(y, scalar=self.rng.choice((0.5, 3.0)))
            self.emit(y)

    def matmul_fused(self) -> None:
        x = self.pick_or_input(lambda s: len(s) == 2, lambda: self.shape(2))
        k, n = self.b.shape(x)[-1], self.rng.randint(1, 6)
        w, bias = self.weight((k, n)), self.weight((n,))
        if self.rng.random() < 0.5:
            act = self.rng.choice(tuple(ACTS))
            self.emit(self.b.matmul_bias_act(x, w, bias, act=act))
        else:
            self.emit(self.b.op("linear", x, self.weight((n, k)), bias))

    def transpose(self) -> None:
        x = self.pick_or_input(lambda s: len(s) >= 2, lambda: self.shape(self.rng.choice((2, 3))))
        r = len(self.b.shape(x))
        perm = list(range(r))
        if self.rng.random() < 0.8:
            self.rng.shuffle(perm)
        self.emit(self.b.transpose(x, perm=tuple(perm)))

    def reshape(self) -> None:
        x = self.pick_or_input(lambda s: True, self.shape)
        s = self.b.shape(x)
        if self.rng.random() < 0.3:
            target = s  # a reshape to the same shape
        else:
            n = math.prod(s)
            dims, rest = [], n
            for _ in range(self.rng.randint(0, 2)):
                divs = [d for d in range(1, rest + 1) if rest % d == 0]
                d = self.rng.choice(divs)
                dims.append(d)
                rest //= d
            target = (*dims, rest)
        self.emit(self.b.reshape(x, shape=tuple(target)))

    def concat_slice(self) -> None:
        x = self.pick_or_input(lambda s: len(s) >= 1, self.shape)
        s = self.b.shape(x)
        axis = self.rng.randrange(len(s))
        parts = [x]
        for _ in range(self.rng.randint(1, 2)):
            other = list(s)
            other[axis] = self.rng.randint(1, 4)
            parts.append(self.pick(lambda t, o=tuple(other): t == o) or self.input(tuple(other)))
        self.rng.shuffle(parts)
        c = self.b.concat(*parts, axis=axis)
        if self.rng.random() < 0.7:  # take one side (or a span) back out: concat -> slice
            sizes = [self.b.shape(p)[axis] for p in parts]
            i = self.rng.randrange(len(parts))
            start = sum(sizes[:i])
            end = start + sizes[i] if self.rng.random() < 0.7 else self.rng.randint(start + 1, sum(sizes))
            c = self.b.slice(c, axis=axis, start=start, end=end)
        self.emit(c)

    def split_or_slice(self) -> None:
        x = self.pick_or_input(lambda s: max(s) >= 2, lambda: self.shape(lo=2))
        s = self.b.shape(x)
        axis = self.rng.choice([i for i, d in enumerate(s) if d >= 2])
        d = s[axis]
        if self.rng.random() < 0.5:
            cut = self.rng.randint(1, d - 1)
            for v in self.b.split(x, axis, (cut, d - cut)):
                self.emit(v)
        else:
            start, end = (0, d) if self.rng.random() < 0.3 else sorted(self.rng.sample(range(d + 1), 2))
            self.emit(self.b.slice(x, axis=axis, start=start, end=end))

    def conv(self) -> None:
        x = self.pick_or_input(
            lambda s: len(s) == 4 and s[2] >= 3 and s[3] >= 3,
            lambda: (self.rng.randint(1, 2), self.rng.randint(1, 4), self.rng.randint(3, 7), self.rng.randint(3, 7)),
        )
        c = self.b.shape(x)[1]
        groups = c if (c > 1 and self.rng.random() < 0.2) else 1
        out_c = groups * self.rng.randint(1, 3) if groups > 1 else self.rng.randint(1, 5)
        k = self.rng.choice((1, 3))
        pad = self.rng.choice((0, k // 2))
        stride = self.rng.choice((1, 1, 2))
        wt = self.weight((out_c, c // groups, k, k))
        attrs = {"stride": (stride, stride), "padding": (pad, pad), "groups": groups}
        wino = k == 3 and stride == 1 and groups == 1 and self.wrng.random() < 0.6
        blocked = not wino and (groups == 1 or out_c == groups) and self.wrng.random() < 0.3
        # the block form (rules/im2col.rules' right side), where it differs from conv2d's: padded or strided
        im2col = not (wino or blocked) and (pad or (stride > 1 and k > 1)) and self.wrng.random() < 0.4
        conv = "conv2d_im2col" if im2col else "conv2d"
        if self.rng.random() < 0.3:
            act = self.rng.choice(("none", "relu", "tanh"))
            bias = self.weight((out_c,))
            if blocked:
                y = self._blocked(x, wt, bias, attrs, act)
            else:
                y = (
                    self._winograd(x, wt, bias, pad, act)
                    if wino
                    else self.b.op(f"{conv}_bias_act", x, wt, bias, act=act, **attrs)
                )
        elif blocked:
            y = self._blocked(x, wt, None, attrs, "none")
        else:
            y = self._winograd(x, wt, None, pad, "none") if wino else self.b.op(conv, x, wt, **attrs)
        if self.rng.random() < 0.5:  # conv -> batchnorm -> relu: the fusion rules' pattern
            ch = (out_c,)
            y = self.b.batchnorm(
                y, self.weight(ch), self.weight(ch), self.weight(ch), self.weight(ch, positive=True), eps=1e-5
            )
            if self.rng.random() < 0.7:
                y = self.b.relu(y)
        self.emit(y)

    def _winograd(self, x: Value, wt: Value, bias: Value | None, pad: int, act: str) -> Value:
        """A 3x3 stride-1 conv in its Winograd form (rules/winograd.rules' right side)."""
        _, _, h, w = self.b.shape(x)
        u = self.b.op("winograd_weight", wt)
        if self.wrng.random() < 0.5:  # the tiles-innermost form (the -t rules): [36, C, N*T] read column-major
            m = self.b.op("matmul_at", self.b.op("winograd_input_t", x, padding=(pad, pad)), u)
        else:
            m = self.b.op("matmul", self.b.op("winograd_input", x, padding=(pad, pad)), u)
        out = (h + 2 * pad - 2, w + 2 * pad - 2)
        if bias is None:
            return self.b.op("winograd_output", m, out=out)
        return self.b.op("winograd_output_bias_act", m, bias, out=out, act=act)

    def _blocked(self, x: Value, wt: Value, bias: Value | None, attrs: dict, act: str) -> Value:
        """A conv in the blocked layout NCHWc16 (rules/blocked.rules' right side), channels not whole blocks."""
        xb, wb = self.b.op("to_blocked", x, block=16), self.b.op("blocked_weight", wt, block=16)
        if bias is None:
            y = self.b.op("conv2d_blocked", xb, wb, **attrs)
        else:
            y = self.b.op("conv2d_blocked_bias_act", xb, wb, bias, act=act, **attrs)
        return self.b.op("from_blocked", y, channels=self.b.shape(wt)[0])

    def pool(self) -> None:
        x = self.pick_or_input(
            lambda s: len(s) == 4 and s[2] >= 2 and s[3] >= 2,
            lambda: (1, self.rng.randint(1, 4), self.rng.randint(2, 7), self.rng.randint(2, 7)),
        )
        kind = self.rng.choice(("maxpool2d", "avgpool2d", "global_avgpool", "pad2d"))
        if kind == "global_avgpool":
            self.emit(self.b.global_avgpool(x))
        elif kind == "pad2d":
            self.emit(self.b.pad2d(x, pads=tuple(self.rng.randint(0, 1) for _ in range(4))))
        else:
            k = self.rng.randint(1, 2)
            attrs = {"kernel": (k, k), "stride": (k, k), "padding": (0, 0), "ceil_mode": self.rng.randint(0, 1)}
            if self.wrng.random() < 0.3:  # in the blocked layout (rules/blocked.rules' right side)
                y = self.b.op(f"{kind}_blocked", self.b.op("to_blocked", x, block=16), **attrs)
                self.emit(self.b.op("from_blocked", y, channels=self.b.shape(x)[1]))
            else:
                self.emit(self.b.op(kind, x, **attrs))
        if self.lrng.random() < 0.2:  # local response normalization over the channels, ONNX's window
            size = self.lrng.randint(1, 5)
            alpha, beta = self.lrng.choice((1e-4, 0.5, 2.0)), self.lrng.choice((0.75, 0.5, 1.0))
            self.emit(self.b.op("lrn", x, size=size, alpha=alpha, beta=beta, bias=self.lrng.choice((1.0, 2.0))))

    def norm(self) -> None:
        x = self.pick_or_input(lambda s: len(s) >= 2, lambda: self.shape(self.rng.choice((2, 3))))
        s = self.b.shape(x)
        if self.rng.random() < 0.5:
            self.emit(self.b.softmax(x, axis=self.rng.randrange(len(s))))
        else:
            self.emit(self.b.layernorm(x, self.weight((s[-1],)), self.weight((s[-1],)), eps=1e-5))

    def indexing(self) -> None:
        """embedding / index_select / gather of a float value by an int64 input (valid indices drawn
        by ``Graph.random_inputs``/``random_inputs`` below)."""
        op = self.rng.choice(("embedding", "index_select", "gather"))
        k = self.n_inputs
        self.n_inputs += 1
        if op == "embedding":
            table = self.weight((self.rng.randint(2, 9), self.rng.randint(1, 6)))
            ids = self.b.input(f"x{k}", self.shape(self.rng.choice((1, 2))), dtype="int64")
            self.emit(self.b.embedding(table, ids))
            return
        x = self.pick_or_input(lambda s: True, self.shape)
        sx = self.b.shape(x)
        ax = self.rng.randrange(len(sx))
        if op == "index_select":
            idx = self.b.input(f"x{k}", (self.rng.randint(1, 5),), dtype="int64")
        else:
            idx = self.b.input(f"x{k}", tuple(self.rng.randint(1, d) for d in sx), dtype="int64")
        self.emit(self.b.op(op, x, idx, axis=ax))

    def select(self) -> None:
        """A comparison feeding where / masked_fill (through logical ops and casts): bools stay inside."""
        x = self.pick_or_input(lambda s: True, self.shape)
        sx = self.b.shape(x)
        cmp = self.rng.choice(("eq", "ne", "lt", "le", "gt", "ge"))
        m = self.b.op(cmp, x, self.weight(tuple(1 if self.rng.random() < 0.5 else d for d in sx)))
        r = self.rng.random()
        if r < 0.2:
            m = self.b.logical_not(m)
        elif r < 0.4:
            m = self.b.op(self.rng.choice(("logical_and", "logical_or")), m, self.b.op("gt", x, x))
        elif r < 0.5:
            m = self.b.cast(self.b.cast(m, dtype="int64"), dtype="bool")
        choice = self.rng.random()
        if choice < 0.4:
            self.emit(self.b.where(m, x, self.weight(sx)))
        elif choice < 0.8:
            self.emit(self.b.masked_fill(x, m, value=self.rng.choice((0.0, -1e9, float("-inf")))))
        else:
            self.emit(self.b.cast(m, dtype="float32"))

    # ------------------------------------------------------------ activations, reductions, norms, resize
    def clamp_pow(self) -> None:
        x = self.pick_or_input(lambda s: True, self.shape)
        if self.rng.random() < 0.5:
            lo = self.rng.choice((0.0, -1.0, -0.5))
            self.emit(self.b.op("clamp", x, min=lo, max=self.rng.choice((lo, 1.0, 6.0))))
        else:
            self.emit(self.b.op("pow", x, exponent=self.rng.choice((2.0, 3.0, 0.5, -1.0, 1.5))))

    def reduce(self) -> None:
        x = self.pick_or_input(lambda s: True, self.shape)
        r = len(self.b.shape(x))
        op = self.rng.choice(("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_var"))
        axes = tuple(sorted(self.rng.sample(range(r), self.rng.randint(1, r))))
        keep = 1 if len(axes) == r else self.rng.randint(0, 1)  # no rank-0 results: other moves index dims
        attrs: dict[str, object] = {"axes": axes, "keepdim": keep}
        if op == "reduce_var":
            attrs["correction"] = self.rng.choice((0, 1))
        self.emit(self.b.op(op, x, **attrs))

    def layout_norm(self) -> None:
        kind = self.rng.choice(("expand", "pad", "resize", "adaptive_avgpool", "groupnorm", "rmsnorm"))
        if kind == "expand":
            x = self.pick_or_input(lambda s: 1 in s, lambda: (*self.shape(), 1))
            out = tuple(self.rng.randint(1, 4) if d == 1 else d for d in self.b.shape(x))
            self.emit(self.b.op("expand", x, shape=out))
        elif kind == "pad":
            x = self.pick_or_input(lambda s: True, self.shape)
            pads = tuple(self.rng.randint(0, 2) for _ in range(2 * len(self.b.shape(x))))
            self.emit(self.b.op("pad", x, pads=pads, value=self.rng.choice((0.0, -1.0, 2.5))))
        elif kind in ("resize", "adaptive_avgpool"):
            x = self.pick_or_input(
                lambda s: len(s) == 4,
                lambda: (1, self.rng.randint(1, 3), self.rng.randint(1, 6), self.rng.randint(1, 6)),
            )
            size = (self.rng.randint(1, 8), self.rng.randint(1, 8))
            if kind == "resize":
                mode = self.rng.choice(("nearest", "bilinear"))
                self.emit(self.b.op("resize", x, size=size, mode=mode, align_corners=self.rng.randint(0, 1)))
            else:
                self.emit(self.b.op("adaptive_avgpool", x, output_size=size))
        elif kind == "groupnorm":
            x = self.pick_or_input(lambda s: len(s) >= 3, lambda: self.shape(self.rng.choice((3, 4))))
            c = self.b.shape(x)[1]
            groups = self.rng.choice([g for g in range(1, c + 1) if c % g == 0])
            self.emit(self.b.op("groupnorm", x, self.weight((c,)), self.weight((c,)), num_groups=groups, eps=1e-5))
        else:
            x = self.pick_or_input(lambda s: len(s) >= 1, self.shape)
            self.emit(self.b.op("rmsnorm", x, self.weight(self.b.shape(x)[-1:]), eps=1e-6))

    def int_arith(self) -> None:
        """int64 arithmetic (position ids, hash buckets): a mask or truncated value cast to int64, adds, subs,
        muls, floor/trunc divisions and remainders with int constants (zero among them) or itself, cast back
        to float32.  The rules must leave int values alone."""
        x = self.pick_or_input(lambda s: True, self.shape)
        sx = self.b.shape(x)
        if self.rng.random() < 0.5:
            v = self.b.cast(self.b.gt(x, self.weight((1,) * len(sx))), dtype="int64")
        else:  # |x| * 3 truncated: small non-negative ints (NaN and inf have no int: kept out)
            clean = self.b.where(self.b.op("ne", x, x), self.weight((1,) * len(sx)), x)
            v = self.b.cast(
                self.b.clamp(self.b.smul(self.b.op("abs", clean), scalar=3.0), min=0.0, max=50.0), dtype="int64"
            )
        for _ in range(self.rng.randint(1, 3)):
            op = self.rng.choice(("add", "sub", "mul", "idiv", "mod"))
            if self.rng.random() < 0.4:
                other = v
            else:
                k = tuple(1 if self.rng.random() < 0.5 else d for d in sx)
                t = torch.randint(-3, 4, k, generator=self.gen)
                other = self.b.weight(f"w{self.n_weights}", t)
                self.n_weights += 1
            attrs = {"mode": self.rng.choice(("floor", "trunc"))} if op in ("idiv", "mod") else {}
            v = self.b.op(op, v, other, **attrs)
        if self.rng.random() < 0.3:  # an int64 reduction (a mask's count), kept as a size-1 dim
            op = self.rng.choice(("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"))
            v = self.b.op(op, v, axes=(len(sx) - 1,), keepdim=1)
        self.emit(self.b.cast(v, dtype="float32"))

    def half_round(self) -> None:
        """A fresh input rounded to float16 or bfloat16, perhaps moved while it is one (a transpose, a slice or a
        reshape of the 16-bit values), read back as float32.  Rounding is a step function, so it reads an input
        only: upstream of it nothing a rule may reassociate could move a value across a step."""
        x = self.input(self.shape())
        sx = self.b.shape(x)
        h = self.b.cast(x, dtype=self.rng.choice(HALF))
        r = self.rng.random()
        if r < 0.3 and len(sx) >= 2:
            h = self.b.op("transpose", h, perm=tuple(reversed(range(len(sx)))))
        elif r < 0.5:
            h = self.b.op("reshape", h, shape=(math.prod(sx),))
        self.emit(self.b.cast(h, dtype="float32"))

    def quantized_matmul(self) -> None:
        """A fresh input quantized to uint8 (a saturating cast: a step function, so it reads an input only, as
        ``half_round``), times int8 weights in ``matmul_integer`` (K a multiple of 4 or not: the packed and the
        plain kernels) or ``conv2d_integer``, the int32 sums read back as float32 and scaled."""
        conv = self.rng.random() < 0.4  # or conv2d_integer: its im2col panels, or a grouped plain loop
        k = self.rng.choice((4, 8, 12, 5, 7))
        lead = (1, self.rng.randint(3, 7), self.rng.randint(3, 7)) if conv else self.shape(self.rng.choice((2, 3)))[:-1]
        x = self.input((lead[0], k, *lead[1:]) if conv else (*lead, k))
        zp = self.rng.choice((0, 128, 255))
        shifted = self.b.add(self.b.smul(x, scalar=40.0), self.weight_value(float(zp)))
        q = self.b.cast(shifted, dtype="uint8")
        if conv:
            groups = self.rng.choice((1, 1, k))
            kh, kw = self.rng.choice(((1, 1), (3, 3), (2, 3)))
            w = torch.randint(-128, 128, (groups * self.rng.randint(1, 3), k // groups, kh, kw), generator=self.gen)
        else:
            w = torch.randint(-128, 128, ((1,) * (len(lead) - 1) + (k, self.rng.randint(1, 60))), generator=self.gen)
        wv = self.b.weight(f"w{self.n_weights}", w.to(torch.int8))
        self.n_weights += 1
        if conv:
            pad = (kh // 2, kw // 2)
            y = self.b.op(
                "conv2d_integer", q, wv, padding=pad, stride=(1, self.rng.randint(1, 2)), groups=groups, a_zero_point=zp
            )
        else:
            y = self.b.op("matmul_integer", q, wv, a_zero_point=zp)
        self.emit(self.b.smul(self.b.cast(y, dtype="float32"), scalar=1.0 / 1024))

    def weight_value(self, v: float) -> Value:
        w = self.b.weight(f"w{self.n_weights}", torch.tensor([v]))
        self.n_weights += 1
        return w

    MOVES = (
        (unary, 4),
        (trig, 1),
        (binary, 4),
        (matmul, 3),
        (matmul_fused, 1),
        (transpose, 2),
        (reshape, 2),
        (concat_slice, 3),
        (split_or_slice, 2),
        (conv, 2),
        (pool, 1),
        (norm, 1),
        (indexing, 2),
        (select, 2),
        (clamp_pow, 1),
        (reduce, 1),
        (layout_norm, 2),
        (int_arith, 1),
        (half_round, 1),
        (quantized_matmul, 1),
    )

    def grow(self, moves: int) -> Graph:
        self.input(self.shape())
        fns, weights = zip(*self.MOVES)
        done = tries = 0
        while done < moves and tries < 10 * moves:
            tries += 1
            mark = (len(self.b.graph.nodes), len(self.pool), self.n_inputs, self.n_weights, dict(self.b.graph.weights))
            try:
                self.rng.choices(fns, weights)[0](self)
                done += 1
            except (ShapeError, GraphError):  # a move that does not fit these shapes: undo and try another
                self._undo(*mark)
        return self.b.build(self._outputs())

    def _undo(self, nodes: int, pool: int, n_in: int, n_w: int, weights: dict[str, torch.Tensor]) -> None:
        g = self.b.graph
        for nid in [i for i in g.nodes if i >= nodes]:
            del g.nodes[nid]
        del self.pool[pool:]
        self.n_inputs, self.n_weights = n_in, n_w
        g.weights = weights

    def _outputs(self) -> list[Value]:
        g = self.b.graph
        used = {v for n in g for v in n.inputs}
        sinks = [v for v in self.pool if v not in used] or self.pool[-1:]
        outs = self.rng.sample(sinks, min(len(sinks), self.rng.randint(1, 3)))
        if self.rng.random() < 0.15:
            outs.append(outs[0])  # the same value twice
        if self.rng.random() < 0.1:
            outs.append(Value(g.inputs[0].id, 0))  # an input, passed straight through
        return outs


def random_graph(seed: int, moves: int | None = None) -> Graph:
    """A random well-typed graph (deterministic for a seed) of roughly ``moves`` moves (default 2–8)."""
    g = _Grower(seed)
    return g.grow(moves if moves is not None else g.rng.randint(2, 8))


def random_inputs(graph: Graph, seed: int, dtype: torch.dtype = torch.float64) -> dict[str, torch.Tensor]:
    """Fresh inputs; about one seed in four gets a few inf, -inf or NaN values."""
    rng = random.Random(seed * 7919 + 13)
    gen = torch.Generator().manual_seed(seed * 31 + 7)
    out = {}
    for n in graph.inputs:
        name, shape = n.attrs["name"], n.shape
        if n.dtype != "float32":  # indices in range, random masks
            out[name] = graph.random_inputs(seed)[name]
            continue
        t = torch.randn(shape, generator=gen, dtype=torch.float64)
        if rng.random() < 0.25:
            flat = t.view(-1)
            for _ in range(rng.randint(1, 2)):
                flat[rng.randrange(flat.numel())] = rng.choice((math.inf, -math.inf, math.nan))
        out[name] = t.to(dtype)
    return out
