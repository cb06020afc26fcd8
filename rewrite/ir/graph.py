"""The graph IR: a DAG of registry ops with typed attributes and known shapes.

A graph owns its nodes (in topological order), its weights (real tensors,
bound by the ``weight`` nodes' names) and its outputs.  Every node's output
shapes are inferred when it is added, so a malformed graph cannot be built.

    >>> from rewrite.ir.builder import GraphBuilder
    >>> b = GraphBuilder()
    >>> x = b.input("x", (2, 3))
    >>> g = b.build([b.relu(x)])
    >>> g.run({"x": torch.ones(2, 3)})[0].shape
    torch.Size([2, 3])
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import torch

if TYPE_CHECKING:
    import networkx as nx

from rewrite.ir.dtypes import BOOL, FLOAT32, INT64, INT_RANGE, ITEMSIZE, QUANTIZED, STORED_INT, TORCH_DTYPE, DTypeError
from rewrite.ir.errors import GraphError, InputError, UsageError
from rewrite.ir.ops import OPS, Group, Shape, ShapeError, constant_tensor, get_op, norm_axis, numel

# the most bytes of random inputs a graph draws (to be verified, run-checked, measured): a typo'd input shape is
# refused before it is allocated
MAX_RANDOM_INPUT_BYTES = 4 << 30


def _bytes(n: int) -> str:
    """A byte count as people read it: ``120.0 GB``, or ``4 GiB`` for whole gibibytes (the bound's default)."""
    if n >= 1 << 30 and n % (1 << 30) == 0:
        return f"{n >> 30} GiB"
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


# ops whose int64 operand (slot 1) indexes operand 0: (op, axis of operand 0 it indexes)
_INDEX_SLOT = {"embedding", "index_select", "gather"}


@dataclass(frozen=True, order=True)
class Value:
    """Output ``index`` of node ``node``.

    Equal, ordered and hashed by ``(node, index)`` alone: values key dicts everywhere.  ``owner`` is not a
    field: a ``GraphBuilder`` sets it on the values it hands out (its serial and name), so it can refuse
    another builder's value; a value made directly (``Value(3, 0)``) has none and is not checked."""

    node: int
    index: int = 0
    owner: ClassVar[tuple[int, str] | None] = None


@dataclass(frozen=True)
class Node:
    id: int
    op: str
    inputs: tuple[Value, ...]
    attrs: Mapping[str, Any]
    shapes: tuple[Shape, ...]
    origin: str = ""  # where the node came from (source op, file:line), for messages
    dtypes: tuple[str, ...] = ()  # one per output; empty reads as float32 (rewrite/ir/dtypes.py)

    @property
    def shape(self) -> Shape:
        return self.shapes[0]

    @property
    def dtype(self) -> str:
        return self.dtypes[0] if self.dtypes else FLOAT32

    def describe(self) -> str:
        where = f" from {self.origin}" if self.origin else ""
        return f"node %{self.id} ({self.op}){where}"


@dataclass
class Graph:
    nodes: dict[int, Node] = field(default_factory=dict)
    weights: dict[str, torch.Tensor] = field(default_factory=dict)
    outputs: list[Value] = field(default_factory=list)
    name: str = "graph"

    # ------------------------------------------------------------ building
    def add(
        self, op: str, inputs: Sequence[Value] = (), attrs: Mapping[str, Any] | None = None, origin: str = ""
    ) -> Node:
        """Append a node after checking op, attributes, inputs and shapes."""
        where = f" (from {origin})" if origin else ""
        try:
            opdef = get_op(op)
        except KeyError as e:
            raise GraphError(f"{e.args[0]}{where}") from None
        try:
            norm = opdef.normalize_attrs(attrs or {})
        except TypeError as e:
            raise GraphError(f"{e}{where}") from None
        in_shapes = []
        in_dtypes = []
        for v in inputs:
            if v.node not in self.nodes or v.index >= len(self.nodes[v.node].shapes):
                raise GraphError(f"op '{op}'{where}: input {v} does not exist in this graph")
            in_shapes.append(self.nodes[v.node].shapes[v.index])
            in_dtypes.append(self.nodes[v.node].dtype)
        try:
            dtype = opdef.infer_dtype(in_dtypes, norm)
        except DTypeError as e:
            raise GraphError(f"{e}{where}") from None
        try:
            if "axis" in norm and in_shapes:  # one spelling per axis, so equal terms look equal
                norm["axis"] = norm_axis(norm["axis"], len(in_shapes[0]))
            shapes = opdef.infer(in_shapes, norm)
        except ShapeError as e:
            raise ShapeError(f"{e}{where}") from None
        nid = max(self.nodes, default=-1) + 1
        node = Node(nid, op, tuple(inputs), norm, tuple(shapes), origin, (dtype,) * len(shapes))
        self.nodes[nid] = node
        return node

    # ------------------------------------------------------------ queries
    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes.values())

    def shape_of(self, v: Value) -> Shape:
        return self.nodes[v.node].shapes[v.index]

    def dtype_of(self, v: Value) -> str:
        return self.nodes[v.node].dtype

    def dtypes(self) -> set[str]:
        """Every dtype a value of the graph has."""
        return {n.dtype for n in self}

    @property
    def inputs(self) -> list[Node]:
        return [n for n in self if n.op == "input"]

    @property
    def weight_nodes(self) -> list[Node]:
        return [n for n in self if n.op == "weight"]

    def compute_nodes(self) -> list[Node]:
        return [n for n in self if OPS[n.op].group is not Group.SOURCE]

    def op_count(self) -> int:
        """Operators that do work at run time (not inputs, weights or weight-only ops)."""
        const = self.weight_only()
        return sum(1 for n in self.compute_nodes() if n.id not in const)

    def weight_only(self) -> set[int]:
        """Ids of nodes that depend only on weights and constants (precomputable once)."""
        out: set[int] = set()
        for n in self:
            if (
                n.op == "weight"
                or OPS[n.op].constant
                or (n.op != "input" and n.inputs and all(v.node in out for v in n.inputs))
            ):
                out.add(n.id)
        return out

    def users(self) -> dict[int, list[int]]:
        u: dict[int, list[int]] = {n: [] for n in self.nodes}
        for n in self:
            for v in n.inputs:
                u[v.node].append(n.id)
        return u

    # ------------------------------------------------------------ checks
    def validate(self) -> None:
        """Assert the invariants: topological order, known ops, shapes agree, weights bound."""
        seen: set[int] = set()
        for n in self:
            opdef = OPS.get(n.op)
            if opdef is None:
                raise GraphError(f"{n.describe()}: unknown op")
            for v in n.inputs:
                if v.node not in seen:
                    raise GraphError(f"{n.describe()}: input {v} is not defined before it (cycle or bad order)")
            shapes = opdef.infer([self.shape_of(v) for v in n.inputs], n.attrs)
            if tuple(shapes) != n.shapes:
                raise GraphError(f"{n.describe()}: recorded shapes {n.shapes} != inferred {shapes}")
            try:
                dtype = opdef.infer_dtype([self.dtype_of(v) for v in n.inputs], n.attrs)
            except DTypeError as e:
                raise GraphError(f"{n.describe()}: {e}") from None
            if dtype != n.dtype:
                raise GraphError(f"{n.describe()}: recorded dtype {n.dtype} != inferred {dtype}")
            if n.op == "weight":
                w = self.weights.get(n.attrs["name"])
                if w is None:
                    raise GraphError(f"{n.describe()}: weight '{n.attrs['name']}' has no tensor")
                if tuple(w.shape) != n.shape:
                    raise GraphError(f"{n.describe()}: weight tensor shape {tuple(w.shape)} != {n.shape}")
                # float64 stands in for float32 in high-precision reference graphs (as for inputs in run)
                if w.dtype != TORCH_DTYPE[n.dtype] and not (n.dtype == FLOAT32 and w.dtype == torch.float64):
                    raise GraphError(f"{n.describe()}: weight tensor dtype {w.dtype} != {n.dtype}")
            seen.add(n.id)
        if not self.outputs:
            raise GraphError(f"graph '{self.name}' has no outputs")
        for v in self.outputs:
            if v.node not in self.nodes:
                raise GraphError(f"output {v} is not a node of graph '{self.name}'")

    # ------------------------------------------------------------ running
    def input_shapes(self) -> dict[str, Shape]:
        return {n.attrs["name"]: n.shape for n in self.inputs}

    def random_inputs(self, seed: int = 0, max_bytes: int = MAX_RANDOM_INPUT_BYTES) -> dict[str, torch.Tensor]:
        """Normal floats; int64 inputs in the range every index use of them allows; random bools.

        Refuses (``InputError``) inputs whose bytes together pass ``max_bytes`` before drawing any: a model
        declaring a 100000 x 100000 image would otherwise ask for 120 GB and be killed."""
        sizes = {n.attrs["name"]: numel(n.shape) * ITEMSIZE[n.dtype] for n in self.inputs}
        bound = max_bytes
        if sum(sizes.values()) > bound:
            n = max(self.inputs, key=lambda n: sizes[n.attrs["name"]])
            total = "" if len(sizes) == 1 else f" (all inputs {_bytes(sum(sizes.values()))})"
            raise InputError(
                f"input '{n.attrs['name']}' of graph '{self.name}' has shape {n.shape} ({n.dtype}), "
                f"{_bytes(sizes[n.attrs['name']])}{total}: more than the {_bytes(bound)} of random inputs eqsat "
                "draws to check or time a graph; give the model smaller input shapes (or pass random_inputs a larger "
                "max_bytes)"
            )
        gen = torch.Generator().manual_seed(seed)
        out = {}
        for n in self.inputs:
            s = n.shape
            if n.dtype == INT64:
                out[n.attrs["name"]] = torch.randint(0, self.index_bound(Value(n.id, 0)), s, generator=gen)
            elif n.dtype == BOOL:
                out[n.attrs["name"]] = torch.rand(s, generator=gen) < 0.5
            elif n.dtype in STORED_INT:  # the whole range of a quantized byte; an int32 within +-2**20
                lo, hi = INT_RANGE[n.dtype] if n.dtype in QUANTIZED else (-(2**20), 2**20)
                out[n.attrs["name"]] = torch.randint(lo, hi + 1, s, generator=gen).to(TORCH_DTYPE[n.dtype])
            else:  # float32, or float16/bfloat16 drawn as float32 and rounded (torch's round to nearest even)
                out[n.attrs["name"]] = torch.randn(s, generator=gen).to(TORCH_DTYPE[n.dtype])
        return out

    def index_bound(self, v: Value, default: int = 4) -> int:
        """The smallest size an int value indexes, ``default`` if it indexes nothing.

        The value is followed wherever it flows as integers: through layout ops, as the data a
        gather/index_select picks from (token-type ids gathered by position), and through any
        op whose result is an int64 tensor (ids + offset, where, cat).
        """
        users = self.users()
        bound: int | None = None
        stack, seen = [v.node], set()
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            for u in users[i]:
                un = self.nodes[u]
                if un.op in _INDEX_SLOT and len(un.inputs) > 1 and un.inputs[1].node == i:
                    src = self.shape_of(un.inputs[0])
                    size = src[0] if un.op == "embedding" else src[un.attrs["axis"]]
                    bound = size if bound is None else min(bound, size)
                elif OPS[un.op].group is Group.LAYOUT or un.dtype == INT64:
                    stack.append(u)
        return bound if bound is not None else default

    def bind_inputs(self, inputs: Mapping[str, torch.Tensor] | Sequence[torch.Tensor]) -> dict[str, torch.Tensor]:
        """``inputs`` (a dict by name, or a list in the graph's order) checked against the graph's inputs:
        every name given once, each a tensor of the input's shape and dtype (a float32 input may be given
        in float64, a high-precision reference; ints and bools exactly).  A mismatch is an ``InputError``
        saying what the graph takes, before anything runs."""
        nodes = self.inputs
        names = [n.attrs["name"] for n in nodes]
        takes = f"graph '{self.name}' takes {len(names)} input(s) {names}"
        if isinstance(inputs, torch.Tensor) or not isinstance(inputs, (Mapping, Sequence)) or isinstance(inputs, str):
            raise InputError(f"{takes}, got {type(inputs).__name__}: pass a list of tensors in that order, or a dict")
        if not isinstance(inputs, Mapping):
            if len(inputs) != len(names):
                raise InputError(f"{takes}, got {len(inputs)}: pass one tensor per input, in that order")
            inputs = dict(zip(names, inputs))
        missing = [k for k in names if k not in inputs]
        if missing:
            raise InputError(f"{takes}: no tensor given for {missing}")
        unknown = sorted(str(k) for k in inputs if k not in names)
        if unknown:
            raise InputError(f"{takes}: it has no input {unknown} (a misspelt name?)")
        for n in nodes:
            name, t = n.attrs["name"], inputs[n.attrs["name"]]
            if not isinstance(t, torch.Tensor):
                fix = "torch.from_numpy(a)" if type(t).__module__ == "numpy" else "torch.tensor(a)"
                raise InputError(f"input '{name}' is {type(t).__name__}, not a torch.Tensor: pass {fix}")
            if tuple(t.shape) != n.shape:
                raise InputError(f"input '{name}' has shape {tuple(t.shape)}, expected {n.shape}")
            if t.dtype != TORCH_DTYPE[n.dtype] and not (n.dtype == FLOAT32 and t.dtype == torch.float64):
                fix = {FLOAT32: ".float()", INT64: ".long()", BOOL: ".bool()"}[n.dtype]
                raise InputError(f"input '{name}' has dtype {t.dtype}, expected {n.dtype}: convert it with {fix}")
        return dict(inputs)

    def run(self, inputs: Mapping[str, torch.Tensor] | Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Execute with torch's reference semantics; returns one tensor per output.

        Float32 inputs may be given in float64 (a high-precision reference, as the rule checker and the
        verifier use): then the whole run is float64, float32 inputs, weights and constants promoted, so
        every op reads one precision (torch refuses a float32 weight times a float64 input).  Wrong inputs
        raise ``InputError`` (``bind_inputs``)."""
        inputs = self.bind_inputs(inputs)
        env: dict[Value, torch.Tensor] = {}
        remaining = {n: 0 for n in self.nodes}
        for n in self:
            for v in n.inputs:
                remaining[v.node] += 1
        for v in self.outputs:
            remaining[v.node] += 1
        # the run's float precision: float64 when float64 tensors are given (a high-precision
        # reference), so a cast from int/bool to "float32" does not mix precisions downstream
        fdt = (
            torch.float64
            if any(t.dtype == torch.float64 for t in (*inputs.values(), *self.weights.values()))
            else torch.float32
        )

        def precise(t: torch.Tensor, dtype: str) -> torch.Tensor:  # a float32 tensor in the run's precision
            return t.to(fdt) if dtype == FLOAT32 and t.dtype != fdt else t

        with torch.no_grad():
            for n in self:
                if n.op == "input":
                    outs = [precise(inputs[n.attrs["name"]], n.dtype)]
                elif n.op == "weight":
                    outs = [precise(self.weights[n.attrs["name"]], n.dtype)]
                elif OPS[n.op].constant:  # built in the run's precision (a float64 matmul operand, an exact 1/9)
                    outs = [constant_tensor(n.op, n.attrs, fdt)]
                else:
                    outs = OPS[n.op].ref([env[v] for v in n.inputs], n.attrs)
                    if n.op == "cast" and n.attrs["dtype"] == FLOAT32:
                        outs = [outs[0].to(fdt)]
                for i, t in enumerate(outs):
                    env[Value(n.id, i)] = t
                for v in n.inputs:  # free what no later node reads
                    remaining[v.node] -= 1
                    if remaining[v.node] == 0:
                        for i in range(len(self.nodes[v.node].shapes)):
                            env.pop(Value(v.node, i), None)
            return [env[v] for v in self.outputs]

    # ------------------------------------------------------------ transforms
    def to_networkx(self) -> nx.MultiDiGraph:
        """Nodes carry op/attrs/shapes; edges carry the output and input slots."""
        import networkx as nx  # deferred: 0.15 s to import, and only this export uses it

        g = nx.MultiDiGraph(name=self.name)
        for n in self:
            g.add_node(n.id, op=n.op, attrs=dict(n.attrs), shapes=n.shapes, origin=n.origin)
            for slot, v in enumerate(n.inputs):
                g.add_edge(v.node, n.id, out=v.index, slot=slot)
        return g

    def live(self) -> set[int]:
        """Ids of the nodes the outputs depend on."""
        live: set[int] = set()
        stack = [v.node for v in self.outputs]
        while stack:
            i = stack.pop()
            if i not in live:
                live.add(i)
                stack.extend(v.node for v in self.nodes[i].inputs)
        return live

    def pruned(self) -> Graph:
        """A copy without nodes the outputs do not depend on, renumbered densely."""
        live = self.live()
        keep = [n for n in self if n.id in live or n.op == "input"]
        remap = {n.id: i for i, n in enumerate(keep)}
        out = Graph(name=self.name)
        for n in keep:
            nn_ = Node(
                remap[n.id],
                n.op,
                tuple(Value(remap[v.node], v.index) for v in n.inputs),
                n.attrs,
                n.shapes,
                n.origin,
                n.dtypes,
            )
            out.nodes[nn_.id] = nn_
        used = {n.attrs["name"] for n in keep if n.op == "weight"}
        out.weights = {k: t for k, t in self.weights.items() if k in used}
        out.outputs = [Value(remap[v.node], v.index) for v in self.outputs]
        return out

    def weight_values(self, nodes: AbstractSet[int] | None = None) -> dict[Value, torch.Tensor]:
        """Every weight-only value (``weight_only``), or those of ``nodes`` (a set closed under inputs, such as
        ``live()``), computed once with torch on the host: contiguous, each in its node's dtype.

        The one evaluation of what a deployment folds ahead of runs: ``folded`` makes them weights, ``lower``
        binds them as constants of its kernels.

            >>> from rewrite.ir.builder import GraphBuilder
            >>> b = GraphBuilder()
            >>> w = b.weight("w", torch.ones(2))
            >>> g = b.build([b.add(b.input("x", (2,)), b.relu(w))])
            >>> sorted(v.node for v in g.weight_values())
            [0, 2]
        """
        wo = self.weight_only()
        out: dict[Value, torch.Tensor] = {}
        with torch.no_grad():
            for n in self:
                if n.id not in wo or (nodes is not None and n.id not in nodes):
                    continue
                if n.op == "weight":
                    ts = [self.weights[n.attrs["name"]]]
                else:
                    ts = OPS[n.op].ref([out[v] for v in n.inputs], n.attrs)
                for i, t in enumerate(ts):
                    out[Value(n.id, i)] = t.detach().to("cpu", TORCH_DTYPE[n.dtype]).contiguous()
        return out

    def folded(self) -> Graph:
        """A copy where every weight-only node read by run-time nodes is precomputed into a weight.

        This is what a deployment runs: concatenated or scaled weights are computed once.
        """
        const = self.weight_only()
        users = self.users()
        needed = {
            n.id
            for n in self
            if n.id in const
            and n.op != "weight"
            and (any(u not in const for u in users[n.id]) or any(v.node == n.id for v in self.outputs))
        }
        if not needed:
            return self.pruned()
        env = self.weight_values()
        out = Graph(name=self.name)
        out.weights = dict(self.weights)
        remap: dict[Value, Value] = {}
        for n in self:
            if n.id in needed:
                for i, _ in enumerate(n.shapes):
                    name = f"folded.{n.id}.{i}"
                    out.weights[name] = env[Value(n.id, i)]
                    node = out.add("weight", [], {"name": name, "shape": n.shapes[i], "dtype": n.dtype}, n.describe())
                    remap[Value(n.id, i)] = Value(node.id, 0)
            elif n.op == "weight":
                node = out.add("weight", [], n.attrs, n.origin)
                remap[Value(n.id, 0)] = Value(node.id, 0)
            elif n.id not in const:
                node = out.add(n.op, [remap[v] for v in n.inputs], n.attrs, n.origin)
                for i, _ in enumerate(n.shapes):
                    remap[Value(n.id, i)] = Value(node.id, i)
        out.outputs = [remap[v] for v in self.outputs]
        return out.pruned()

    def summary(self) -> dict[str, int]:
        """Run-time operator counts by op (weight-only nodes are precomputed, so left out)."""
        counts: dict[str, int] = {}
        const = self.weight_only()
        for n in self.compute_nodes():
            if n.id in const:
                continue
            counts[n.op] = counts.get(n.op, 0) + 1
        return dict(sorted(counts.items()))

    def __repr__(self) -> str:
        return f"Graph({self.name!r}, {len(self.nodes)} nodes, {self.op_count()} ops, {len(self.outputs)} outputs)"

    def pretty(self) -> str:
        """One line per node: ``%3 = matmul(%1, %2) {} -> (64, 512)``."""
        lines = []
        for n in self:
            args = ", ".join(f"%{v.node}" + (f".{v.index}" if v.index else "") for v in n.inputs)
            attrs = " ".join(f"{k}={v}" for k, v in n.attrs.items())
            shapes = ", ".join(str(s) for s in n.shapes) + ("" if n.dtype == FLOAT32 else f" {n.dtype}")
            lines.append(f"%{n.id} = {n.op}({args}) {attrs} -> {shapes}".replace("  ", " "))
        lines.append("return " + ", ".join(f"%{v.node}" + (f".{v.index}" if v.index else "") for v in self.outputs))
        return "\n".join(lines)


def expect_graph(value: object, call: str, arg: str = "graph") -> Graph:
    """``value`` if it is a ``Graph``; else the one-line ``UsageError`` of public entry point ``call``, saying
    how to get a graph from what was given (a file, a module, an optimize result).  Every public entry point
    that takes a graph (optimize, compile, verify, to_torch, to_onnx, save) asks it first."""
    if isinstance(value, Graph):
        return value
    if isinstance(value, (str, os.PathLike)):
        given = f"the path {os.fspath(value)!r}"
        fix = "read the file first with rewrite.load(path) (.eqsat or .onnx) or rewrite.from_onnx(path)"
    elif isinstance(value, torch.nn.Module):
        given = f"the torch module {type(value).__name__}"
        fix = "import it first with rewrite.from_torch(module, example_inputs)"
    elif type(value).__name__ == "ModelProto":
        given, fix = "an onnx.ModelProto", "import it first with rewrite.from_onnx(model)"
    elif isinstance(getattr(value, "graph", None), Graph):
        given, fix = f"a {type(value).__name__}", f"pass its graph: {call}(result.graph)"
    else:
        given = "None" if value is None else f"a {type(value).__name__}"
        fix = "build one with rewrite.GraphBuilder or import a model with rewrite.from_torch, from_onnx or load"
    raise UsageError(f"{call}: {arg} must be a rewrite.Graph, got {given}; {fix}")
