"""The lowering's memoized fast paths against the plain definitions they replace: same results, and the same
node identities where code generation looks at identity (a float node is reused only where it was before)."""

from __future__ import annotations

import copy
import importlib
import itertools
import pickle
import random
import threading

import pytest

from lower.ir import (
    Bin,
    Buffer,
    Cast,
    FloatImm,
    For,
    IntImm,
    Load,
    Select,
    Seq,
    Stage,
    Store,
    Var,
    emin,
    find_loop,
    loads_of,
    loop_names,
    lt,
    map_expr,
    map_stmt,
    simplify,
    substitute,
    walk_expr,
    walk_stmt,
)
from lower.schedule.checks import _overlap, conflict, conflict_free

S = importlib.import_module("lower.ir.simplify")  # the module (``lower.ir.simplify`` is also the function)
VARS = [Var(n) for n in ("i", "j", "k")]
X = Buffer("x", (8, 16))


def _index(r: random.Random, depth: int):
    if depth == 0 or r.random() < 0.3:
        return r.choice(VARS) if r.random() < 0.6 else IntImm(r.randrange(-3, 20))
    op = r.choice(["+", "+", "-", "*", "//", "%", "min", "max"])
    a = _index(r, depth - 1)
    b = IntImm(r.choice([1, 2, 4, 16])) if op in ("//", "%", "*") else _index(r, depth - 1)
    return Bin(op, a, b)


def _value(r: random.Random, depth: int):
    if depth == 0 or r.random() < 0.25:
        return Load(X, (_index(r, 2), _index(r, 2))) if r.random() < 0.7 else FloatImm(r.choice([0.0, 1.0, 2.5]))
    kind = r.random()
    if kind < 0.6:
        return Bin(r.choice(["+", "*", "-", "max"]), _value(r, depth - 1), _value(r, depth - 1))
    if kind < 0.8:
        return Select(lt(_index(r, 2), IntImm(r.randrange(0, 12))), _value(r, depth - 1), _value(r, depth - 1))
    return Cast("f32", Cast("i64", _value(r, depth - 1)))


def _reference_simplify(e, ranges):
    """The simplifier as it was: one rewrite per node, bottom up, on a fresh copy with empty memo tables (so
    no canonical node can be handed back for an input node)."""
    for table in (S._SIMPLIFIED, S._BOUNDS, S._OFFSETS, S._CANONICAL):
        table.clear()
    e = copy.deepcopy(e)

    def f(x):
        if isinstance(x, Bin):
            return S._simplify_bin(x, ranges)
        if isinstance(x, Select) and isinstance(x.cond, Bin) and x.cond.dtype == "bool":
            known = S._bool_value(x.cond, ranges)
            if known is not None:
                return x.a if known else x.b
        return None

    return e, map_expr(e, f)


def _kept(inp, out, path=()):
    """The paths at which ``out`` holds the very node ``inp`` holds (what the rewrite kept), among nodes that
    are not pure index expressions: those may be shared from the memo tables (nothing looks at their
    identity), every other node must be kept exactly where the plain rewrite kept it."""
    if out is inp:
        return {path} if S._index_vars(inp) is None else set()
    if type(out) is not type(inp):
        return set()
    kids_in, kids_out = list(_children(inp)), list(_children(out))
    if len(kids_in) != len(kids_out):
        return set()
    return set().union(*(_kept(a, b, (*path, n)) for n, (a, b) in enumerate(zip(kids_in, kids_out, strict=True))))


def _children(e):
    return {Bin: lambda: (e.a, e.b), Load: lambda: e.idx, Select: lambda: (e.cond, e.a, e.b), Cast: lambda: (e.a,)}.get(
        type(e), lambda: ()
    )()


def test_simplify_matches_the_bottom_up_rewrite_in_result_and_kept_nodes():
    r = random.Random(7)
    ranges_choices = [{}, {"i": (0, 3)}, {"i": (0, 7), "j": (0, 15), "k": (2, 2)}, {"j": (0, 0), "k": (0, 31)}]
    exprs = [(_value(r, 4) if r.random() < 0.5 else _index(r, 4)) for _ in range(500)]
    for e in exprs:
        ranges = r.choice(ranges_choices)
        ref_in, ref_out = _reference_simplify(e, ranges)
        # warm the tables with equal but distinct copies, then with the node itself, then ask again
        simplify(copy.deepcopy(e), ranges)
        first = simplify(e, ranges)
        assert first == ref_out == simplify(e, ranges)
        assert _kept(e, first) == _kept(ref_in, ref_out) == _kept(e, simplify(e, ranges))
        again_in, again_out = _reference_simplify(first, ranges)  # a simplified tree, simplified again
        simplify(copy.deepcopy(e), ranges)
        first = simplify(e, ranges)  # its index nodes now the tables' own (canonical) ones
        assert simplify(first, ranges) == again_out
        assert _kept(first, simplify(first, ranges)) == _kept(again_in, again_out)
        again_ref_in, again_ref_out = _reference_simplify(first, ranges)
        assert _kept(first, simplify(first, ranges)) == _kept(again_ref_in, again_ref_out)


def _reference_flat_offset(buf, idx):
    """``flat_offset`` as first written: the terms summed, then simplified."""
    terms = [(IntImm(1), buf.offset)]
    for i, st in zip(idx, buf.elem_strides, strict=True):
        terms += S._scaled_terms(simplify(i), st)
    changed = True
    while changed:
        changed = False
        for a_i, (ea, sa) in enumerate(terms):
            if isinstance(ea, Bin) and ea.op == "//" and isinstance(ea.b, IntImm):
                for b_i, (eb, sb) in enumerate(terms):
                    if isinstance(eb, Bin) and eb.op == "%" and isinstance(eb.b, IntImm) and sa == sb * eb.b.value:
                        if (q := S._split_quotient(ea.a, ea.b.value, eb)) is None:
                            continue
                        terms = [t for k, t in enumerate(terms) if k not in (a_i, b_i)] + S._scaled_terms(q, sb)
                        changed = True
                        break
            if changed:
                break
    out = IntImm(0)
    for e, s in terms:
        out = Bin("+", out, e if s == 1 else Bin("*", e, IntImm(s)))
    return simplify(out)


@pytest.mark.parametrize("offset", [0, 1, 5])
def test_flat_offset_and_bounds_agree_with_their_plain_computation(offset):
    r = random.Random(3 + offset)
    buf = Buffer("b", (4, 6, 8), offset=offset)
    conv = Buffer("c", (3, 5, 7))
    i, j = Var("i"), Var("j")
    taps = [(IntImm(1), j // 7 + i - 1, j % 7 + 2), (i, j // 7, j % 7), (IntImm(0), IntImm(0), IntImm(0))]
    for idx in [tuple(_index(r, 3) for _ in range(3)) for _ in range(300)] + taps:
        b = conv if idx in taps else buf
        ranges = {"i": (0, r.randrange(1, 9)), "j": (0, 5), "k": (r.randrange(0, 3), 7)}
        warm = (S.flat_offset(b, idx), [S.bounds(x, ranges) for x in idx])
        for table in (S._SIMPLIFIED, S._BOUNDS, S._OFFSETS, S._CANONICAL):
            table.clear()
        cold = (_reference_flat_offset(b, copy.deepcopy(idx)), [S.bounds(x, ranges) for x in copy.deepcopy(idx)])
        assert warm == cold


def _reference_overlap(a, b):
    """``checks._overlap`` as first written: grouped dimensions, each group's flat interval."""

    def flat(group):
        lo = hi = 0
        for first, last, size in group:
            lo, hi = lo * size + first, hi * size + last
        return lo, hi

    i = j = 0
    while i < len(a) and j < len(b):
        ga, gb = [a[i]], [b[j]]
        na, nb = a[i][2], b[j][2]
        i, j = i + 1, j + 1
        while na != nb:
            if na < nb and i < len(a):
                ga.append(a[i])
                na, i = na * a[i][2], i + 1
            elif nb < na and j < len(b):
                gb.append(b[j])
                nb, j = nb * b[j][2], j + 1
            else:
                return True
        (la, ha), (lb, hb) = flat(ga), flat(gb)
        if ha < lb or hb < la:
            return False
    return True


SHAPES = [(1, 4, 6), (1, 4, 2, 3), (4, 6), (24,), (2, 2, 6), (1, 4, 3, 2), (2, 12)]


def _box(r: random.Random, sizes, wide: bool = False):
    out = []
    for n in sizes:
        first = r.randrange(-1 if wide else 0, n)
        out.append((first, r.randrange(first, n + (1 if wide else 0)), n))
    return tuple(out)


def test_overlap_and_conflict_free_agree_with_the_pairwise_definitions():
    r = random.Random(11)
    for _ in range(20000):
        a, b = _box(r, r.choice(SHAPES), r.random() < 0.1), _box(r, r.choice(SHAPES), r.random() < 0.1)
        assert _overlap(a, b) == _reference_overlap(a, b) == _overlap(b, a)
    for _ in range(3000):
        wide = r.random() < 0.1
        acc = []
        for _p in range(r.randrange(1, 6)):
            reads, writes = {}, {}
            for name in "xy":
                if r.random() < 0.6:
                    writes[name] = [_box(r, r.choice(SHAPES), wide) for _ in range(r.randrange(1, 3))]
                if r.random() < 0.6:
                    reads[name] = [_box(r, r.choice(SHAPES), wide) for _ in range(r.randrange(1, 3))]
            acc.append((reads, writes))
        pairwise = not any(conflict(*acc[a], *acc[b]) for a, b in itertools.combinations(range(len(acc)), 2))
        if conflict_free(acc):
            assert pairwise  # never claims freedom a pair contradicts
        elif not wide:
            assert not pairwise  # in bounds, it is exact


def _tree():
    """Two loops over one shared stage object."""
    i, j = Var("i"), Var("j")
    body = Store(Buffer("o", (4, 8)), (i, j), Load(X, (i, j + 1)) * 2.0)
    shared = Stage("s", For(j, IntImm(8), body))
    return Seq((For(i, IntImm(4), shared), For(i, IntImm(4), shared)))


def test_map_stmt_keeps_what_it_does_not_change_but_shares_nothing_within_the_result():
    tree = _tree()
    out = map_stmt(tree)
    assert out == tree
    stmts = list(walk_stmt(out))
    assert len({id(s) for s in stmts}) == len(stmts)  # the input's shared stage appears twice, as two objects
    assert out.stmts[0] is tree.stmts[0]  # the first copy kept as it was
    j7 = emin(Var("j"), IntImm(7))
    sub = substitute(tree, {"j": j7})
    assert sub != tree and loads_of(sub)[0].idx[1] == j7 + 1
    assert len({id(s) for s in walk_stmt(sub)}) == len(list(walk_stmt(sub)))


def test_loop_lookups_follow_program_order():
    tree = _tree()
    assert loop_names(tree) == [x.var.name for x in walk_stmt(tree) if isinstance(x, For)] == ["i", "j", "i", "j"]
    assert find_loop(tree, "j") is tree.stmts[0].body.body
    assert find_loop(tree, "k") is None


def test_node_memos_are_invisible():
    i = Var("i")
    e = Load(X, (i * 4 + 1, i)) + FloatImm(1.0)
    h = hash(e)
    assert h == hash((e.op, e.a, e.b))  # the dataclass's structural hash, computed once
    loads_of(e), list(walk_expr(e))
    back = pickle.loads(pickle.dumps(e))
    assert back == e and back.dtype == "f32" and not [k for k in vars(back) if k.startswith("_")]
    assert copy.deepcopy(e) == e and repr(e) == repr(back)
    with pytest.raises(Exception, match="operand types differ"):
        Bin("+", i, FloatImm(1.0))


def test_a_node_pickles_while_another_thread_memoizes_on_it():
    # schedules are pickled to the cache on one compile thread while another memoizes on nodes they share
    e = Load(X, (Var("i") * 4 + 1, Var("i"))) + FloatImm(1.0)
    stop = threading.Event()

    def memoize() -> None:
        n = 0
        while not stop.is_set():
            e.__dict__[f"_memo{n % 64}"] = n
            if n % 64 == 63:
                for k in [k for k in list(e.__dict__) if k.startswith("_memo")]:
                    e.__dict__.pop(k, None)
            n += 1

    t = threading.Thread(target=memoize)
    t.start()
    try:
        for _ in range(3000):
            assert pickle.loads(pickle.dumps(e)) == e
    finally:
        stop.set()
        t.join()
