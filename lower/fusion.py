"""Fusion: which graph nodes go into which kernel, and building those kernels.

Policy (greedy, over live nodes that are not precomputed constants):

* ``reshape`` is a view: no kernel; it aliases its input's storage — unless
  it sits between two fusible ops, then it is fused through (an index remap).
* **Placed pieces**: a concat or split whose pieces are contiguous stretches of
  the whole (``OpDef.pieces``: a channel concat of one image) is no kernel
  either.  The kernels that write a concat's inputs write them straight into
  their stretches of its output, and a split's outputs are views of its input
  at their offsets (``FusionPlan.place``).  A piece must be written by a kernel
  of its own (not a graph input, constant or view), belong to one whole only,
  and share no storage with a graph output; otherwise the op copies as before.
* **Reshapes sink** below pointwise ops first (``lower.reshapes.sink_reshapes``): a batched
  linear layer's ``gelu(reshape(x @ w + b))`` is computed as
  ``reshape(gelu(x @ w + b))``, so the activation and a residual add have the
  contraction's shape and join its epilogue.
* **Epilogues**: a chain of elementwise ops (and batchnorm) that is the only
  consumer of a contraction's output, has its shape, and is not itself
  needed elsewhere, is fused into the contraction's kernel.  It is computed in
  the contraction's own loop coordinates, in place in the output buffer, right
  after each block of the output is finished (``compute_at``).  A leading
  ``add`` (bias, residual) is folded into the accumulator's initial value.
* **Prologues**: an injective producer (elementwise, batchnorm, transpose,
  slice) whose only consumer is in a group is inlined into that group's loads
  (for a contraction: anything into the B operand, which is packed anyway;
  only index remaps — transpose, slice — into the A operand; on a grid backend,
  whose tiles stage both operands through shared memory, also a widening cast
  of a float16 / bfloat16 value, so a half GEMM reads its 16-bit operands and
  multiplies them on their own tensor cores).  This
  fuses elementwise chains into one kernel, and elementwise ops into softmax,
  layernorm, pooling, concat and split kernels.
* **Shared prologues**: an injective producer with several consumers, every one
  of them a contraction reading it as its packed operand once per element (a
  NASNet-A cell's ``relu`` feeding two 1x1 convolutions), is inlined into each
  of them instead of being stored once and read back: each packs its panels
  through its own copy, and the value is never written.  With it go its private
  injective producers, up to ``SHARED_PROLOGUE_MAX_NODES`` nodes, as long as the
  chain reads one stored tensor (each consumer then reads what it read before;
  an ``add`` of two would double it, which cost more than the saved pass).
  NASNet-A 1.4% faster at 2 threads, 0.2% at 1.
* softmax and layernorm are single fused kernels by construction (one row
  loop with max/sum/normalise, or mean/var/normalise, inside).
* **Narrow stores**: a ``CALL_EPILOGUE`` op's chain that widens after its
  narrowest value (a quantized convolution's uint8 result dequantized to
  float32) stops there when the widening tail's consumer can compute it from
  the narrow tensor as it loads it: another such op's epilogue (a residual
  add), or a direct convolution's copy of its input (a float32 depthwise
  convolution); and such an epilogue computes a dequantized operand (an
  identity shortcut) from its bytes (``_Grouper.narrow_stores``).  The wide
  tensor is never written: a quarter of the bytes.  QDQ ResNet-50 1.13x (1
  thread) and 1.16x (2 threads) with the importer's shared uint8 tensors.

``FusionPlan.__str__`` prints one line per kernel with the nodes it contains.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from lower.ir import (
    Buffer,
    Expr,
    IntImm,
    Kernel,
    Load,
    Stage,
    Stmt,
    Store,
    Var,
    buffers_used,
    loops,
    map_expr,
    map_stmt,
    seq,
    simplify_stmt,
    stores_of,
    substitute,
)
from lower.ops_to_loops import LOOP_DTYPE, GemmInfo, LowerCtx, Namer, direct_conv, lower_node, stage_tag
from lower.ops_to_loops.core import PointwiseEpilogue
from lower.reshapes import pointwise
from lower.schedule import Schedule, inline_stage
from rewrite.ir.dtypes import FLOAT32, HALF, TORCH_DTYPE
from rewrite.ir.errors import LoweringError
from rewrite.ir.graph import Graph, Node, Value
from rewrite.ir.ops import OPS, CostClass, FusionRole, Group

# What fusion may do with an op is its registry entry's ``fusion`` role (and a
# contraction's ``packed_operand``), read when planning so a registered op is seen.
_INJECTIVE = frozenset({FusionRole.ELEMENTWISE, FusionRole.REMAP, FusionRole.INJECTIVE})
SHARED_PROLOGUE_MAX_NODES = 3  # the longest chain inlined into every consumer (see "Shared prologues")
NARROW_OPERAND_MAX_NODES = 4  # the longest chain an epilogue computes from a narrower operand (see "Narrow stores")
EPILOGUE_DAG_MAX_NODES = 16  # the most pointwise ops one epilogue DAG takes (``_Grouper.pointwise_dag``)


def _role(op: str) -> FusionRole | None:
    return OPS[op].fusion


def _injective(op: str) -> bool:
    return _role(op) in _INJECTIVE


def _epilogue(op: str) -> bool:
    return _role(op) is FusionRole.ELEMENTWISE


def _contraction(op: str) -> bool:
    return _role(op) is FusionRole.CONTRACTION


def _alias(op: str) -> bool:
    return _role(op) is FusionRole.ALIAS


def _taps_each_input(graph: Graph, c: Node) -> bool:
    """Whether contraction ``c`` reads each element of its packed operand once per window tap: a
    convolution with a window, lowered over im2col panels (a direct convolution copies its input once into
    a padded slice, so an inlined chain runs once per element there).

    An elementwise chain inlined into such a convolution's input runs once per tap.  Inception-v3's
    BatchNorm and ReLU on a split of merged 1x1 convolutions, inlined into the 5x5 convolution reading
    them: that kernel took 1560 us against 890 us for the same convolution fed by the chain's own kernel
    (1 thread); the whole model ran 1.04x (1 thread) and 1.08x (2 threads) faster with such chains kept
    apart."""
    if OPS[c.op].cost_class is not CostClass.CONV:
        return False
    w_shape = graph.shape_of(c.inputs[1])
    if w_shape[2] * w_shape[3] == 1:
        return False
    return not (c.op.startswith("conv2d") and "blocked" not in c.op and direct_conv(w_shape, c.shape, c.attrs))


def _layout_only(op: str) -> bool:  # pure index remaps
    return _role(op) is FusionRole.REMAP


@dataclass
class FusedGroup:
    anchor: int  # the node that shapes the kernel (contraction, reduction, or last elementwise op)
    nodes: list[int] = field(default_factory=list)  # in topological order
    prologue: list[int] = field(default_factory=list)  # inlined producers
    epilogue: list[int] = field(default_factory=list)  # ops fused after a contraction
    kind: str = ""

    @property
    def name(self) -> str:
        return f"k{self.anchor}"


@dataclass
class FusionPlan:
    graph: Graph
    groups: list[FusedGroup]
    aliases: list[int]
    constants: set[int]
    placed: list[int] = field(default_factory=list)  # concats and splits kept as views (no kernel)
    pieces: dict[Value, tuple[Value, int]] = field(default_factory=dict)  # piece -> (whole, element offset)

    def __post_init__(self) -> None:
        self._views = frozenset(self.aliases)

    def place(self, v: Value) -> tuple[Value, int]:
        """The value whose storage ``v`` lies in (through reshape views and placed pieces), and where in it
        ``v`` starts, in elements."""
        off = 0
        while True:
            if v in self.pieces:
                v, at = self.pieces[v]
                off += at
            elif v.node in self._views:
                v = self.graph.nodes[v.node].inputs[0]
            else:
                return v, off

    def resolve(self, v: Value) -> Value:
        """The value whose storage ``v`` lies in."""
        return self.place(v)[0]

    def __str__(self) -> str:
        g = self.graph
        lines = [
            f"fusion plan for {g.name}: {len(self.groups)} kernels, "
            f"{len(self.aliases)} views, {len(self.placed)} placed concats/splits, "
            f"{len(self.constants)} precomputed nodes"
        ]
        for k, grp in enumerate(self.groups):
            parts = []
            for n in grp.nodes:
                tag = "<" if n in grp.prologue else (">" if n in grp.epilogue else "")
                parts.append(f"{tag}{g.nodes[n].op}%{n}")
            lines.append(f"  kernel {k} [{grp.kind}]: " + " ".join(parts))
        if self.aliases:
            lines.append("  views: " + " ".join(f"{g.nodes[n].op}%{n}" for n in self.aliases))
        if self.placed:
            lines.append("  placed: " + " ".join(f"{g.nodes[n].op}%{n}" for n in self.placed))
        return "\n".join(lines)


def live_nodes(graph: Graph) -> set[int]:
    return graph.live()


def _kind(op: str) -> str:
    role = _role(op)
    if role is FusionRole.CONTRACTION:
        return "contraction"
    if _injective(op):
        return "elementwise"
    if role is FusionRole.ROW:
        return op
    if role is FusionRole.POOL:
        return "pool"
    return "layout"


class _Grouper:
    """Which live nodes are already in a group, and who uses each node: the state the two fusion moves
    (growing a contraction's epilogue, absorbing producers) share."""

    def __init__(self, graph: Graph, constants: set[int], grid: bool = False) -> None:
        self.graph, self.constants, self.grid = graph, constants, grid
        self.live = live_nodes(graph)
        self.users: dict[int, list[int]] = {n: [] for n in graph.nodes}
        for n in graph:
            if n.id in self.live:
                for v in n.inputs:
                    self.users[v.node].append(n.id)
        self.out_nodes = {v.node for v in graph.outputs}
        self.position = {nid: k for k, nid in enumerate(graph.nodes)}  # graph (topological) order
        self.grouped: dict[int, FusedGroup] = {}
        self.shared: set[int] = set()  # nodes inlined into every consumer (``find_shared``)

    def private(self, nid: int) -> bool:
        """Only one consumer node, not a graph output, a single output."""
        return len(self.users[nid]) == 1 and nid not in self.out_nodes and len(self.graph.nodes[nid].shapes) == 1

    def with_epilogue(self, n: Node) -> FusedGroup:
        """A contraction group for ``n``, extended forward through its private chain of epilogue ops, and through
        a pointwise DAG that reads the chain's value several times and ends in one op (``pointwise_dag``)."""
        if _role(n.op) is FusionRole.CALL_EPILOGUE:
            return self._call_epilogue(n)
        grp = FusedGroup(n.id, [n.id], kind="contraction")
        cur = n
        while True:
            if self.private(cur.id):
                e = self.graph.nodes[self.users[cur.id][0]]
                added = self._rounding(n, e)
                if not added:
                    if (
                        not self._extends(n, e)
                        or sum(1 for v in e.inputs if v.node == cur.id) != 1
                        or (e.op == "batchnorm" and e.inputs[0].node != cur.id)
                    ):
                        break
                    added = [e.id]
            else:
                added = self.pointwise_dag(n, cur)
                if not added:
                    break
            grp.nodes.extend(added)
            grp.epilogue.extend(added)
            cur = self.graph.nodes[added[-1]]
        for i in grp.nodes:
            self.grouped[i] = grp
        return grp

    def _call_epilogue(self, n: Node) -> FusedGroup:
        """The group of a ``CALL_EPILOGUE`` op ``n``: ``n`` and the private chain of elementwise ops of its shape
        after it, whatever their dtypes (its lowering applies them as it stores: ``PointwiseEpilogue``); on a
        grid backend ``n`` alone."""
        grp = FusedGroup(n.id, [n.id], kind="call")
        cur = n
        while not self.grid and self.private(cur.id):
            e = self.graph.nodes[self.users[cur.id][0]]
            if not self._extends(n, e, any_dtype=True) or sum(1 for v in e.inputs if v.node == cur.id) != 1:
                break
            grp.nodes.append(e.id)
            grp.epilogue.append(e.id)
            cur = e
        for i in grp.nodes:
            self.grouped[i] = grp
        return grp

    def narrow_stores(self, groups: list[FusedGroup]) -> None:
        """Narrow stores (module docstring): in each ``CALL_EPILOGUE`` group whose epilogue ends wider than its
        narrowest value, the ops after the last narrowest one leave it when their one consumer computes them
        from the narrow value it loads: another ``CALL_EPILOGUE`` group's epilogue op (they go just before it),
        or a direct convolution copying them as its input (``copies_input``; its ``absorb`` takes them as a
        prologue, ``narrow_chain``).  Then each ``CALL_EPILOGUE`` epilogue takes in the narrow chains computing
        its other operands (``_pull_narrow_operands``)."""
        graph, width = self.graph, self.width
        for grp in groups:
            chain = grp.epilogue
            if _role(graph.nodes[grp.anchor].op) is not FusionRole.CALL_EPILOGUE or not chain:
                continue
            sizes = [width(nid) for nid in chain]
            narrow = max(i for i, w in enumerate(sizes) if w == min(sizes))
            if narrow == len(chain) - 1 or not self.private(chain[-1]):
                continue
            tail = chain[narrow + 1 :]
            if any(
                v.node in grp.nodes and v.node not in tail[:k] and v.node != chain[narrow]
                for k, nid in enumerate(tail)
                for v in graph.nodes[nid].inputs
            ):
                continue  # the tail reads a member before the narrow value, which is not stored
            consumer = graph.nodes[self.users[chain[-1]][0]]
            host = self.grouped.get(consumer.id)
            into_epilogue = (
                host is not None
                and host is not grp
                and consumer.id in host.epilogue
                and _role(graph.nodes[host.anchor].op) is FusionRole.CALL_EPILOGUE
            )
            reads = [k for k, v in enumerate(consumer.inputs) if v.node == chain[-1]]
            into_copy = (
                host is not None and host.anchor == consumer.id and reads == [0] and self.copies_input(consumer, 0)
            )
            if not (into_epilogue or into_copy):
                continue
            del chain[narrow + 1 :]
            kept = grp.nodes
            grp.nodes = [nid for nid in grp.nodes if nid not in tail]
            for nid in tail:
                del self.grouped[nid]
            if into_copy and self.narrow_chain(tail[-1], graph.nodes[tail[-1]].shape) != tail:
                chain.extend(tail)  # the copy would not take the whole tail: it stays where it was
                grp.nodes = kept
                for nid in tail:
                    self.grouped[nid] = grp
                continue
            if into_epilogue:
                assert host is not None
                self._into_epilogue(host, tail, consumer.id)
            # else: the convolution's group takes the tail into its input copy (``absorb``: ``narrow_chain``)
        for host in groups:
            if _role(graph.nodes[host.anchor].op) is FusionRole.CALL_EPILOGUE:
                self._pull_narrow_operands(host)

    def _pull_narrow_operands(self, host: FusedGroup) -> None:
        """Into ``host``'s epilogue, before the member reading it: each operand computed by a narrow chain
        (``narrow_chain``: a dequantization of bytes), so the epilogue loads the bytes instead."""
        anchor = self.graph.nodes[host.anchor]
        for e in list(host.epilogue):
            for v in self.graph.nodes[e].inputs:
                chain = self.narrow_chain(v.node, anchor.shape, set(host.nodes))
                if chain:
                    self._into_epilogue(host, chain, e)

    def _into_epilogue(self, host: FusedGroup, nodes: list[int], before: int) -> None:
        """``nodes`` (in graph order) become members of ``host``'s epilogue just before its member ``before``."""
        at = host.epilogue.index(before)
        host.epilogue[at:at] = nodes
        host.nodes.extend(nodes)
        for nid in nodes:
            self.grouped[nid] = host

    def width(self, nid: int) -> int:
        """Bytes per element of node ``nid``'s value."""
        return TORCH_DTYPE[self.graph.dtype_of(Value(nid, 0))].itemsize

    def narrow_chain(self, root: int, shape: tuple[int, ...], inside: set[int] | None = None) -> list[int]:
        """The nodes computing ``root`` when they are an ungrouped chain of at most ``NARROW_OPERAND_MAX_NODES``
        private elementwise ops of ``shape`` whose stored inputs (constants aside; ``inside``: nodes the reader
        computes itself) are narrower than ``root``'s value, in graph order; else empty.  A reader computing
        them loads those inputs instead of ``root``'s value (a dequantization: the bytes, not float32)."""
        graph, inside = self.graph, inside or set()
        chain: list[int] = []
        frontier = [root]
        while frontier:
            p = graph.nodes[frontier.pop()]
            if p.id in inside or p.id in chain or p.id in self.constants or OPS[p.op].group is Group.SOURCE:
                continue
            if p.id in self.grouped:
                if self._stored(p.id):
                    continue  # read as stored
                return []
            if not (_epilogue(p.op) and self.private(p.id) and p.shape == shape and p.id not in self.shared):
                return []
            chain.append(p.id)
            if len(chain) > NARROW_OPERAND_MAX_NODES:
                return []
            frontier.extend(u.node for u in p.inputs)
        reads = {
            u.node
            for nid in chain
            for u in graph.nodes[nid].inputs
            if u.node not in chain and u.node not in inside and u.node not in self.constants
        }
        if not chain or sum(self.width(r) for r in reads) >= self.width(root):
            return []
        return sorted(chain, key=self.position.__getitem__)

    def copies_input(self, c: Node, slot: int) -> bool:
        """Whether contraction ``c`` reads its operand ``slot`` once per element into a copy of its own: a CPU
        direct convolution's padded slice of its input (``_taps_each_input``), where a chain inlined into the
        loads runs once per element."""
        return (
            not self.grid
            and slot == 0
            and c.op == "conv2d"
            and self.graph.dtype_of(c.inputs[0]) == FLOAT32
            and direct_conv(self.graph.shape_of(c.inputs[1]), c.shape, c.attrs)
        )

    def _stored(self, nid: int) -> bool:
        """Whether grouped node ``nid``'s value is written where a kernel can load it: its group's result (the
        last epilogue op, else the anchor), not a value inside the group's loops."""
        grp = self.grouped[nid]
        return nid == (grp.epilogue[-1] if grp.epilogue else grp.anchor) and nid not in grp.prologue

    def _extends(self, n: Node, e: Node, any_dtype: bool = False) -> bool:
        """Whether ``e`` may follow contraction ``n`` in its epilogue: an elementwise op of its shape and dtype
        (the contraction accumulates in place in the last epilogue op's buffer; a comparison or a cast to int64
        ends the chain: fuzz seeds 62021, 62225), not grouped or constant.  ``any_dtype``: of any dtype (a
        ``CALL_EPILOGUE`` op's lowering stores the chain's values itself, its own sums in a block of their own)."""
        return (
            _epilogue(e.op)
            and e.id not in self.grouped
            and e.id not in self.constants
            and e.shape == n.shape
            and len(e.shapes) == 1
            and (any_dtype or self.graph.dtype_of(Value(e.id, 0)) == self.graph.dtype_of(Value(n.id, 0)))
        )

    def _rounding(self, n: Node, e: Node) -> list[int]:
        """``[e, its user]`` when ``e`` rounds to a half type (float16, bfloat16) and its one user, a cast back,
        may follow contraction ``n``: a half model's rounding after every op (``compose.round_half``), taken
        into the epilogue as one float-to-float step (in registers, ``Cast(F16, x)``), so the contraction still
        accumulates in a buffer of its own dtype; else empty."""
        if (
            e.op != "cast"
            or e.attrs["dtype"] not in HALF
            or e.id in self.grouped
            or e.id in self.constants
            or e.shape != n.shape
            or not self.private(e.id)
        ):
            return []
        u = self.graph.nodes[self.users[e.id][0]]
        return [e.id, u.id] if u.op == "cast" and self._extends(n, u) else []

    def pointwise_dag(self, n: Node, cur: Node) -> list[int]:
        """The pointwise ops (in graph order) that take every use of ``cur`` (a contraction's value, read several
        times: GPT-2's tanh GELU reads it four times) and meet in one op, the last, which alone is read outside;
        every other op of them has one consumer among them.  Empty when the uses do not close that way.

        An operand a member reads from outside cannot depend on the members or on ``cur``: every use of ``cur``
        is a member and every member but the last is read only by members, so such a path would pass the last
        one and come back: a cycle.  So the kernel has every operand when it starts, and the last member is
        last in graph order."""
        if cur.id in self.out_nodes or len(cur.shapes) != 1:
            return []
        dag: set[int] = set()
        todo = list(dict.fromkeys(self.users[cur.id]))
        sinks: list[int] = []
        while todo:
            u = todo.pop()
            if u in dag:
                continue
            e = self.graph.nodes[u]
            if not (self._extends(n, e) or self._rounding(n, e)) or not pointwise(e.op):
                return []
            if len(dag) >= EPILOGUE_DAG_MAX_NODES:
                return []
            dag.add(u)
            users = list(dict.fromkeys(self.users[u]))
            nxt = self.graph.nodes[users[0]] if len(users) == 1 else None
            if nxt is not None and u not in self.out_nodes and (self._extends(n, nxt) or self._rounding(n, nxt)):
                todo.append(users[0])
            else:
                sinks.append(u)
        return sorted(dag, key=self.position.__getitem__) if len(sinks) == 1 else []

    def free(self, nid: int) -> bool:
        """Live, computed at run time, in no group yet, and private: a producer a consumer's group may take."""
        return nid in self.live and nid not in self.constants and nid not in self.grouped and self.private(nid)

    def find_shared(self) -> None:
        """The shared prologues (module docstring): ungrouped injective nodes whose every consumer is a
        contraction reading them as its packed operand, with the private injective producers the
        consumers would inline along with them.  Called once the epilogues are grouped (a node that is
        an epilogue is written by its contraction and stays so)."""
        graph = self.graph
        for n in graph:
            users = self.users[n.id]
            if (
                len(users) < 2
                or n.id not in self.live
                or n.id in self.constants
                or n.id in self.grouped
                or n.id in self.out_nodes
                or len(n.shapes) != 1
                or not _injective(n.op)
                or _alias(n.op)
            ):
                continue
            if not all(self._reads_as_packed(graph.nodes[u], n.id) for u in users):
                continue
            chain, stack, ok = [n.id], [n.id], True
            while stack and ok:
                for v in graph.nodes[stack.pop()].inputs:
                    op = graph.nodes[v.node].op
                    if not self.free(v.node) or not (_injective(op) or _alias(op)):
                        continue  # stored by its own kernel (or a constant): read as it is
                    if _alias(op):  # absorb fuses through a private view into the first consumer only
                        ok = False
                        break
                    chain.append(v.node)
                    stack.append(v.node)
            # what the chain reads from memory (not computed inside it, not a constant): one tensor, so each
            # consumer reads as much as it did from the stored result and the chain's own pass is saved (two,
            # an add's, made each consumer read twice as much: NASNet-A 0.4% slower at 1 thread)
            inside = set(chain)
            reads = {v for c in chain for v in graph.nodes[c].inputs if v.node not in inside}
            stored = [v for v in reads if v.node not in self.constants]
            if ok and len(chain) <= SHARED_PROLOGUE_MAX_NODES and len(stored) == 1:
                self.shared.update(chain)

    def _reads_as_packed(self, u: Node, nid: int) -> bool:
        """``u`` is a contraction that reads node ``nid`` only as its packed operand, once per element."""
        if not _contraction(u.op) or _taps_each_input(self.graph, u):
            return False
        packed = OPS[u.op].packed_operand
        return all(slot == packed for slot, v in enumerate(u.inputs) if v.node == nid)

    def _widens_half(self, n: Node) -> bool:
        """``n`` converts a float16 / bfloat16 value to float32 (exactly)."""
        return n.op == "cast" and n.attrs["dtype"] == "float32" and self.graph.dtype_of(n.inputs[0]) in HALF

    def absorb(self, grp: FusedGroup) -> None:
        """Inline private injective producers into the group (walking its inputs backwards), and the
        shared prologues it reads (each consumer computes its own copy)."""
        graph = self.graph
        if _role(graph.nodes[grp.anchor].op) in (FusionRole.CALL, FusionRole.CALL_EPILOGUE):
            return  # its routine reads the operands where they are stored
        stack = [grp.anchor, *grp.prologue]
        while stack:
            c = graph.nodes[stack.pop()]
            for slot, v in enumerate(c.inputs):
                p = graph.nodes[v.node]
                if p.id in self.shared:
                    if p.id not in grp.nodes:
                        grp.nodes.append(p.id)
                        grp.prologue.append(p.id)
                        self.grouped.setdefault(p.id, grp)
                        stack.append(p.id)
                    continue
                if _contraction(c.op) and self.copies_input(c, slot):
                    narrow = self.narrow_chain(p.id, p.shape)
                    if narrow:  # dequantized as the convolution copies its input: it reads the bytes
                        grp.nodes.extend(narrow)
                        grp.prologue.extend(narrow)
                        for nid in narrow:
                            self.grouped[nid] = grp
                        continue
                chain = [p]
                if _alias(p.op) and self.private(p.id) and p.id not in self.grouped:
                    # a view between two fusible ops: fuse through it (index remap) instead of materialising
                    chain = [p, graph.nodes[p.inputs[0].node]]
                q = chain[-1]
                if not all(self.free(x.id) for x in chain) or not _injective(q.op):
                    continue
                if (
                    _contraction(c.op)
                    and slot != OPS[c.op].packed_operand
                    and not _layout_only(q.op)
                    and not (self.grid and self._widens_half(q))
                ):
                    continue  # the A operand is read in place by the micro-kernel: only index remaps
                if _contraction(c.op) and _taps_each_input(graph, c) and not _layout_only(q.op):
                    continue  # a window reads each input element once per tap: the chain would run that often
                for x in chain:
                    grp.nodes.append(x.id)
                    grp.prologue.append(x.id)
                    self.grouped[x.id] = grp
                stack.append(q.id)


def _place_pieces(graph: Graph, compute: list[Node], aliases: list[int]) -> dict[int, dict[Value, tuple[Value, int]]]:
    """The concats and splits that run no kernel (see the module docstring): node -> {piece: (whole,
    element offset)}, in graph order."""
    views = {n: graph.nodes[n].inputs[0] for n in aliases}

    def root(v: Value) -> Value:
        while v.node in views:
            v = views[v.node]
        return v

    out_storage = {root(v) for v in graph.outputs}
    computed = {m.id for m in compute}
    taken: set[Value] = set()  # values already a piece of some whole
    placed: dict[int, dict[Value, tuple[Value, int]]] = {}
    for n in compute:
        offs = OPS[n.op].pieces([graph.shape_of(v) for v in n.inputs], n.attrs)
        if offs is None:
            continue
        if len(n.inputs) == 1 and len(offs) == len(n.shapes):  # a cut: the outputs are views of the input
            outs = [Value(n.id, i) for i in range(len(n.shapes))]
            if not any(v in out_storage for v in outs):
                placed[n.id] = {v: (n.inputs[0], o) for v, o in zip(outs, offs, strict=True)}
                taken.update(outs)
            continue
        ins = n.inputs  # a join: each input written by its kernel straight into the output
        if len(set(ins)) != len(ins) or any(
            v in taken or root(v) != v or v in out_storage or v.node not in computed for v in ins
        ):
            continue
        placed[n.id] = {v: (Value(n.id, 0), o) for v, o in zip(ins, offs, strict=True)}
        taken.update(ins)
    return placed


def plan_fusion(graph: Graph, constants: set[int], fuse: bool = True, grid: bool = False) -> FusionPlan:
    """The kernels of ``graph`` (module docstring); ``grid``: for a backend that runs them as grids of threads."""
    g = _Grouper(graph, constants, grid)
    compute = [n for n in graph if n.id in g.live and n.id not in constants and OPS[n.op].group is not Group.SOURCE]
    aliases = [n.id for n in compute if _alias(n.op)]
    placed = _place_pieces(graph, compute, aliases) if fuse else {}
    for nid in placed:
        g.grouped[nid] = FusedGroup(nid, [])  # no kernel; nothing fuses into it
    groups: list[FusedGroup] = []
    if fuse:  # epilogues first: they extend contraction groups forward
        groups = [
            g.with_epilogue(n)
            for n in compute
            if (_contraction(n.op) or _role(n.op) is FusionRole.CALL_EPILOGUE) and n.id not in g.grouped
        ]
        g.narrow_stores(groups)
        g.find_shared()
        for grp in groups:
            g.absorb(grp)
    for n in reversed(compute):
        if n.id in g.grouped or _alias(n.op):
            continue
        grp = FusedGroup(n.id, [n.id], kind=_kind(n.op))
        g.grouped[n.id] = grp
        groups.append(grp)
        if fuse:
            g.absorb(grp)
    for nid in g.shared:  # by construction every consumer inlined its copy; nothing else would write it
        if any(u in g.live and nid not in g.grouped[u].nodes for u in g.users[nid]):
            raise LoweringError(f"fusion: shared prologue {graph.nodes[nid].op}%{nid} not inlined by every consumer")
    order = {n.id: k for k, n in enumerate(graph)}
    for grp in groups:
        grp.nodes.sort(key=order.__getitem__)
        if grp.kind == "elementwise" and len(grp.nodes) > 1:
            grp.kind = "fused elementwise"
        elif grp.epilogue:
            grp.kind = "contraction+epilogue"
        elif grp.prologue and grp.kind != "elementwise":
            grp.kind += "+prologue"
    aliases = [a for a in aliases if a not in g.grouped]  # views fused through are not views any more
    sources = {n: [graph.nodes[n].inputs[0].node] for n in aliases}
    for nid in placed:
        sources[nid] = [v.node for v in graph.nodes[nid].inputs]
    groups = _topological(graph, groups, order, sources)
    pieces = {v: w for p in placed.values() for v, w in p.items()}
    return FusionPlan(graph, groups, aliases, set(constants), list(placed), pieces)


def _topological(
    graph: Graph, groups: list[FusedGroup], order: dict[int, int], sources: dict[int, list[int]]
) -> list[FusedGroup]:
    """Kernels in dependency order (an epilogue may read a value whose group has a later anchor);
    ties keep graph order.  ``sources``: for a node without a kernel (a view, a placed concat or split),
    the nodes whose kernels write its storage."""
    # a prologue node is computed inside each group that reads it (private, or a shared prologue): no
    # other group waits for it
    owner = {n: k for k, grp in enumerate(groups) for n in grp.nodes if n not in grp.prologue}

    def producers(nid: int) -> set[int]:
        if nid in sources:
            return set().union(*(producers(s) for s in sources[nid]))
        return {owner[nid]} if nid in owner else set()

    deps: list[set[int]] = []
    for k, grp in enumerate(groups):
        d = set()
        for n in grp.nodes:
            for v in graph.nodes[n].inputs:
                d |= producers(v.node)
        d.discard(k)
        deps.append(d)
    users: dict[int, list[int]] = {k: [] for k in range(len(groups))}
    for k, d in enumerate(deps):
        for p in d:
            users[p].append(k)
    indeg = [len(d) for d in deps]
    ready = [(order[groups[k].anchor], k) for k in range(len(groups)) if indeg[k] == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        _, k = heapq.heappop(ready)
        out.append(groups[k])
        for u in users[k]:
            indeg[u] -= 1
            if indeg[u] == 0:
                heapq.heappush(ready, (order[groups[u].anchor], u))
    if len(out) != len(groups):  # pragma: no cover - fusion never merges across a cycle
        raise LoweringError("fusion produced a cyclic kernel dependency")
    return out


# ============================================================== kernel building
@dataclass(frozen=True)
class Scratch:
    """A kernel parameter that is private working memory (e.g. a packed operand)."""

    name: str
    size: int


@dataclass
class BuiltKernel:
    kernel: Kernel
    # one per kernel parameter: a graph value, a derived-constant name, or (added by the runtime) scratch memory
    params: list[Value | str | Scratch]
    new_consts: dict[str, torch.Tensor]
    gemm: GemmInfo | None = None  # loop roles, for contraction groups
    group: FusedGroup | None = None
    const_names: set[str] = field(default_factory=set)  # kernel buffers whose contents are known constants
    schedule: Schedule | None = None  # the schedule applied


# A kernel's buffers are named by order of first use, weights ``w`` and the rest ``t`` (``w0``, ``t1``), its stages
# by op and place (``stage_tag``), not by graph ids or weight names: two layers alike lower to one kernel text (the
# first layer too, which reads a graph input where the others read a kernel's output), scheduled once
# (``lower.schedule.cache``) and compiled once (``lower.llvm.jit``).  full:bert's 28 kernels are 11 distinct ones.
BUFFER_KINDS = {"weight": "w"}  # anything else: "t"


def build_kernel(
    graph: Graph,
    grp: FusedGroup,
    const_values: dict[Value, torch.Tensor],
    resolve: Callable[[Value], Value] | None = None,
    name: str | None = None,
    grid: bool = False,
    threads: int = 1,
    features: tuple[str, ...] = (),
) -> BuiltKernel:
    """Lower a group's nodes and fuse them into one kernel (inlining prologues, placing epilogues).
    ``grid``: the backend runs kernels as grids of many threads (``Backend.grid``): lowerings pick their
    data-parallel forms over the CPU's serial cache-blocked ones; ``threads``: the host threads it runs on;
    ``features``: the target CPU's (LLVM's names), for lowerings with a form per instruction set."""
    resolve = resolve or (lambda v: v)
    in_group = set(grp.nodes)
    local = {nid: k for k, nid in enumerate(grp.nodes)}
    namer = Namer()
    bufs: dict[Value, Buffer] = {}

    def buf(v: Value) -> Buffer:
        if v not in bufs:
            kind = BUFFER_KINDS.get(graph.nodes[v.node].op, "t")
            bufs[v] = Buffer(namer.name(f"{kind}{len(bufs)}"), graph.shape_of(v), LOOP_DTYPE[graph.dtype_of(v)])
        return bufs[v]

    consts: dict[str, torch.Tensor] = {}
    for node_id in grp.nodes:
        for v in graph.nodes[node_id].inputs:
            if v.node not in in_group:
                rv = resolve(v)
                if rv in const_values:
                    consts[buf(v).name] = const_values[rv]
    new_consts: dict[str, torch.Tensor] = {}
    stages: list[Stmt] = []
    gemm = None
    anchor = graph.nodes[grp.anchor]
    epi = set(grp.epilogue)
    applied = None  # the epilogue a CALL_EPILOGUE anchor's lowering applies itself
    if grp.epilogue and _role(anchor.op) is FusionRole.CALL_EPILOGUE:
        acc = Buffer(namer.name("acc"), anchor.shape, LOOP_DTYPE[graph.dtype_of(Value(anchor.id, 0))])
        vs, value = _chain_value(
            graph,
            grp.epilogue,
            Value(anchor.id, 0),
            bufs,
            buf,
            namer,
            consts,
            new_consts,
            local,
            lambda vs: Load(acc, vs),
        )
        applied = PointwiseEpilogue(buf(Value(grp.epilogue[-1], 0)), tuple(vs), value, acc)
    for node_id in grp.nodes:
        node = graph.nodes[node_id]
        if node_id in epi:
            continue
        ctx = LowerCtx(
            node, namer, consts, new_consts, grid=grid, threads=threads, features=features, local=local[node_id]
        )
        outs = [buf(Value(node_id, i)) for i in range(len(node.shapes))]
        if node_id == anchor.id and applied is not None:
            ctx.epilogue = applied
        elif node_id == anchor.id and grp.epilogue:
            outs = [buf(Value(grp.epilogue[-1], 0))]  # accumulate straight into the final buffer
        stages.append(lower_node(node, [buf(v) for v in node.inputs], outs, ctx))
        if ctx.gemm is not None and node_id == anchor.id:
            gemm = ctx.gemm
    body = seq(*stages)
    chain, prev = ([] if applied is not None else list(grp.epilogue)), Value(anchor.id, 0)
    if chain and gemm is not None and not gemm.post and graph.nodes[chain[0]].op == "add":
        # C = other + sum(A*B): start the accumulation from the added operand (bias, residual) instead of
        # zero, which saves a pass over the output when the add is the only epilogue op
        other = [v for v in graph.nodes[chain[0]].inputs if v.node != anchor.id]
        reads = sum(1 for x in chain for v in graph.nodes[x].inputs if v.node == anchor.id)
        if len(other) == 1 and other[0].node not in in_group and reads == 1:  # the sum's only reader
            body = _fold_into_init(body, gemm, buf(other[0]))
            prev = Value(chain.pop(0), 0)
    if chain:
        body = seq(body, _epilogue_stage(graph, grp, chain, prev, bufs, buf, namer, consts, new_consts, gemm, local))
    for p in reversed([n for n in grp.nodes if n in grp.prologue]):
        body = inline_stage(body, stage_tag(graph.nodes[p].op, local[p]))
    # parameters: everything read or written that is not local or inlined away
    used = buffers_used(body)
    params: list[Value | str | Scratch] = []
    pbufs: list[Buffer] = []
    by_name = {b.name: v for v, b in bufs.items()}
    for nm, b in used.items():
        if b.scope == "local":
            continue
        if nm in by_name:
            params.append(by_name[nm])
        elif nm in new_consts:
            params.append(nm)
        else:
            raise LoweringError(f"kernel for {anchor.describe()}: unknown buffer {nm}")
        pbufs.append(b)
    kernel = Kernel(name or grp.name, pbufs, simplify_stmt(body), {"group": grp})
    return BuiltKernel(kernel, params, new_consts, gemm, grp, set(consts) | set(new_consts))


def _fold_into_init(body: Stmt, gemm, other: Buffer) -> Stmt:
    """Add ``other`` (broadcast to the output) to the value the init stage stores."""

    def fs(st: Stmt) -> Stmt | None:
        if isinstance(st, Stage) and st.name == gemm.init_stage:

            def add(x: Stmt) -> Stmt | None:
                if isinstance(x, Store):
                    idx = tuple(
                        IntImm(0) if o == 1 and n != 1 else e
                        for o, n, e in zip(other.shape, x.buf.shape, x.idx, strict=False)
                    )
                    return Store(x.buf, x.idx, x.value + Load(other, idx))
                return None

            return Stage(st.name, map_stmt(st.body, add))
        return None

    return map_stmt(body, fs)


def _epilogue_stage(graph, grp, chain, prev, bufs, buf, namer, consts, new_consts, gemm, local) -> Stmt:
    """The epilogue ops (after ``prev``, in graph order: a chain, or a pointwise DAG over one value) as one stage
    in the contraction's (batch, i, j) coordinates, in place."""
    final = buf(Value(grp.epilogue[-1], 0))
    vs, cur = _chain_value(graph, chain, prev, bufs, buf, namer, consts, new_consts, local, lambda vs: Load(final, vs))
    # move to the contraction's coordinates: out[vs] with vs = c_idx(batch, i, j)
    return _in_gemm_coords(gemm, final, vs, cur, namer)


def _chain_value(graph, chain, prev, bufs, buf, namer, consts, new_consts, local, start) -> tuple[list[Var], Expr]:
    """The value of the epilogue ops ``chain`` (after ``prev``, in graph order: a chain, or a pointwise DAG over
    one value) at the output index ``vs`` (new variables), ``prev``'s own value there being ``start(vs)``."""
    shape = graph.shape_of(prev)
    vs = [namer.var(f"e{d}") for d in range(len(shape))]
    pb = bufs[prev] if prev in bufs else buf(prev)
    value: dict[str, Expr] = {pb.name: start(tuple(vs))}  # a member's buffer -> its value at vs
    cur: Expr = value[pb.name]
    for nid in chain:
        node = graph.nodes[nid]
        ctx = LowerCtx(node, namer, consts, new_consts, local=local[nid])
        dt = LOOP_DTYPE[graph.dtype_of(Value(nid, 0))]
        tmp_out = buf(Value(nid, 0)) if nid != chain[-1] else Buffer(namer.name("epi"), shape, dt)
        st = lower_node(node, [buf(v) for v in node.inputs], [tmp_out], ctx)
        store = _stores(st)[0]
        # rename the node's loop vars to ours, then replace the loads of earlier members by their values
        mapping = {ix.name: v for ix, v in zip(store.idx, vs, strict=False) if isinstance(ix, Var)}
        cur = _loads_replaced(substitute(store.value, mapping), value)
        value[buf(Value(nid, 0)).name] = cur
    return vs, cur


def _loads_replaced(e: Expr, by: dict[str, Expr]) -> Expr:
    """``e`` with every load of a buffer named in ``by`` replaced by its value there."""
    return map_expr(e, lambda x: by.get(x.buf.name) if isinstance(x, Load) else None)


def _stores(s: Stmt) -> list[Store]:
    return stores_of(s)


def _in_gemm_coords(gemm, final: Buffer, vs: list[Var], value: Expr, namer: Namer) -> Stmt:
    """Re-index ``final[vs] = value`` over the GEMM's (batch, i, j) loops using its init stage's map."""
    idx = gemm.c_index  # tuple of Exprs over gemm.init_vars
    new_vars = [namer.var(v.name + "e") for v in gemm.init_vars]
    m: dict[str, Expr] = {ov.name: nv for ov, nv in zip(gemm.init_vars, new_vars, strict=False)}
    cidx = tuple(substitute(e, m) for e in idx)
    sub = {v.name: e for v, e in zip(vs, cidx, strict=False)}
    val = substitute(value, sub)
    gemm.post.append(f"{gemm.stage}.epilogue")
    return Stage(
        f"{gemm.stage}.epilogue", loops(list(zip(new_vars, gemm.init_extents, strict=False)), Store(final, cidx, val))
    )
