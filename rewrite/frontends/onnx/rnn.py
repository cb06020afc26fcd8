"""ONNX recurrent layers: ``RNN``, ``GRU``, ``LSTM``, unrolled over their static sequence length.

eqsat has no loop op, but its shapes are static: the time loop becomes ``seq_length`` copies of
the cell.  The input projection of every step and both directions is one matmul
(``X [S*N, I] @ W^T [I, D*G*H]`` plus the summed biases); each step adds only the recurrent
matmul ``H_{t-1} @ R^T``.  A zero initial state (the default) drops the first step's recurrent
terms, which are exactly zero when R (and P) are finite constants.

    LSTM (gates i, o, f, c):  i = f(Xi + Hi + Pi*C), f = f(Xf + Hf + Pf*C), c~ = g(Xc + Hc),
                              C' = f*C + i*c~, o = f(Xo + Ho + Po*C'), H' = o*h(C')
    GRU  (gates z, r, h):     z = f(Xz + Hz), r = f(Xr + Hr), H' = (1-z)*h~ + z*H with
                              h~ = g(Xh + (r*H) @ Rh^T + Rbh) or, linear_before_reset,
                              h~ = g(Xh + r*(H @ Rh^T + Rbh))
    RNN:                      H' = f(X + H @ R^T)

``clip`` clamps every input of f and g (not the cell state h reads), as onnxruntime does.
Refused: dtypes other than float32, ``sequence_lens`` not a constant equal to ``seq_length``
for every batch entry (shorter sequences would need masking), activations eqsat cannot spell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from rewrite.frontends.onnx.context import Ctx, Refuse, Tensor, handles, only_attrs, opt_input
from rewrite.ir.dtypes import FLOAT32
from rewrite.ir.graph import Value

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DEFAULT_ACTS = {"RNN": ("Tanh",), "GRU": ("Sigmoid", "Tanh"), "LSTM": ("Sigmoid", "Tanh", "Tanh")}
_COMMON_ATTRS = {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout"}
_ATTRS = {
    "RNN": _COMMON_ATTRS,
    "GRU": _COMMON_ATTRS | {"linear_before_reset"},
    "LSTM": _COMMON_ATTRS | {"input_forget"},
}
# lower-cased activation -> (its default alpha, its default beta); "-" = takes none, None = no default.
# activation_alpha/beta are consumed in order by the activations that take them (the spec's wording,
# onnxruntime's reading); the defaults are those of the ONNX operators of the same names.
_NO = "-"
_ACT_PARAMS: dict[str, tuple[float | str | None, float | str | None]] = {
    "sigmoid": (_NO, _NO),
    "tanh": (_NO, _NO),
    "relu": (_NO, _NO),
    "softsign": (_NO, _NO),
    "softplus": (_NO, _NO),
    "affine": (None, None),
    "scaledtanh": (None, None),
    "leakyrelu": (0.01, _NO),
    "thresholdedrelu": (None, _NO),  # onnxruntime defaults alpha to 0, the operator to 1: none
    "elu": (1.0, _NO),
    "hardsigmoid": (0.2, 0.5),
}
_UNUSED = np.zeros(0, np.float32)  # the value of an output the model does not ask for (never bound)


@dataclass(frozen=True)
class Act:
    """One activation of the cell, its ``activation_alpha`` / ``activation_beta`` resolved."""

    name: str  # lower case
    alpha: float = 0.0
    beta: float = 0.0


@dataclass(frozen=True)
class Layer:
    """The attributes and static sizes of one RNN/GRU/LSTM node."""

    op: str
    dirs: int  # 1 or 2
    reverse: bool  # the only direction runs backwards (direction="reverse")
    layout: int  # 0: [seq, batch, ...]; 1: [batch, seq, ...]
    seq: int
    batch: int
    hidden: int
    acts: tuple[tuple[Act, ...], ...]  # per direction: (f,), (f, g) or (f, g, h)
    clip: float | None
    input_forget: bool
    linear_before_reset: bool

    @property
    def gates(self) -> int:
        return GATES[self.op]


@dataclass(frozen=True)
class Recurrent:
    """One direction's recurrent weights, as graph values made once and read by every step."""

    rt: list[Value]  # R^T [H, G*H]; a GRU without linear_before_reset: (R_zr^T [H, 2H], R_h^T [H, H])
    p: list[Value] | None = None  # LSTM peepholes (Pi, Po, Pf), each [1, H]
    rbh: Value | None = None  # GRU with linear_before_reset: the h gate's recurrent bias [1, H], which r scales


# ---------------------------------------------------------------- attributes
def _strings(v: Sequence[Any]) -> list[str]:
    return [s.decode() if isinstance(s, bytes) else str(s) for s in v]


def parse_acts(op: str, a: dict[str, Any], dirs: int) -> tuple[tuple[Act, ...], ...]:
    """The activations per direction (forward then reverse, as the spec and onnxruntime list them)."""
    per = len(DEFAULT_ACTS[op])
    names = _strings(a.get("activations", DEFAULT_ACTS[op] * dirs))
    alphas = [float(v) for v in a.get("activation_alpha", [])]
    betas = [float(v) for v in a.get("activation_beta", [])]
    if len(names) != per * dirs:
        raise Refuse(f"{len(names)} activations {names}; {op} with {dirs} direction(s) takes {per * dirs}")
    acts = []
    for name in names:
        key = name.lower()
        if key not in _ACT_PARAMS:
            raise Refuse(f"activation '{name}' is not supported (eqsat has {sorted(_ACT_PARAMS)})")
        params = []
        for what, given, default in (("alpha", alphas, _ACT_PARAMS[key][0]), ("beta", betas, _ACT_PARAMS[key][1])):
            if default == _NO:
                params.append(0.0)
            elif given:
                params.append(given.pop(0))
            elif default is None:
                raise Refuse(f"activation '{name}' needs activation_{what} (it has no default)")
            else:
                params.append(float(default))
        acts.append(Act(key, params[0], params[1]))
    if alphas or betas:
        raise Refuse(f"activation_alpha/beta have {len(alphas)}/{len(betas)} value(s) no activation of {names} takes")
    return tuple(tuple(acts[d * per : (d + 1) * per]) for d in range(dirs))


def parse_layer(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> Layer:
    """Check the attributes and the shapes of X, W, R against each other."""
    op = n.op_type
    only_attrs(a, _ATTRS[op])
    direction = a.get("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise Refuse(f"direction '{direction}' is not one of forward, reverse, bidirectional")
    dirs = 2 if direction == "bidirectional" else 1
    layout = int(a.get("layout", 0))
    if layout not in (0, 1):
        raise Refuse(f"layout={layout} is not 0 or 1")
    for i, name in enumerate(n.input):
        if name and i != 4 and c.dtype(c.env[name]) != FLOAT32:  # 4: sequence_lens, int32
            raise Refuse(f"input '{name}' has dtype {c.dtype(c.env[name])}; {op} is imported for float32 only")
    xs = c.shape(c.env[n.input[0]])
    if len(xs) != 3:
        raise Refuse(f"X has shape {xs}; it must have rank 3")
    seq, batch = (xs[1], xs[0]) if layout else (xs[0], xs[1])
    rs = c.shape(c.env[n.input[2]])
    hidden = int(a.get("hidden_size", rs[-1]))
    g = GATES[op]
    for what, got, want in (
        ("W", c.shape(c.env[n.input[1]]), (dirs, g * hidden, xs[2])),
        ("R", rs, (dirs, g * hidden, hidden)),
    ):
        if got != want:
            raise Refuse(f"{what} has shape {got}, expected {want} (direction={direction}, hidden_size={hidden})")
    clip = a.get("clip")
    if clip is not None and not float(clip) > 0:
        raise Refuse(f"clip={clip} must be positive")
    return Layer(
        op,
        dirs,
        direction == "reverse",
        layout,
        seq,
        batch,
        hidden,
        parse_acts(op, a, dirs),
        None if clip is None else float(clip),
        bool(a.get("input_forget", 0)),
        bool(a.get("linear_before_reset", 0)),
    )


def _optional(c: Ctx, n: onnx.NodeProto, i: int, what: str, shape: tuple[int, ...]) -> Tensor | None:
    """Optional input ``i`` checked against ``shape``, or None when absent."""
    name = opt_input(n, i)
    if not name:
        return None
    t = c.env[name]
    if c.shape(t) != shape:
        raise Refuse(f"{what} has shape {c.shape(t)}, expected {shape}")
    return t


def _check_sequence_lens(c: Ctx, n: onnx.NodeProto, L: Layer) -> None:
    """Accept ``sequence_lens`` only when every sequence runs the full length: no masking needed."""
    name = opt_input(n, 4)
    if not name:
        return
    lens = c.ints(name, "sequence_lens")
    if len(lens) != L.batch:
        raise Refuse(f"sequence_lens has {len(lens)} entries for batch {L.batch}")
    if any(v != L.seq for v in lens):
        raise Refuse(f"sequence_lens {lens} differ from seq_length {L.seq}: shorter sequences are not supported")


# ---------------------------------------------------------------- tensors that may be constants
def _part(c: Ctx, t: Tensor, axis: int, start: int, end: int) -> Tensor:
    """``t[start:end]`` along ``axis``: numpy on a constant, a slice node (none for the whole axis) else."""
    if start == 0 and end == c.shape(t)[axis]:
        return t
    if isinstance(t, np.ndarray):
        return t[(slice(None),) * axis + (slice(start, end),)]
    return c.add("slice", [t], axis=axis, start=start, end=end)


def _plus(c: Ctx, x: Tensor, y: Tensor) -> Tensor:
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        return x + y
    return c.add("add", c.same_rank(x, y))


def _transposed(c: Ctx, t: Tensor) -> Tensor:
    """A 2-d ``t`` transposed: matmul takes ``W^T`` and ``R^T``."""
    if isinstance(t, np.ndarray):
        return np.ascontiguousarray(t.T)
    return c.add("transpose", [t], perm=(1, 0))


def _direction(c: Ctx, t: Tensor, d: int, axis: int = 0) -> Tensor:
    """Direction ``d`` of a per-direction input, the direction axis dropped."""
    s = c.shape(t)
    return c.reshape(_part(c, t, axis, d, d + 1), s[:axis] + s[axis + 1 :])


# ---------------------------------------------------------------- the cell
class Unroll:
    """Builds one node's cells step by step; a ``None`` state stands for the zero initial state."""

    def __init__(self, c: Ctx, L: Layer) -> None:
        self.c, self.L = c, L
        self._scalars: dict[float, Value] = {}

    def scalar(self, v: float) -> Value:
        """A [1, 1] float32 constant, one weight per value."""
        if v not in self._scalars:
            self._scalars[v] = self.c.value(np.full((1, 1), v, np.float32))
        return self._scalars[v]

    def add(self, x: Value, y: Tensor | None) -> Value:
        return x if y is None else self.c.add("add", self.c.same_rank(x, y))

    def mul(self, x: Value, y: Value) -> Value:
        return self.c.add("mul", [x, y])

    def mm(self, h: Value, rt: Tensor) -> Value:
        return self.c.add("matmul", [h, self.c.value(rt)])

    def split(self, x: Value, pieces: int) -> list[Value]:
        return [x] if pieces == 1 else self.c.add_multi("split", [x], axis=1, sizes=(self.L.hidden,) * pieces)

    def act(self, f: Act, x: Value, clip: bool = True) -> Value:
        """``f(clip(x))``, composed of registry ops."""
        c = self.c
        if clip and self.L.clip is not None:
            x = c.add("clamp", [x], min=-self.L.clip, max=self.L.clip)
        name = f.name
        if name in ("sigmoid", "tanh", "relu"):
            return c.add(name, [x])
        if name == "affine":  # alpha * x + beta
            return c.add("add", [c.add("smul", [x], scalar=f.alpha), self.scalar(f.beta)])
        if name == "scaledtanh":  # alpha * tanh(beta * x)
            return c.add("smul", [c.add("tanh", [c.add("smul", [x], scalar=f.beta)])], scalar=f.alpha)
        if name == "hardsigmoid":  # clamp(alpha * x + beta, 0, 1)
            lin = c.add("add", [c.add("smul", [x], scalar=f.alpha), self.scalar(f.beta)])
            return c.add("clamp", [lin], min=0.0, max=1.0)
        if name == "softsign":  # x / (1 + |x|)
            return c.add("div", [x, c.add("add", [c.add("abs", [x]), self.scalar(1.0)])])
        if name == "softplus":  # log(1 + e^x); x itself above 20, where e^x would overflow first
            soft = c.add("log1p", [c.add("exp", [x])])
            return c.add("where", [c.add("gt", [x, self.scalar(20.0)]), x, soft])
        if name == "thresholdedrelu":  # x above alpha, else 0
            return c.add("where", [c.add("gt", [x, self.scalar(f.alpha)]), x, self.scalar(0.0)])
        neg = c.add("lt", [x, self.scalar(0.0)])
        if name == "leakyrelu":  # alpha * x below 0
            return c.add("where", [neg, c.add("smul", [x], scalar=f.alpha), x])
        assert name == "elu", name  # alpha * (e^x - 1) below 0
        return c.add("where", [neg, c.add("smul", [c.add("expm1", [x])], scalar=f.alpha), x])

    # -------------------------------------------------------- one step of each cell
    def rnn(self, acts: tuple[Act, ...], xg: Value, h: Value | None, w: Recurrent) -> Value:
        return self.act(acts[0], xg if h is None else self.add(xg, self.mm(h, w.rt[0])))

    def gru(self, acts: tuple[Act, ...], xg: Value, h: Value | None, w: Recurrent) -> Value:
        f, g = acts
        xz, xr, xh = self.split(xg, 3)
        one = self.scalar(1.0)
        if h is None:  # H = 0: no recurrent terms; with linear_before_reset, r * Rbh remains
            z = self.act(f, xz)
            pre = xh if w.rbh is None else self.add(xh, self.mul(self.act(f, xr), w.rbh))
            return self.mul(self.c.add("sub", [one, z]), self.act(g, pre))
        if self.L.linear_before_reset:
            hz, hr, hh = self.split(self.mm(h, w.rt[0]), 3)
            z, r = self.act(f, self.add(xz, hz)), self.act(f, self.add(xr, hr))
            pre = self.add(xh, self.mul(r, self.add(hh, w.rbh)))
        else:
            hz, hr = self.split(self.mm(h, w.rt[0]), 2)
            z, r = self.act(f, self.add(xz, hz)), self.act(f, self.add(xr, hr))
            pre = self.add(xh, self.mm(self.mul(r, h), w.rt[1]))
        keep = self.mul(self.c.add("sub", [one, z]), self.act(g, pre))
        return self.c.add("add", [keep, self.mul(z, h)])

    def lstm(
        self, acts: tuple[Act, ...], xg: Value, state: tuple[Value | None, Value | None], w: Recurrent
    ) -> tuple[Value, Value]:
        """``state``: (H, C)."""
        f, g, hact = acts
        h, cell = state
        gi, go, gf, gc = self.split(xg if h is None else self.add(xg, self.mm(h, w.rt[0])), 4)
        if w.p is not None and cell is not None:
            gi = self.add(gi, self.mul(cell, w.p[0]))
            if not self.L.input_forget:  # f = 1 - i then: its peephole Pf is unused (as onnxruntime)
                gf = self.add(gf, self.mul(cell, w.p[2]))
        i = self.act(f, gi)
        fg = self.c.add("sub", [self.scalar(1.0), i]) if self.L.input_forget else self.act(f, gf)
        new = self.mul(i, self.act(g, gc))
        if cell is not None:
            new = self.c.add("add", [self.mul(fg, cell), new])
        if w.p is not None:
            go = self.add(go, self.mul(new, w.p[1]))
        return self.mul(self.act(f, go), self.act(hact, new, clip=False)), new


# ---------------------------------------------------------------- the node
def _input_projection(c: Ctx, L: Layer, x: Tensor, w: Tensor, bias: Tensor | None) -> Value:
    """``X @ W^T + b`` for every step and direction at once: [S, N, D*G*H] (layout 1: [N, S, D*G*H])."""
    s0, s1, width = c.shape(x)
    cols = L.dirs * L.gates * L.hidden
    wt = _transposed(c, c.reshape(w, (cols, width)))
    xw = c.add("matmul", [c.value(c.reshape(x, (s0 * s1, width))), c.value(wt)])
    if bias is not None:
        xw = c.add("add", c.same_rank(xw, c.reshape(bias, (cols,))))
    return c.add("reshape", [xw], shape=(s0, s1, cols))


def _input_bias(c: Ctx, L: Layer, b: Tensor | None) -> Tensor | None:
    """The bias of the input projection [D, G*H]: Wb + Rb, less a GRU's Rbh under linear_before_reset."""
    if b is None:
        return None
    gh, H = L.gates * L.hidden, L.hidden
    wb, rb = _part(c, b, 1, 0, gh), _part(c, b, 1, gh, 2 * gh)
    if not (L.op == "GRU" and L.linear_before_reset):
        return _plus(c, wb, rb)
    zr = _plus(c, _part(c, wb, 1, 0, 2 * H), _part(c, rb, 1, 0, 2 * H))
    return c.concat([zr, _part(c, wb, 1, 2 * H, gh)], 1)


def _recurrent_weights(c: Ctx, L: Layer, r: Tensor, b: Tensor | None, peep: Tensor | None, d: int) -> Recurrent:
    H, gh = L.hidden, L.gates * L.hidden
    rt = _transposed(c, _direction(c, r, d))
    if L.op == "GRU" and not L.linear_before_reset:  # (r * H) meets R_h apart from z and r
        rts = [c.value(_part(c, rt, 1, 0, 2 * H)), c.value(_part(c, rt, 1, 2 * H, gh))]
    else:
        rts = [c.value(rt)]
    p = None
    if peep is not None:
        pd = _direction(c, peep, d)
        p = [c.value(c.reshape(_part(c, pd, 0, k * H, (k + 1) * H), (1, H))) for k in range(3)]
    rbh = None
    if b is not None and L.op == "GRU" and L.linear_before_reset:
        rbh = c.value(c.reshape(_part(c, _direction(c, b, d), 0, gh + 2 * H, 2 * gh), (1, H)))
    return Recurrent(rts, p, rbh)


def _initial(c: Ctx, L: Layer, t: Tensor | None, d: int, skip_zero: bool) -> Value | None:
    """Direction ``d`` of initial_h / initial_c as [N, H]; None for zeros (absent or a zero constant) when
    ``skip_zero`` (the weights that multiply the state are finite constants, so its terms are exactly 0)."""
    if t is None or (isinstance(t, np.ndarray) and not t.any()):
        if skip_zero:
            return None
        return c.value(np.zeros((L.batch, L.hidden), np.float32))
    return c.value(_direction(c, t, d, axis=L.layout))


def _stack(c: Ctx, L: Layer, pieces: list[Value], lead: tuple[int, ...]) -> Value:
    """[N, H] pieces (outer index first) as ``lead + [N, H]``, or layout 1 ``[N] + lead + [H]``."""
    N, H = L.batch, L.hidden
    axis = 1 if L.layout else 0
    one = (N, 1, H) if L.layout else (1, N, H)
    joined = c.concat([c.reshape(p, one) for p in pieces], axis)
    return c.value(c.reshape(joined, (N, *lead, H) if L.layout else (*lead, N, H)))


@handles("RNN", "GRU", "LSTM")
def _recurrent(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """One ``Tensor`` per ONNX output: Y, Y_h (and Y_c); an output not asked for gets a placeholder."""
    L = parse_layer(c, n, a)
    D, N, H, gh = L.dirs, L.batch, L.hidden, L.gates * L.hidden
    _check_sequence_lens(c, n, L)
    state_shape = (N, D, H) if L.layout else (D, N, H)
    b = _optional(c, n, 3, "B", (D, 2 * gh))
    h0 = _optional(c, n, 5, "initial_h", state_shape)
    c0 = _optional(c, n, 6, "initial_c", state_shape) if L.op == "LSTM" else None
    peep = _optional(c, n, 7, "P", (D, 3 * H)) if L.op == "LSTM" else None

    xw = _input_projection(c, L, c.env[n.input[0]], c.env[n.input[1]], _input_bias(c, L, b))
    steps: dict[int, list[Value]] = {}

    def step_input(t: int, d: int) -> Value:
        """Step ``t`` of the input projection of direction ``d``, [N, G*H]: one slice per step."""
        if t not in steps:
            at = c.value(c.reshape(_part(c, xw, L.layout, t, t + 1), (N, D * gh)))
            steps[t] = [at] if D == 1 else c.add_multi("split", [at], axis=1, sizes=(gh,) * D)
        return steps[t][d]

    # 0 * inf is NaN: a zero state's terms are dropped only when R and P are finite constants
    skip_zero = all(
        t is None or (isinstance(t, np.ndarray) and np.isfinite(t).all()) for t in (c.env[n.input[2]], peep)
    )
    u = Unroll(c, L)
    ys: list[list[Value]] = []
    finals: list[tuple[Value, Value | None]] = []
    for d in range(D):
        w = _recurrent_weights(c, L, c.env[n.input[2]], b, peep, d)
        h, cell = _initial(c, L, h0, d, skip_zero), _initial(c, L, c0, d, skip_zero)
        outs: dict[int, Value] = {}
        for t in reversed(range(L.seq)) if L.reverse or d == 1 else range(L.seq):
            if L.op == "LSTM":
                h, cell = u.lstm(L.acts[d], step_input(t, d), (h, cell), w)
            elif L.op == "GRU":
                h = u.gru(L.acts[d], step_input(t, d), h, w)
            else:
                h = u.rnn(L.acts[d], step_input(t, d), h, w)
            outs[t] = h
        assert h is not None
        ys.append([outs[t] for t in range(L.seq)])
        finals.append((h, cell))

    wanted = list(n.output) + [""] * (3 - len(n.output))
    results: list[Tensor] = [
        _stack(c, L, [ys[d][t] for t in range(L.seq) for d in range(D)], (L.seq, D)) if wanted[0] else _UNUSED,
        _stack(c, L, [h for h, _ in finals], (D,)) if wanted[1] else _UNUSED,
    ]
    if L.op == "LSTM":
        cells = [cell for _, cell in finals]
        results.append(_stack(c, L, [v for v in cells if v is not None], (D,)) if wanted[2] else _UNUSED)
    return results[: len(n.output)]
