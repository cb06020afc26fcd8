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

from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    import networkx as nx

from rewrite.ir.dtypes import BOOL, FLOAT32, INT64, TORCH_DTYPE, DTypeError
from rewrite.ir.errors import GraphError
from rewrite.ir.ops import OPS, Group, Shape, ShapeError, constant_tensor, get_op, norm_axis

# ops whose int64 operand (slot 1) indexes operand 0: (op, axis of operand 0 it indexes)
_INDEX_SLOT = {"embedding", "index_select", "gather"}


@dataclass(frozen=True, order=True)
class Value:
    """Output ``index`` of node ``node``."""

    node: int
    index: int = 0


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

    def random_inputs(self, seed: int = 0) -> dict[str, torch.Tensor]:
        """Normal floats; int64 inputs in the range every index use of them allows; random bools."""
        gen = torch.Generator().manual_seed(seed)
        out = {}
        for n in self.inputs:
            s = n.shape
            if n.dtype == INT64:
                out[n.attrs["name"]] = torch.randint(0, self.index_bound(Value(n.id, 0)), s, generator=gen)
            elif n.dtype == BOOL:
                out[n.attrs["name"]] = torch.rand(s, generator=gen) < 0.5
            else:
                out[n.attrs["name"]] = torch.randn(s, generator=gen)
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

    def run(self, inputs: Mapping[str, torch.Tensor] | Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Execute with torch's reference semantics; returns one tensor per output."""
        names = [n.attrs["name"] for n in self.inputs]
        if not isinstance(inputs, Mapping):
            if len(inputs) != len(names):
                raise GraphError(f"graph '{self.name}' takes {len(names)} inputs {names}, got {len(inputs)}")
            inputs = dict(zip(names, inputs))
        missing = set(names) - set(inputs)
        if missing:
            raise GraphError(f"graph '{self.name}': missing inputs {sorted(missing)}")
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
        with torch.no_grad():
            for n in self:
                if n.op == "input":
                    t = inputs[n.attrs["name"]]
                    if tuple(t.shape) != n.shape:
                        raise GraphError(f"input '{n.attrs['name']}' has shape {tuple(t.shape)}, expected {n.shape}")
                    # a float32 input may be given in float64 (a high-precision reference); ints and bools exactly
                    if t.dtype != TORCH_DTYPE[n.dtype] and not (n.dtype == FLOAT32 and t.dtype == torch.float64):
                        raise GraphError(f"input '{n.attrs['name']}' has dtype {t.dtype}, expected {n.dtype}")
                    outs = [t]
                elif n.op == "weight":
                    outs = [self.weights[n.attrs["name"]]]
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
